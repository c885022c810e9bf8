package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Finds a library by name where the dynamic loader would, without loading it, so that
 * nixl4j can check each file ({@link TrustedFiles}) and load the one it checked by its
 * path: {@code dlopen} of a bare name would run the constructors of whatever file the
 * loader finds first. The places, in the loader's order:
 * <ol>
 * <li>the directories of {@code LD_LIBRARY_PATH} (an empty entry is the working
 * directory);
 * <li>the loader's cache, {@value #CACHE} (what {@code ldconfig -p} lists), entries for
 * this architecture;
 * <li>the system directories: {@code /lib/<triplet>}, {@code /usr/lib/<triplet>},
 * {@code /lib64}, {@code /usr/lib64}, {@code /lib}, {@code /usr/lib}.
 * </ol>
 * The JVM's own run path is not searched: a library nixl4j asks for by name is not part
 * of the JDK.
 */
public final class LoaderPath {

	/** The loader's cache of library names. */
	static final String CACHE = "/etc/ld.so.cache";

	private static final int MAX_CACHE_BYTES = 64 * 1024 * 1024;

	private static final String OLD_MAGIC = "ld.so-1.7.0";

	private static final String NEW_MAGIC = "glibc-ld.so.cache1.1";

	private static final int NEW_HEADER_BYTES = 48;

	private static final int NEW_ENTRY_BYTES = 24;

	private static final int OLD_ENTRY_BYTES = 12;

	/** {@code FLAG_ELF}: accepted on every architecture. */
	private static final int FLAG_ELF = 0x0001;

	/** {@code FLAG_ELF_LIBC6} with the architecture's {@code FLAG_*_LIB64}. */
	private static final int FLAG_X8664 = 0x0303;

	private static final int FLAG_AARCH64 = 0x0a03;

	private final List<String> libraryPath;

	private final Path cache;

	private final String arch;

	LoaderPath(List<String> libraryPath, Path cache, String arch) {
		this.libraryPath = List.copyOf(libraryPath);
		this.cache = cache;
		this.arch = arch;
	}

	/**
	 * The loader's places for this process: its {@code LD_LIBRARY_PATH}, the cache and
	 * the system directories.
	 * @return the places
	 */
	public static LoaderPath ofThisProcess() {
		String value = System.getenv("LD_LIBRARY_PATH");
		List<String> entries = new ArrayList<>();
		if (value != null && !value.isEmpty()) {
			// glibc splits on ':' and ';'
			for (String entry : value.split("[:;]", -1)) {
				entries.add(entry);
			}
		}
		return new LoaderPath(entries, Path.of(CACHE), System.getProperty("os.arch", ""));
	}

	/**
	 * A file the loader would consider for a name.
	 *
	 * @param origin where it was found: {@code LD_LIBRARY_PATH}, {@code ld.so.cache} or
	 * {@code system directory}
	 * @param file the file
	 */
	public record Found(String origin, Path file) {
	}

	/**
	 * Lists the files the loader would try for a name, in its order, each existing file
	 * once (a file also reached through another directory, such as {@code /lib} linked to
	 * {@code /usr/lib}, is listed where it is found first).
	 * @param name the library's name, without a slash (for example
	 * {@code libcudart.so.12})
	 * @return the files that exist
	 */
	public List<Found> find(String name) {
		List<Found> found = new ArrayList<>();
		Set<Path> seen = new LinkedHashSet<>();
		for (String entry : this.libraryPath) {
			Path directory = entry.isEmpty() ? Path.of("").toAbsolutePath() : Path.of(entry);
			add(found, seen, "LD_LIBRARY_PATH", directory.resolve(name));
		}
		for (Path file : cached(name)) {
			add(found, seen, "ld.so.cache", file);
		}
		for (Path directory : systemDirectories()) {
			add(found, seen, "system directory", directory.resolve(name));
		}
		return found;
	}

	/** Adds a file that exists, unless it was found before (by another name, too). */
	private static void add(List<Found> found, Set<Path> seen, String origin, Path file) {
		if (!Files.isRegularFile(file)) {
			return;
		}
		Path real;
		try {
			real = file.toRealPath();
		}
		catch (IOException | SecurityException ex) {
			real = file.toAbsolutePath();
		}
		if (seen.add(real)) {
			found.add(new Found(origin, file.toAbsolutePath()));
		}
	}

	private List<Path> systemDirectories() {
		String triplet = switch (this.arch) {
			case "amd64", "x86_64" -> "x86_64-linux-gnu";
			case "aarch64", "arm64" -> "aarch64-linux-gnu";
			default -> null;
		};
		List<Path> directories = new ArrayList<>();
		if (triplet != null) {
			directories.add(Path.of("/lib", triplet));
			directories.add(Path.of("/usr/lib", triplet));
		}
		directories.addAll(List.of(Path.of("/lib64"), Path.of("/usr/lib64"), Path.of("/lib"), Path.of("/usr/lib")));
		return directories;
	}

	/**
	 * Reads the entries for a name from the loader's cache ({@code glibc-ld.so.cache1.1},
	 * alone or after the old {@code ld.so-1.7.0} table), those for this architecture.
	 * @param name the name
	 * @return the files it names, in the cache's order; empty when the cache is missing
	 * or in a format not known here
	 */
	List<Path> cached(String name) {
		byte[] bytes;
		try {
			if (!Files.isRegularFile(this.cache) || Files.size(this.cache) > MAX_CACHE_BYTES) {
				return List.of();
			}
			bytes = Files.readAllBytes(this.cache);
		}
		catch (IOException | SecurityException ex) {
			return List.of();
		}
		ByteBuffer buffer = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
		int start = 0;
		if (startsWith(bytes, 0, OLD_MAGIC)) {
			if (bytes.length < 16) {
				return List.of();
			}
			long old = 16L + (buffer.getInt(12) & 0xFFFFFFFFL) * OLD_ENTRY_BYTES;
			old = (old + 7) & ~7L;
			if (old > bytes.length) {
				return List.of();
			}
			start = (int) old;
		}
		if (!startsWith(bytes, start, NEW_MAGIC) || bytes.length < start + NEW_HEADER_BYTES) {
			return List.of();
		}
		long count = buffer.getInt(start + 20) & 0xFFFFFFFFL;
		if (start + NEW_HEADER_BYTES + count * NEW_ENTRY_BYTES > bytes.length) {
			return List.of();
		}
		int wanted = switch (this.arch) {
			case "amd64", "x86_64" -> FLAG_X8664;
			case "aarch64", "arm64" -> FLAG_AARCH64;
			default -> -1;
		};
		List<Path> files = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			int entry = start + NEW_HEADER_BYTES + i * NEW_ENTRY_BYTES;
			int flags = buffer.getInt(entry);
			if (flags != FLAG_ELF && flags != wanted) {
				continue;
			}
			String key = string(bytes, start, buffer.getInt(entry + 4));
			if (!name.equals(key)) {
				continue;
			}
			String value = string(bytes, start, buffer.getInt(entry + 8));
			if (value != null && value.startsWith("/")) {
				files.add(Path.of(value));
			}
		}
		return files;
	}

	private static boolean startsWith(byte[] bytes, int offset, String magic) {
		byte[] expected = magic.getBytes(StandardCharsets.US_ASCII);
		if (bytes.length < offset + expected.length) {
			return false;
		}
		for (int i = 0; i < expected.length; i++) {
			if (bytes[offset + i] != expected[i]) {
				return false;
			}
		}
		return true;
	}

	/** A NUL-terminated string at an offset from the new table's start. */
	private static @Nullable String string(byte[] bytes, int base, int offset) {
		long position = base + (offset & 0xFFFFFFFFL);
		if (position >= bytes.length) {
			return null;
		}
		int end = (int) position;
		while (end < bytes.length && bytes[end] != 0) {
			end++;
		}
		if (end == bytes.length) {
			return null;
		}
		return new String(bytes, (int) position, end - (int) position, StandardCharsets.UTF_8);
	}

}
