package dev.nixl4j.internal.ffm;

import java.util.Arrays;
import java.util.List;

import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaException;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.internal.cuda.CudaLibrary;

/**
 * Looks for the CUDA runtime in a fresh JVM (it loads once per JVM) and prints what
 * happened, one fact a line: with {@code report}, through {@link Cuda#report()}, as the
 * health indicator and the doctor do; with {@code loader NAME...}, through the dynamic
 * loader's places alone.
 */
public final class CudaSearchChild {

	private CudaSearchChild() {
	}

	/**
	 * Runs the search.
	 * @param args {@code report}, or {@code loader} and the names to look for
	 */
	public static void main(String[] args) {
		if (args[0].equals("report")) {
			CudaReport report = Cuda.report();
			System.out.println("REPORT " + report.summary());
			System.out.println("LIBRARY " + report.library());
			System.out.println("SOURCE " + report.source());
			report.attempts().forEach((attempt) -> System.out.println("ATTEMPT " + attempt));
			return;
		}
		List<String> names = Arrays.asList(args).subList(1, args.length);
		try {
			CudaLibrary library = CudaLibrary.load(new CudaLibrary.Search(null, List.of(), List.of(), names));
			System.out.println("LIBRARY " + library.file());
			System.out.println("SOURCE " + library.source());
			library.attempts().forEach((attempt) -> System.out.println("ATTEMPT " + attempt));
		}
		catch (CudaException ex) {
			System.out.println("FAILED " + ex.status());
			System.out.println(ex.getMessage());
		}
	}

}
