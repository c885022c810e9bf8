package dev.nixl4j.internal.ffm;

import java.nio.file.Path;
import java.util.Map;

import dev.nixl4j.NixlException;

/**
 * Loads NIXL in a fresh JVM (a library loads once per JVM), trying a given directory
 * first when there is one, and prints {@code LOADED <path>}, {@code SOURCE <source>} and
 * {@code VERSION <version>}, or {@code FAILED <status>} followed by the error's message.
 * It loads twice, as an application with two agents does, so that what is said once per
 * process shows.
 */
public final class LibraryLoadChild {

	private LibraryLoadChild() {
	}

	/**
	 * Runs the load.
	 * @param args the directory to try first, if any
	 */
	public static void main(String[] args) {
		Path directory = (args.length > 0) ? Path.of(args[0]) : null;
		try {
			NativeLibrary library = NativeLibrary.load(directory, Map.of());
			NativeLibrary again = NativeLibrary.load(directory, Map.of());
			System.out.println("LOADED " + library.path());
			System.out.println("SOURCE " + library.source());
			System.out.println("VERSION " + library.version());
			System.out.println("SAME " + (library == again));
		}
		catch (NixlException ex) {
			System.out.println("FAILED " + ex.status());
			System.out.println(ex.getMessage());
		}
	}

}
