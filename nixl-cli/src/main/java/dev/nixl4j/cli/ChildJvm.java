package dev.nixl4j.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;

/**
 * A child JVM that runs one command of this tool and is driven line by line over its
 * standard streams: the benchmarks' second process.
 */
final class ChildJvm implements AutoCloseable {

	private final Process process;

	private final BufferedReader out;

	private final PrintStream in;

	private final String label;

	/**
	 * Starts the child.
	 * @param label names the child in forwarded output
	 * @param arguments the command and its options
	 * @throws IOException when it cannot start
	 */
	ChildJvm(String label, List<String> arguments) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("--enable-native-access=ALL-UNNAMED");
		command.add("-Xmx256m");
		String nativeDirectory = System.getProperty(AgentConfig.NATIVE_DIRECTORY_PROPERTY);
		if (nativeDirectory != null) {
			command.add("-D" + AgentConfig.NATIVE_DIRECTORY_PROPERTY + "=" + nativeDirectory);
		}
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(Nixl4jCli.class.getName());
		command.addAll(arguments);
		this.process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
		this.label = label;
		this.out = new BufferedReader(new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8));
		this.in = new PrintStream(this.process.getOutputStream(), true, StandardCharsets.UTF_8);
	}

	/**
	 * Sends one line.
	 * @param line the line
	 */
	void send(String line) {
		this.in.println(line);
	}

	/**
	 * Reads the child's answer. Other lines (UCX logs to standard output when its log
	 * level is raised) are passed on to standard error rather than mistaken for an
	 * answer.
	 * @param keyword the first word of the answer
	 * @param seconds how long to wait
	 * @return the answer split at spaces
	 */
	String[] expect(String keyword, int seconds) {
		return expect(seconds, keyword);
	}

	/**
	 * Reads the child's next line that starts with one of some keywords, passing other
	 * lines on to standard error as {@link #expect(String, int)} does.
	 * @param seconds how long to wait
	 * @param keywords the first words to wait for
	 * @return the line split at spaces
	 */
	String[] expect(int seconds, String... keywords) {
		String expected = String.join(" or ", keywords);
		// a thread of its own: several children may be read at once, each blocking
		CompletableFuture<String[]> answer = CompletableFuture.supplyAsync(() -> {
			try {
				String line;
				while ((line = this.out.readLine()) != null) {
					for (String keyword : keywords) {
						if (line.equals(keyword) || line.startsWith(keyword + " ")) {
							return line.split(" ");
						}
					}
					System.err.println("[" + this.label + "] " + line);
				}
				throw new IllegalStateException("the " + this.label + " process ended before answering " + expected);
			}
			catch (IOException ex) {
				throw new IllegalStateException("cannot read from the " + this.label + " process: " + ex, ex);
			}
		}, (task) -> Thread.ofPlatform().daemon().name("nixl4j-child-reader").start(task));
		try {
			return answer.get(seconds, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(
					"interrupted while waiting for the " + this.label + " process to answer " + expected, ex);
		}
		catch (Exception ex) {
			throw new IllegalStateException("the " + this.label + " process did not answer " + expected + " within "
					+ seconds + " s" + " (" + ex.getMessage() + ")", ex);
		}
	}

	/**
	 * Kills the child at once.
	 */
	void kill() {
		this.process.destroyForcibly();
	}

	/**
	 * Asks the child to quit and waits for it, killing it after 30 s.
	 */
	@Override
	public void close() {
		if (this.process.isAlive()) {
			this.in.println("QUIT");
			try {
				if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
					this.process.destroyForcibly();
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				this.process.destroyForcibly();
			}
		}
	}

}
