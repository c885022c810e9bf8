package dev.nixl4j.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * A child process driven by lines: commands on its stdin, answers on its stdout (stderr
 * goes to the test's). A daemon thread reads the answers into a queue, so every read has
 * a deadline and a read that timed out cannot swallow the next answer. A read that fails
 * kills the child.
 */
public final class LineProcess implements AutoCloseable {

	private static final String END = new String("end of output");

	private final String description;

	private final Process process;

	private final PrintStream in;

	private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

	private final @Nullable String quit;

	private LineProcess(String description, Process process, @Nullable String quit) {
		this.description = description;
		this.process = process;
		this.quit = quit;
		this.in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
		Thread reader = new Thread(this::readAnswers, description + "-stdout");
		reader.setDaemon(true);
		reader.start();
	}

	/**
	 * The command line of a child JVM running {@code mainClass} on this test's class
	 * path, with native access and this JVM's NIXL library directory.
	 * @param mainClass the class whose {@code main} runs
	 * @param maxHeap the {@code -Xmx} value, for example {@code "256m"}
	 * @param arguments the program's arguments
	 * @return the command
	 */
	public static List<String> javaCommand(Class<?> mainClass, String maxHeap, String... arguments) {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("--enable-native-access=ALL-UNNAMED");
		command.add("-Xmx" + maxHeap);
		String nativeDir = System.getProperty("nixl.native.dir");
		if (nativeDir != null) {
			command.add("-Dnixl.native.dir=" + nativeDir);
		}
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(mainClass.getName());
		command.addAll(List.of(arguments));
		return command;
	}

	/**
	 * Starts a child.
	 * @param description what it is, for failures
	 * @param builder its command and environment; stderr is inherited
	 * @param quit the line that asks it to end on {@link #close()}, or {@code null} to
	 * kill it then
	 * @return the running child
	 * @throws IOException when it cannot start
	 */
	public static LineProcess start(String description, ProcessBuilder builder, @Nullable String quit)
			throws IOException {
		return new LineProcess(description, builder.redirectError(ProcessBuilder.Redirect.INHERIT).start(), quit);
	}

	private void readAnswers() {
		try (BufferedReader out = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = out.readLine()) != null) {
				this.lines.add(line);
			}
		}
		catch (IOException ex) {
			// the child ended
		}
		this.lines.add(END);
	}

	/**
	 * Sends a line.
	 * @param line the line
	 */
	public void send(String line) {
		this.in.println(line);
	}

	/**
	 * Reads the next line.
	 * @param timeout how long to wait for it
	 * @return the line
	 * @throws IllegalStateException when none comes in time or the child ended; the child
	 * is killed
	 */
	public String readLine(Duration timeout) {
		String line;
		try {
			line = this.lines.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			line = null;
		}
		if (line == END) {
			this.lines.add(END);
			throw new IllegalStateException(this.description + " ended without answering (exit "
					+ (waitQuietly(Duration.ofSeconds(10)) ? this.process.exitValue() : "unknown") + ")");
		}
		if (line == null) {
			this.process.destroyForcibly();
			throw new IllegalStateException("no line from " + this.description + " within " + timeout);
		}
		return line;
	}

	/**
	 * Reads the next line and checks that it starts with {@code prefix}.
	 * @param prefix the expected start
	 * @param timeout how long to wait for it
	 * @return the line
	 * @throws IllegalStateException on another answer (the child is killed), or as
	 * {@link #readLine(Duration)}
	 */
	public String expect(String prefix, Duration timeout) {
		String line = readLine(timeout);
		if (!line.startsWith(prefix)) {
			this.process.destroyForcibly();
			throw new IllegalStateException(this.description + " answered '" + line + "', expected " + prefix);
		}
		return line;
	}

	/**
	 * Waits for the child to exit.
	 * @param timeout how long to wait
	 * @return its exit status
	 * @throws IllegalStateException when it did not exit in time; it is killed
	 */
	public int exitValue(Duration timeout) {
		if (!waitQuietly(timeout)) {
			this.process.destroyForcibly();
			throw new IllegalStateException(this.description + " did not exit within " + timeout);
		}
		return this.process.exitValue();
	}

	/**
	 * Returns the process.
	 * @return the process
	 */
	public Process process() {
		return this.process;
	}

	private boolean waitQuietly(Duration timeout) {
		try {
			return this.process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * Ends the child if it still runs: with its quit line when it has one, killing it
	 * when it has not ended within 20 seconds.
	 */
	@Override
	public void close() {
		if (!this.process.isAlive()) {
			return;
		}
		Duration grace = Duration.ofSeconds(20);
		if (this.quit != null) {
			send(this.quit);
			if (waitQuietly(grace)) {
				return;
			}
		}
		this.process.destroyForcibly();
		waitQuietly(grace);
	}

}
