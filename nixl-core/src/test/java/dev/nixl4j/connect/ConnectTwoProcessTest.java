package dev.nixl4j.connect;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Bytes;
import dev.nixl4j.Engine;
import dev.nixl4j.NativeNixl;
import dev.nixl4j.metadata.Eventually;
import dev.nixl4j.PeerMain;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Paired operations between two JVMs ({@link ConnectPeerMain} in the second), the RDMA metadata
 * crossing a pipe as JSON: on the embedded engine the data crosses TCP, on the native one UCX.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ConnectTwoProcessTest {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final long SIZE = 8L << 20;

	private static final AtomicInteger ids = new AtomicInteger();

	@ParameterizedTest
	@EnumSource(value = Engine.class, names = { "EMBEDDED", "NATIVE" })
	void aReadableInEachProcessIsReadByTheOther(Engine engine) throws Exception {
		if (engine == Engine.NATIVE) {
			NativeNixl.require();
		}
		String suffix = ProcessHandle.current().pid() + "-" + ids.incrementAndGet();
		try (Arena arena = Arena.ofShared();
				Connector connector = Connector.create(AgentConfig.builder("connect-parent-" + suffix).engine(engine).build());
				Child child = Child.start("connect-child-" + suffix, engine)) {
			// the child exposes, this process reads
			child.send("READABLE " + SIZE + " 21");
			RdmaMetadata remote = RdmaMetadata.fromJson(child.expect("JSON").substring(5));
			MemorySegment buffer = arena.allocate(SIZE, 64);
			try (ReadOperation read = connector.beginRead(remote, Descriptor.of(buffer))) {
				read.await(WAIT);
			}
			assertThat(Bytes.hasPattern(buffer, 21)).isTrue();
			assertThat(child.expect("ENDED")).isEqualTo("ENDED COMPLETE " + connector.name());
			// this process exposes, the child reads
			MemorySegment memory = Bytes.pattern(arena, SIZE, 22);
			ReadableOperation readable = connector.createReadable(List.of(Descriptor.of(memory)), WAIT);
			child.send("READ " + readable.metadata().toJson());
			assertThat(child.expect("READ")).isEqualTo("READ " + PeerMain.crc(memory));
			readable.await(WAIT);
			assertThat(readable.peer()).contains("connect-child-" + suffix);
			assertThat(connector.agent().registrations()).isEmpty();
			Eventually.until(Connector.DEFAULT_PEER_LINGER.multipliedBy(5), "the peer invalidated after its linger",
					() -> connector.agent().remoteAgents().isEmpty());
		}
	}

	/** The child JVM; every answer is awaited with a deadline and the child is killed on failure. */
	private static final class Child implements AutoCloseable {

		private final Process process;

		private final PrintStream in;

		private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

		private Child(Process process) {
			this.process = process;
			this.in = new PrintStream(process.getOutputStream(), true, StandardCharsets.UTF_8);
			Thread reader = new Thread(() -> {
				try (BufferedReader out = new BufferedReader(
						new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
					String line;
					while ((line = out.readLine()) != null) {
						this.lines.add(line);
					}
				}
				catch (IOException ex) {
					// the child ended
				}
			}, "connect-child-stdout");
			reader.setDaemon(true);
			reader.start();
		}

		static Child start(String name, Engine engine) throws IOException {
			List<String> command = new ArrayList<>();
			command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
			command.add("--enable-native-access=ALL-UNNAMED");
			command.add("-Xmx256m");
			String nativeDir = System.getProperty("nixl.native.dir");
			if (nativeDir != null) {
				command.add("-Dnixl.native.dir=" + nativeDir);
			}
			command.add("-cp");
			command.add(System.getProperty("java.class.path"));
			command.add(ConnectPeerMain.class.getName());
			command.add(name);
			command.add(engine.name());
			Child child = new Child(new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start());
			try {
				child.expect("READY");
				return child;
			}
			catch (RuntimeException | InterruptedException ex) {
				child.process.destroyForcibly();
				throw new IllegalStateException("the child did not start", ex);
			}
		}

		void send(String line) {
			this.in.println(line);
		}

		String expect(String prefix) throws InterruptedException {
			String line = this.lines.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
			if (line == null || !line.startsWith(prefix)) {
				this.process.destroyForcibly();
				throw new IllegalStateException("the child answered '" + ((line == null) ? "nothing within " + WAIT : line)
						+ "', expected " + prefix);
			}
			return line;
		}

		@Override
		public void close() throws InterruptedException {
			if (this.process.isAlive()) {
				send("QUIT");
				if (!this.process.waitFor(20, TimeUnit.SECONDS)) {
					this.process.destroyForcibly();
					this.process.waitFor(20, TimeUnit.SECONDS);
				}
			}
		}

	}

}
