package dev.nixl4j.connect;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.LineProcess;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.PeerMain;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Paired operations between two JVMs ({@link ConnectPeerMain} in the second), the RDMA
 * metadata crossing a pipe as JSON: on the embedded engine the data crosses TCP, on the
 * native one UCX.
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
				Connector connector = Connector
					.create(AgentConfig.builder("connect-parent-" + suffix).engine(engine).build());
				LineProcess child = startChild("connect-child-" + suffix, engine)) {
			// the child exposes, this process reads
			child.send("READABLE " + SIZE + " 21");
			RdmaMetadata remote = RdmaMetadata.fromJson(child.expect("JSON", WAIT).substring(5));
			MemorySegment buffer = arena.allocate(SIZE, 64);
			try (ReadOperation read = connector.beginRead(remote, Descriptor.of(buffer))) {
				read.await(WAIT);
			}
			assertThat(Bytes.hasPattern(buffer, 21)).isTrue();
			assertThat(child.expect("ENDED", WAIT)).isEqualTo("ENDED COMPLETE " + connector.name());
			// this process exposes, the child reads
			MemorySegment memory = Bytes.pattern(arena, SIZE, 22);
			ReadableOperation readable = connector.createReadable(List.of(Descriptor.of(memory)), WAIT);
			child.send("READ " + readable.metadata().toJson());
			assertThat(child.expect("READ", WAIT)).isEqualTo("READ " + PeerMain.crc(memory));
			readable.await(WAIT);
			assertThat(readable.peer()).contains("connect-child-" + suffix);
			assertThat(connector.agent().registrations()).isEmpty();
			Eventually.until(Connector.DEFAULT_PEER_LINGER.multipliedBy(5), "the peer invalidated after its linger",
					() -> connector.agent().remoteAgents().isEmpty());
		}
	}

	/** The child JVM, {@link ConnectPeerMain}, once it said it is ready. */
	private static LineProcess startChild(String name, Engine engine) throws IOException {
		LineProcess child = LineProcess.start("connect child " + name,
				new ProcessBuilder(LineProcess.javaCommand(ConnectPeerMain.class, "256m", name, engine.name())),
				"QUIT");
		try {
			child.expect("READY", WAIT);
			return child;
		}
		catch (RuntimeException ex) {
			child.close();
			throw ex;
		}
	}

}
