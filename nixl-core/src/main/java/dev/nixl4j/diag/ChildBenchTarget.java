package dev.nixl4j.diag;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.ffm.NativeLibrary;

/**
 * A benchmark target in a child JVM ({@code --processes 2}), which runs
 * {@link BenchTargetCommand}; the target's metadata comes back over the child's standard output.
 */
final class ChildBenchTarget implements BenchTarget {

	private static final int START_SECONDS = 120;

	private static final int ANSWER_SECONDS = 60;

	private final Process process;

	private final BufferedReader out;

	private final PrintStream in;

	private final String name;

	private final AgentMetadata metadata;

	private final MemoryDescriptor region;

	/**
	 * Starts the child and waits until its agent is ready.
	 * @param name the target agent's name
	 * @param size bytes it registers
	 * @param agentOptions the agent options, as command line tokens
	 * @throws IOException when the child cannot start
	 */
	ChildBenchTarget(String name, long size, List<String> agentOptions) throws IOException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("--enable-native-access=ALL-UNNAMED");
		command.add("-Xmx256m");
		String nativeDirectory = System.getProperty(NativeLibrary.DIR_PROPERTY);
		if (nativeDirectory != null) {
			command.add("-D" + NativeLibrary.DIR_PROPERTY + "=" + nativeDirectory);
		}
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(Nixl4jCli.class.getName());
		command.add("bench-target");
		command.add(BenchTargetCommand.NAME);
		command.add(name);
		command.add(BenchTargetCommand.SIZE);
		command.add(Long.toString(size));
		command.addAll(agentOptions);
		this.process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
		this.name = name;
		this.out = new BufferedReader(new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8));
		this.in = new PrintStream(this.process.getOutputStream(), true, StandardCharsets.UTF_8);
		try {
			String[] ready = expect("READY", START_SECONDS);
			this.metadata = AgentMetadata.of(Base64.getDecoder().decode(ready[1]));
			this.region = new MemoryDescriptor(Long.parseLong(ready[2]), Long.parseLong(ready[3]), 0);
		}
		catch (RuntimeException ex) {
			this.process.destroyForcibly();
			throw ex;
		}
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public AgentMetadata metadata() {
		return this.metadata;
	}

	@Override
	public MemoryDescriptor region() {
		return this.region;
	}

	@Override
	public void fill(long seed, long length) {
		this.in.println("FILL " + seed + " " + length);
		expect("FILLED", ANSWER_SECONDS);
	}

	@Override
	public long crc(long length) {
		this.in.println("CRC " + length);
		return Long.parseLong(expect("CRC", ANSWER_SECONDS)[1]);
	}

	/**
	 * Reads the child's answer. Other lines (UCX logs to standard output when its log level is
	 * raised) are passed on to standard error rather than mistaken for an answer.
	 */
	private String[] expect(String keyword, int seconds) {
		CompletableFuture<String[]> answer = CompletableFuture.supplyAsync(() -> {
			try {
				String line;
				while ((line = this.out.readLine()) != null) {
					if (line.equals(keyword) || line.startsWith(keyword + " ")) {
						return line.split(" ");
					}
					System.err.println("[" + this.name + "] " + line);
				}
				throw new IllegalStateException("the target process ended before answering " + keyword);
			}
			catch (IOException ex) {
				throw new IllegalStateException("cannot read from the target process: " + ex, ex);
			}
		});
		try {
			return answer.get(seconds, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("the target process did not answer " + keyword + " within " + seconds + " s"
					+ " (" + ex.getMessage() + ")", ex);
		}
	}

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
