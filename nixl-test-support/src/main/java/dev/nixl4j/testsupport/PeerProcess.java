package dev.nixl4j.testsupport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import dev.nixl4j.MemoryType;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.Engine;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.AgentMetadata;
import org.jspecify.annotations.Nullable;

/**
 * A {@link PeerMain} started in a child JVM: a real second process with its own NIXL
 * agent. Metadata is exchanged over the child's stdin and stdout.
 */
public final class PeerProcess implements AutoCloseable {

	private final Process process;

	private final BufferedReader out;

	private final PrintStream in;

	private final String name;

	private final AgentMetadata metadata;

	private final long address;

	private final long length;

	private PeerProcess(Process process, String name) throws IOException {
		this.process = process;
		this.name = name;
		this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
		this.in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
		String[] ready = expect("READY", 60);
		this.metadata = AgentMetadata.of(Base64.getDecoder().decode(ready[1]));
		this.address = Long.parseLong(ready[2]);
		this.length = Long.parseLong(ready[3]);
	}

	/**
	 * Starts a peer.
	 * @param name its agent name
	 * @param size bytes it registers
	 * @param seed the pattern it fills them with
	 * @return the running peer
	 * @throws IOException when it cannot start
	 */
	public static PeerProcess start(String name, long size, long seed) throws IOException {
		return start(name, size, seed, Map.of());
	}

	/**
	 * Starts a peer with extra environment variables, for example {@code UCX_TLS} to
	 * choose the transports its agent offers.
	 * @param name its agent name
	 * @param size bytes it registers
	 * @param seed the pattern it fills them with
	 * @param environment variables added to the child's environment
	 * @return the running peer
	 * @throws IOException when it cannot start
	 */
	public static PeerProcess start(String name, long size, long seed, Map<String, String> environment)
			throws IOException {
		return start(name, size, seed, environment, Engine.AUTO);
	}

	/**
	 * Starts a peer on a given engine.
	 * @param name its agent name
	 * @param size bytes it registers
	 * @param seed the pattern it fills them with
	 * @param environment variables added to the child's environment
	 * @param engine the engine of its agent
	 * @return the running peer
	 * @throws IOException when it cannot start
	 */
	public static PeerProcess start(String name, long size, long seed, Map<String, String> environment, Engine engine)
			throws IOException {
		List<String> command = LineProcess.javaCommand(PeerMain.class, "512m", name, Long.toString(size),
				Long.toString(seed), engine.name());
		ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT);
		builder.environment().putAll(environment);
		Process process = builder.start();
		try {
			return new PeerProcess(process, name);
		}
		catch (IOException | RuntimeException ex) {
			process.destroyForcibly();
			throw ex;
		}
	}

	/**
	 * Returns the peer's agent name.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns the peer's metadata.
	 * @return the metadata
	 */
	public AgentMetadata metadata() {
		return this.metadata;
	}

	/**
	 * Describes the peer's registered region (in the peer's address space).
	 * @return the region, for remote descriptor lists
	 */
	public DescriptorList region() {
		return DescriptorList.of(MemoryType.DRAM, new MemoryDescriptor(this.address, this.length, 0));
	}

	/**
	 * Describes a slice of the peer's registered region.
	 * @param offset offset into it
	 * @param size bytes
	 * @return the descriptor
	 */
	public MemoryDescriptor slice(long offset, long size) {
		return new MemoryDescriptor(this.address + offset, size, 0);
	}

	/**
	 * Makes the peer load an agent's metadata (so it can send notifications back).
	 * @param other the metadata
	 */
	public void load(AgentMetadata other) {
		send("LOAD " + Base64.getEncoder().encodeToString(other.toByteArray()));
		expect("LOADED", 30);
	}

	/**
	 * Returns the CRC32C of the peer's region.
	 * @return the checksum
	 */
	public long crc() {
		send("CRC");
		return Long.parseLong(expect("CRC", 60)[1]);
	}

	/**
	 * Refills the peer's region with a pattern.
	 * @param seed the seed
	 */
	public void fill(long seed) {
		send("FILL " + seed);
		expect("FILLED", 60);
	}

	/**
	 * Makes the peer send a standalone notification ({@code genNotif}) to an agent whose
	 * metadata it loaded.
	 * @param agent the receiving agent
	 * @param message the message
	 * @return {@code null} when it was sent, else why not
	 */
	public @Nullable String sendNotification(String agent, byte[] message) {
		send("NOTIFY " + agent + " " + Base64.getEncoder().encodeToString(message));
		String[] answer = expect("NOTIFIED", 30);
		return (answer.length > 1) ? String.join(" ", List.of(answer).subList(1, answer.length)) : null;
	}

	/**
	 * Takes every notification waiting at the peer whose text starts with a prefix.
	 * @param prefix the prefix
	 * @return how many it took
	 */
	public int poll(String prefix) {
		send("POLL " + prefix);
		return Integer.parseInt(expect("POLLED", 30)[1]);
	}

	/**
	 * Asks the peer to wait for a notification.
	 * @param tag the exact message
	 * @param millis its deadline
	 * @return the peer's answer: {@code NOTIF <tag> <crc>} or {@code NONE <reason>}
	 */
	public CompletableFuture<String> expectNotification(String tag, long millis) {
		send("EXPECT " + tag + " " + millis);
		return CompletableFuture.supplyAsync(() -> {
			try {
				return this.out.readLine();
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	/**
	 * Kills the peer with SIGKILL and waits until it is gone.
	 */
	public void kill() {
		this.process.destroyForcibly();
		try {
			if (!this.process.waitFor(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("peer " + this.name + " still runs 30 s after SIGKILL");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Stops the peer with SIGSTOP: its agent stops answering, so a transfer that needs
	 * its help stays in flight until {@link #resume()} (one that UCX emulates with
	 * messages; one done by cross-memory attach does not need the peer). Returns once
	 * every thread of the peer stopped.
	 */
	public void pause() {
		signal("STOP");
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (!allThreadsStopped()) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("peer " + this.name + " did not stop within 10 s of SIGSTOP");
			}
			LockSupport.parkNanos(1_000_000);
		}
	}

	/**
	 * Whether every thread of the peer is stopped. SIGSTOP takes effect asynchronously: a
	 * thread that was running when it was sent may run on for a moment after kill
	 * returns.
	 */
	private boolean allThreadsStopped() {
		try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(this.process.pid()), "task"))) {
			return tasks.allMatch(PeerProcess::isStopped);
		}
		catch (IOException | UncheckedIOException ex) {
			throw new IllegalStateException("cannot read the threads of peer " + this.name, ex);
		}
	}

	private static boolean isStopped(Path task) {
		String stat;
		try {
			stat = Files.readString(task.resolve("stat"));
		}
		catch (NoSuchFileException ex) {
			return true; // the thread exited
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		// the state follows the command name, which is in parentheses and may hold spaces
		char state = stat.charAt(stat.lastIndexOf(')') + 2);
		return state == 'T' || state == 't' || state == 'Z' || state == 'X';
	}

	/**
	 * Continues a peer stopped by {@link #pause()}.
	 */
	public void resume() {
		signal("CONT");
	}

	private void signal(String name) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(this.process.pid())).inheritIO()
				.start();
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + name + " " + this.process.pid() + " failed");
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Returns the peer's process id.
	 * @return the pid
	 */
	public long pid() {
		return this.process.pid();
	}

	private void send(String line) {
		this.in.println(line);
	}

	private String[] expect(String prefix, int seconds) {
		CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
			try {
				return this.out.readLine();
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		});
		try {
			String answer = line.get(seconds, TimeUnit.SECONDS);
			if (answer == null || !answer.startsWith(prefix + " ") && !answer.equals(prefix)) {
				throw new IllegalStateException("peer " + this.name + " answered '" + answer + "', expected " + prefix);
			}
			return answer.split(" ");
		}
		catch (Exception ex) {
			throw new IllegalStateException("peer " + this.name + " did not answer " + prefix + " in " + seconds + " s",
					ex);
		}
	}

	/**
	 * Returns a region of the local process as a remote descriptor would see it (helper
	 * for checksums on the initiator's side).
	 * @param segment local memory
	 * @return its checksum
	 */
	public static long crc(MemorySegment segment) {
		return PeerMain.crc(segment);
	}

	@Override
	public void close() {
		if (this.process.isAlive()) {
			try {
				resume();
			}
			catch (IllegalStateException ex) {
				if (this.process.isAlive()) {
					throw ex;
				}
				// it died since the check: nothing left to stop
				return;
			}
			send("QUIT");
			try {
				if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
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
