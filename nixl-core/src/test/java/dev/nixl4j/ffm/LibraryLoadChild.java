package dev.nixl4j.ffm;

import java.nio.file.Path;
import java.util.Map;

import dev.nixl4j.NixlException;

/**
 * Loads NIXL from one directory in a fresh JVM (a library loads once per JVM) and prints
 * {@code LOADED <path>} or {@code FAILED <status>} followed by the error's message.
 */
public final class LibraryLoadChild {

	private LibraryLoadChild() {
	}

	/**
	 * Runs the load.
	 * @param args the directory to try first
	 */
	public static void main(String[] args) {
		try {
			System.out.println("LOADED " + NativeLibrary.load(Path.of(args[0]), Map.of()).path());
		}
		catch (NixlException ex) {
			System.out.println("FAILED " + ex.status());
			System.out.println(ex.getMessage());
		}
	}

}
