package dev.nixl4j.internal.ffm;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

import org.junit.jupiter.api.Assumptions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the loader's tests share: the NIXL that {@code src/native/fetch-nixl.sh} fetched,
 * a jar laid out as the {@code nixl-native-linux-x86_64} artifact built from it, and
 * child JVMs that load NIXL (the library loads once per JVM) with nothing else to find.
 */
final class NativeFixtures {

	/** The child JVMs' own deadline. */
	static final long CHILD_TIMEOUT_SECONDS = 90;

	private NativeFixtures() {
	}

	/**
	 * Returns the fetched NIXL ({@code <cache>/current}, holding {@code lib/} and
	 * {@code nixl_cu12.libs/}), or skips the test (fails it in CI) when it is missing.
	 * @return the directory
	 */
	static Path fetchedNixl() {
		Path current = NativeLibrary.cacheDirectory().resolve("current");
		if (!Files.isRegularFile(current.resolve("lib").resolve(NativeLibrary.LIBRARY_FILE))) {
			String message = "NIXL's native libraries are not in " + current + " (install: src/native/fetch-nixl.sh)";
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError(message);
			}
			Assumptions.abort(message);
		}
		return current;
	}

	/**
	 * Writes a jar with the artifact's layout from the fetched NIXL: its libraries
	 * ({@code lib/}, without plugins) and their bundled dependencies
	 * ({@code nixl_cu12.libs/}, without UCX's transport modules), enough for
	 * {@code libnixl_capi.so} to load, plus a {@code licenses/} file, which is never
	 * extracted.
	 * @param fetched the fetched NIXL
	 * @param jar the jar to write
	 * @return the index ({@code files.sha256}): relative path to SHA-256
	 * @throws Exception when it cannot be written
	 */
	static Map<String, String> writeArtifactJar(Path fetched, Path jar) throws Exception {
		return writeArtifactJar(fetched, jar, NativeVariant.LINUX_X86_64);
	}

	/**
	 * Writes a jar laid out as a variant's artifact from a fetched wheel, like
	 * {@link #writeArtifactJar(Path, Path)}.
	 * @param fetched the fetched NIXL (holding {@code lib/} and one {@code *.libs/})
	 * @param jar the jar to write
	 * @param variant the variant whose resource directory the files go in
	 * @return the index ({@code files.sha256}): relative path to SHA-256
	 * @throws Exception when it cannot be written
	 */
	static Map<String, String> writeArtifactJar(Path fetched, Path jar, NativeVariant variant) throws Exception {
		String prefix = variant.prefix();
		String libs;
		try (Stream<Path> entries = Files.list(fetched)) {
			libs = entries.map((entry) -> entry.getFileName().toString())
				.filter((name) -> name.endsWith(".libs"))
				.findFirst()
				.orElseThrow(() -> new IllegalStateException("no *.libs directory in " + fetched));
		}
		Map<String, Path> files = new TreeMap<>();
		for (String directory : List.of("lib", libs)) {
			try (Stream<Path> entries = Files.list(fetched.resolve(directory))) {
				entries.filter(Files::isRegularFile)
					.forEach(file -> files.put(directory + "/" + file.getFileName(), file));
			}
		}
		Map<String, String> index = new TreeMap<>();
		StringBuilder lines = new StringBuilder();
		for (Map.Entry<String, Path> file : files.entrySet()) {
			String sha256 = sha256(file.getValue());
			index.put(file.getKey(), sha256);
			lines.append(sha256).append("  ").append(file.getKey()).append('\n');
		}
		byte[] indexBytes = lines.toString().getBytes(StandardCharsets.UTF_8);
		String bundleId = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(indexBytes));
		String version = Files.readString(fetched.resolve("lib").resolve("NIXL_VERSION")).strip();
		String properties = "nixl.version=" + version + "\nvariant=" + variant.variantName() + "\nwheel="
				+ libs.replace(".libs", "") + "-" + version + "-test.whl\nbundle.id=" + bundleId + "\n";
		try (ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(jar))) {
			store(out, prefix + "bundle.properties", properties.getBytes(StandardCharsets.UTF_8));
			store(out, prefix + "files.sha256", indexBytes);
			store(out, prefix + "licenses/NIXL-LICENSE", "Apache-2.0\n".getBytes(StandardCharsets.UTF_8));
			for (Map.Entry<String, Path> file : files.entrySet()) {
				store(out, prefix + file.getKey(), Files.readAllBytes(file.getValue()));
			}
		}
		return index;
	}

	/**
	 * Stored, not deflated: the test jar is written for every run, and compressing costs
	 * CPU.
	 */
	private static void store(ZipOutputStream out, String name, byte[] bytes) throws IOException {
		ZipEntry entry = new ZipEntry(name);
		entry.setMethod(ZipEntry.STORED);
		entry.setSize(bytes.length);
		entry.setCompressedSize(bytes.length);
		CRC32 crc = new CRC32();
		crc.update(bytes);
		entry.setCrc(crc.getValue());
		out.putNextEntry(entry);
		out.write(bytes);
		out.closeEntry();
	}

	/**
	 * Returns a file's SHA-256.
	 * @param file the file
	 * @return lower-case hex
	 * @throws Exception when it cannot be read
	 */
	static String sha256(Path file) throws Exception {
		MessageDigest digest = MessageDigest.getInstance("SHA-256");
		try (var in = Files.newInputStream(file)) {
			byte[] buffer = new byte[64 * 1024];
			for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
				digest.update(buffer, 0, n);
			}
		}
		return HexFormat.of().formatHex(digest.digest());
	}

	/**
	 * Starts {@link LibraryLoadChild} in a JVM whose only places to find NIXL are the
	 * ones the test gives: the process environment's NIXL variables and Python
	 * environments are removed, and the real native artifact, once it is a dependency, is
	 * left off the class path.
	 * @param work where the output goes
	 * @param jvmFlags flags before the class path
	 * @param extraClassPath entries appended to the class path
	 * @param environment variables to set
	 * @param args the child's arguments
	 * @return the started child
	 * @throws IOException when it cannot start
	 */
	static Child start(Path work, List<String> jvmFlags, List<Path> extraClassPath, Map<String, String> environment,
			String... args) throws IOException {
		return start(work, jvmFlags, extraClassPath, environment, LibraryLoadChild.class, args);
	}

	/**
	 * Starts a child like {@link #start(Path, List, List, Map, String...)}, running
	 * another main class.
	 * @param work where the output goes
	 * @param jvmFlags flags before the class path
	 * @param extraClassPath entries appended to the class path
	 * @param environment variables to set
	 * @param main the main class
	 * @param args the child's arguments
	 * @return the started child
	 * @throws IOException when it cannot start
	 */
	static Child start(Path work, List<String> jvmFlags, List<Path> extraClassPath, Map<String, String> environment,
			Class<?> main, String... args) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-Xmx128m");
		command.add("-XX:+UseSerialGC");
		command.addAll(jvmFlags);
		List<String> classPath = new ArrayList<>();
		for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
			if (!entry.contains("nixl-native-linux-")) {
				classPath.add(entry);
			}
		}
		extraClassPath.forEach(entry -> classPath.add(entry.toString()));
		command.add("-cp");
		command.add(String.join(File.pathSeparator, classPath));
		command.add(main.getName());
		command.addAll(List.of(args));
		Path output = Files.createTempFile(work, "child-", ".out");
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
		for (String variable : List.of("NIXL_LIB_DIR", "NIXL_PREFIX", "VIRTUAL_ENV", "CONDA_PREFIX", "NIXL4J_CACHE",
				"NIXL_PLUGIN_DIR", "NIXL4J_NATIVE_VARIANT")) {
			builder.environment().remove(variable);
		}
		builder.environment().putAll(environment);
		return new Child(builder.start(), output);
	}

	/**
	 * A started child JVM.
	 *
	 * @param process the process
	 * @param output the file its output goes to
	 */
	record Child(Process process, Path output) {

		/**
		 * Waits for it to end and returns its output.
		 * @return what it printed
		 * @throws Exception when it does not end in time
		 */
		String await() throws Exception {
			try {
				assertThat(this.process.waitFor(CHILD_TIMEOUT_SECONDS, TimeUnit.SECONDS)).as("the child JVM ended")
					.isTrue();
				return Files.readString(this.output);
			}
			finally {
				this.process.destroyForcibly();
			}
		}

	}

	/**
	 * Runs a child to its end.
	 * @param work where the output goes
	 * @param jvmFlags flags before the class path
	 * @param extraClassPath entries appended to the class path
	 * @param environment variables to set
	 * @param args the child's arguments
	 * @return what it printed
	 * @throws Exception when it cannot run or does not end in time
	 */
	static String run(Path work, List<String> jvmFlags, List<Path> extraClassPath, Map<String, String> environment,
			String... args) throws Exception {
		return start(work, jvmFlags, extraClassPath, environment, args).await();
	}

	/**
	 * Writes bytes over the start of a file, keeping its size.
	 * @param file the file
	 * @throws IOException when it cannot be written
	 */
	static void corrupt(Path file) throws IOException {
		try (OutputStream out = Files.newOutputStream(file, java.nio.file.StandardOpenOption.WRITE)) {
			out.write(new byte[] { 'n', 'o', 't', ' ', 'E', 'L', 'F' });
		}
	}

}
