package dev.nixl4j.connect;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.metadata.MetadataFraming;
import dev.nixl4j.testsupport.Eventually;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Java connector pairs operations with a peer written against NIXL's own Python API
 * ({@code src/python/connect_peer.py}), through Dynamo's RDMA metadata JSON in both
 * directions. Needs native NIXL and the venv of
 * {@code src/python/install-python-nixl.sh}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class PythonInteropTest {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final AtomicInteger ids = new AtomicInteger();

	private static Path python;

	private Arena arena;

	private Connector connector;

	@BeforeAll
	static void requirePython() {
		NativeNixl.require();
		python = PythonPeer.requirePython();
	}

	@BeforeEach
	void open() {
		this.arena = Arena.ofShared();
		this.connector = Connector.create(AgentConfig.builder(name("java")).engine(Engine.NATIVE).build());
	}

	@AfterEach
	void close() {
		this.connector.close();
		this.arena.close();
	}

	private static String name(String role) {
		return role + "-" + ProcessHandle.current().pid() + "-" + ids.incrementAndGet();
	}

	@Test
	void jsonOnlyOutputOfThePythonPeerIsDynamosFormat() throws Exception {
		String pythonName = name("python-sample");
		String json;
		try (PythonPeer peer = PythonPeer.start(python, "readable", "--name", pythonName, "--size", "8192",
				"--descriptors", "2", "--json-only")) {
			json = peer.readLine();
			assertThat(peer.exitValue()).isZero();
		}
		RdmaMetadata metadata = RdmaMetadata.fromJson(json);
		assertThat(metadata.operationKind()).isEqualTo(OperationKind.READ);
		assertThat(metadata.descriptors()).hasSize(2).allSatisfy(descriptor -> {
			assertThat(descriptor.device()).isEqualTo(Device.HOST);
			assertThat(descriptor.size()).isEqualTo(4096);
		});
		assertThat(metadata.notificationKey()).matches("[0-9a-f]{32}");
		MetadataFraming.ParsedMetadata parsed = MetadataFraming.parse(metadata.nixlMetadata().toByteArray());
		assertThat(parsed.agentName()).isEqualTo(pythonName);
		for (Descriptor descriptor : metadata.descriptors()) {
			assertThat(parsed.covers("UCX", 0, descriptor.address(), descriptor.size(), 0)).isTrue();
		}
		assertThat(RdmaMetadata.fromJson(metadata.toJson())).isEqualTo(metadata);
	}

	@Test
	void aPythonReadableIsReadByAJavaReadOperation() throws Exception {
		String pythonName = name("python-readable");
		try (PythonPeer peer = PythonPeer.start(python, "readable", "--name", pythonName, "--size", "1048576",
				"--descriptors", "2", "--seed", "5", "--timeout", "60")) {
			RdmaMetadata remote = RdmaMetadata.fromJson(peer.readLine());
			assertThat(remote.operationKind()).isEqualTo(OperationKind.READ);
			assertThat(MetadataFraming.parse(remote.nixlMetadata().toByteArray()).agentName()).isEqualTo(pythonName);
			MemorySegment buffer = this.arena.allocate(1 << 20, 64);
			long first = remote.descriptors().get(0).size();
			try (ReadOperation read = this.connector.beginRead(remote, Descriptor.of(buffer.asSlice(0, first)),
					Descriptor.of(buffer.asSlice(first)))) {
				read.await(WAIT);
				assertThat(read.status()).isEqualTo(OperationStatus.COMPLETE);
			}
			assertThat(PythonPeer.holds(buffer, 5)).as("the Python peer's pattern arrived").isTrue();
			assertThat(peer.readLine()).isEqualTo("NOTIFIED " + this.connector.name());
			assertThat(peer.exitValue()).isZero();
		}
		Eventually.until(Connector.DEFAULT_PEER_LINGER.multipliedBy(5), "the peer invalidated after its linger",
				() -> this.connector.agent().remoteAgents().isEmpty());
		assertThat(this.connector.agent().registrations()).isEmpty();
	}

	@Test
	void aJavaReadableIsReadByThePythonPeerAndCompletesOnItsNotification() throws Exception {
		String pythonName = name("python-read");
		MemorySegment memory = this.arena.allocate(3 * 100_000, 64);
		PythonPeer.fill(memory, 7);
		ReadableOperation readable = this.connector.createReadable(List.of(Descriptor.of(memory.asSlice(0, 100_000)),
				Descriptor.of(memory.asSlice(100_000, 100_000)), Descriptor.of(memory.asSlice(200_000))), WAIT);
		try (PythonPeer peer = PythonPeer.start(python, "read", "--name", pythonName, "--expect-seed", "7", "--timeout",
				"60")) {
			// the metadata is a secret: it goes through the pipe, never on a command line
			peer.send(readable.metadata().toJson());
			assertThat(peer.readLine()).isEqualTo("READ size=300000 crc32=" + PythonPeer.crc32(memory) + " pattern=7");
			readable.await(WAIT);
			assertThat(readable.status()).isEqualTo(OperationStatus.COMPLETE);
			assertThat(readable.peer()).contains(pythonName);
			peer.send("QUIT");
			assertThat(peer.exitValue()).isZero();
		}
		assertThat(this.connector.agent().registrations()).isEmpty();
	}

	@Test
	void aJavaWriteLandsInAPythonWritable() throws Exception {
		String pythonName = name("python-writable");
		try (PythonPeer peer = PythonPeer.start(python, "writable", "--name", pythonName, "--size", "65536",
				"--timeout", "60")) {
			RdmaMetadata remote = RdmaMetadata.fromJson(peer.readLine());
			assertThat(remote.operationKind()).isEqualTo(OperationKind.WRITE);
			MemorySegment data = this.arena.allocate(65536, 64);
			PythonPeer.fill(data, 11);
			try (WriteOperation write = this.connector.beginWrite(remote, Descriptor.of(data))) {
				write.await(WAIT);
			}
			assertThat(peer.readLine())
				.isEqualTo("NOTIFIED " + this.connector.name() + " crc32=" + PythonPeer.crc32(data));
			assertThat(peer.exitValue()).isZero();
		}
	}

}
