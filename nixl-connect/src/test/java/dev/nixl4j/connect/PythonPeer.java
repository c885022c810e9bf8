package dev.nixl4j.connect;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

import dev.nixl4j.testsupport.LineProcess;
import org.junit.jupiter.api.Assumptions;

/**
 * {@code src/python/connect_peer.py} running in the virtual environment that
 * {@code src/python/install-python-nixl.sh} creates: a NIXL agent written against NIXL's
 * own Python API that speaks Dynamo's RDMA metadata JSON. Every read from it has a
 * deadline; closing kills it if it is still running.
 */
final class PythonPeer implements AutoCloseable {

	private static final Duration LINE_WAIT = Duration.ofSeconds(60);

	private final LineProcess process;

	private PythonPeer(LineProcess process) {
		this.process = process;
	}

	/**
	 * Returns the venv's python, or skips the calling test (fails it with
	 * {@code CI=true}).
	 * @return the interpreter
	 */
	static Path requirePython() {
		String cache = System.getenv("NIXL4J_CACHE");
		Path root;
		if (cache != null) {
			root = Path.of(cache);
		}
		else {
			String xdg = System.getenv("XDG_CACHE_HOME");
			root = ((xdg != null) ? Path.of(xdg) : Path.of(System.getProperty("user.home"), ".cache"))
				.resolve("nixl4j");
		}
		Path python = root.resolve("python-venv/bin/python");
		if (!Files.isExecutable(python)) {
			String message = "NIXL's Python API is not installed at " + python
					+ " (install: src/python/install-python-nixl.sh)";
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError(message + "; it is required in CI");
			}
			Assumptions.abort(message + ", skipping");
		}
		return python;
	}

	/**
	 * Starts the peer.
	 * @param python the interpreter
	 * @param arguments the mode and options
	 * @return the running peer
	 * @throws IOException when it cannot start
	 */
	static PythonPeer start(Path python, String... arguments) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(python.toString());
		command.add(script().toString());
		command.addAll(List.of(arguments));
		ProcessBuilder builder = new ProcessBuilder(command);
		builder.environment().putIfAbsent("UCX_MODULES", "^ib");
		return new PythonPeer(LineProcess.start("the Python peer", builder, null));
	}

	private static Path script() {
		for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
			Path script = dir.resolve("src/python/connect_peer.py");
			if (Files.isRegularFile(script)) {
				return script;
			}
		}
		throw new IllegalStateException("src/python/connect_peer.py not found above " + Path.of("").toAbsolutePath());
	}

	/**
	 * Reads the peer's next line.
	 * @return the line
	 * @throws IllegalStateException when none comes before the deadline, or the peer
	 * ended
	 */
	String readLine() {
		return this.process.readLine(LINE_WAIT);
	}

	/**
	 * Sends a line to the peer.
	 * @param line the line
	 */
	void send(String line) {
		this.process.send(line);
	}

	/**
	 * Waits for the peer to exit.
	 * @return its exit status
	 */
	int exitValue() {
		return this.process.exitValue(LINE_WAIT);
	}

	@Override
	public void close() {
		this.process.close();
	}

	/**
	 * Fills memory with the peer's pattern: byte i is
	 * {@code (i * 31 + (i >> 8) + seed) & 0xff}.
	 * @param segment the memory
	 * @param seed the seed
	 */
	static void fill(MemorySegment segment, long seed) {
		for (long i = 0; i < segment.byteSize(); i++) {
			segment.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, patternByte(i, seed));
		}
	}

	/**
	 * Whether memory holds the peer's pattern.
	 * @param segment the memory
	 * @param seed the seed
	 * @return {@code true} if every byte matches
	 */
	static boolean holds(MemorySegment segment, long seed) {
		for (long i = 0; i < segment.byteSize(); i++) {
			if (segment.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i) != patternByte(i, seed)) {
				return false;
			}
		}
		return true;
	}

	private static byte patternByte(long i, long seed) {
		return (byte) ((i * 31 + (i >>> 8) + seed) & 0xff);
	}

	/**
	 * Returns the CRC-32 (zlib's) of memory, as the peer reports it.
	 * @param segment the memory
	 * @return the checksum
	 */
	static long crc32(MemorySegment segment) {
		CRC32 crc = new CRC32();
		crc.update(segment.asByteBuffer());
		return crc.getValue();
	}

}
