package dev.nixl4j.cli;

import java.io.PrintStream;
import java.util.List;

import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaReport;

/**
 * The lines that {@code info} and {@code doctor} print about CUDA: the devices, the
 * driver's and the runtime's versions and where {@code libcudart} came from, or why there
 * is none (every place looked in), or the places refused on the way to the one that
 * loaded, then whether UCX's CUDA transports load.
 */
final class CudaLines {

	private CudaLines() {
	}

	static void print(PrintStream out) {
		CudaReport report = Cuda.report();
		out.println("CUDA: " + report.summary());
		if (report.library() == null && !report.attempts().isEmpty()) {
			out.println("  libcudart looked for in:");
			for (String attempt : report.attempts()) {
				out.println("  - " + attempt);
			}
		}
		else {
			List<String> refused = report.attempts()
				.stream()
				.filter((attempt) -> attempt.contains(": refused: "))
				.toList();
			if (!refused.isEmpty()) {
				out.println("  libcudart refused before it was found (another user could change these places):");
				for (String attempt : refused) {
					out.println("  - " + attempt);
				}
			}
		}
		out.println("UCX CUDA transports: " + Cuda.ucxCudaSupport().summary());
	}

}
