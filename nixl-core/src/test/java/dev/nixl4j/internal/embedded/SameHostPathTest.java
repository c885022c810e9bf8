package dev.nixl4j.internal.embedded;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.ShareableMemory;
import dev.nixl4j.XferOp;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.Parsed;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.PeerMain;
import dev.nixl4j.testsupport.PeerProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The embedded engine's same-host path between two processes: this JVM's driver with
 * {@code same_host=true} and a peer JVM ({@link PeerProcess}) that registers
 * {@link ShareableMemory}. Data is checked byte for byte (by CRC on the peer, by pattern
 * here); a wrong key is refused as over TCP; a peer on another host, one without the
 * parameter and one whose memory is not shareable are reached over TCP.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SameHostPathTest {

	private static final long MiB = 1L << 20;

	private final List<AutoCloseable> resources = new ArrayList<>();

	private Arena arena;

	private EmbeddedDriver driver;

	private MemorySegment local;

	@BeforeEach
	void open() {
		this.arena = Arena.ofShared();
		this.driver = EmbeddedDriver
			.open(AgentConfig.builder("same-host-" + ProcessHandle.current().pid() + "-" + System.nanoTime())
				.engine(Engine.EMBEDDED)
				.build());
		this.driver.createBackend("EMBEDDED", Map.of("same_host", "true"));
		this.local = Bytes.pattern(this.arena, 64 * MiB, 1);
		this.driver.register(DescriptorList.of(this.local), List.of(this.local));
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
		this.driver.close();
		this.arena.close();
	}

	private PeerProcess peer(Map<String, String> environment) throws Exception {
		PeerProcess peer = PeerProcess.start("same-host-peer-" + System.nanoTime(), 64 * MiB, 2, environment,
				Engine.EMBEDDED);
		this.resources.add(peer);
		this.driver.loadRemoteMetadata(peer.metadata().toByteArray());
		return peer;
	}

	private PeerProcess sameHostPeer() throws Exception {
		return peer(Map.of(PeerMain.SAME_HOST, "true"));
	}

	/** Posts a request and waits for its end. */
	private int transfer(XferOp op, PeerProcess peer, DescriptorList remote, byte[] notification) throws Exception {
		long request = this.driver.createRequest(op, DescriptorList.of(this.local), remote, peer.name());
		try {
			this.driver.post(request, notification);
			int status = awaitEnd(request);
			if (status != 0) {
				assertThat(this.driver.failureDetail(request)).isNotNull();
				throw new AssertionError(
						"transfer failed with status " + status + ": " + this.driver.failureDetail(request));
			}
			return status;
		}
		finally {
			this.driver.release(request);
		}
	}

	/** A WRITE then a READ of the whole region, both checked byte for byte. */
	private void writeAndReadArriveIntact(PeerProcess peer) throws Exception {
		var arrival = peer.expectNotification("written", 30_000);
		transfer(XferOp.WRITE, peer, peer.region(), "written".getBytes(StandardCharsets.UTF_8));
		// the peer checksums its memory the moment the notification is handed to it
		assertThat(arrival.get(30, TimeUnit.SECONDS)).isEqualTo("NOTIF written " + PeerMain.crc(this.local));
		peer.fill(9);
		transfer(XferOp.READ, peer, peer.region(), null);
		assertThat(Bytes.hasPattern(this.local, 9)).isTrue();
		assertThat(PeerMain.crc(this.local)).isEqualTo(peer.crc());
	}

	@Test
	void sixtyFourMiBWriteAndReadTakeTheSameHostPathAndArriveIntact() throws Exception {
		PeerProcess peer = sameHostPeer();
		assertThat(this.driver.sameHostFallback(peer.name())).isNull();
		writeAndReadArriveIntact(peer);
		assertThat(this.driver.sameHostTransfers(peer.name())).isEqualTo(2);
		// a slice in the middle, read into the start of the local memory
		Bytes.fill(this.local, 3);
		peer.fill(5);
		MemorySegment expected = Bytes.pattern(this.arena, 64 * MiB, 5).asSlice(4 * MiB + 100, 1000);
		long request = this.driver.createRequest(XferOp.READ, DescriptorList.of(this.local.asSlice(0, 1000)),
				DescriptorList.of(MemoryType.DRAM, peer.slice(4 * MiB + 100, 1000)), peer.name());
		this.driver.post(request, null);
		awaitDone(request);
		assertThat(Bytes.same(this.local.asSlice(0, 1000), expected)).isTrue();
		assertThat(this.driver.sameHostTransfers(peer.name())).isEqualTo(3);
	}

	private void awaitDone(long request) throws InterruptedException {
		assertThat(awaitEnd(request)).as(() -> String.valueOf(this.driver.failureDetail(request))).isZero();
		this.driver.release(request);
	}

	/** Polls a posted request until it leaves IN_PROGRESS, for 30 s at most. */
	private int awaitEnd(long request) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		int status;
		while ((status = this.driver.status(request)) == NixlStatus.IN_PROGRESS.code()) {
			assertThat(System.nanoTime() - deadline).as("the transfer ends").isNegative();
			Thread.sleep(1);
		}
		return status;
	}

	@Test
	void aWrongKeyIsRefusedAsOverTcpAndNoByteMoves() throws Exception {
		PeerProcess peer = sameHostPeer();
		Parsed parsed = EmbeddedMetadata.read(peer.metadata().toByteArray());
		List<RemoteRegion> forged = new ArrayList<>();
		for (RemoteRegion region : parsed.regions()) {
			byte[] key = region.key().clone();
			key[0] ^= 1;
			forged.add(new RemoteRegion(region.descriptor(), region.registration(), key));
		}
		String name = "forged-" + peer.name();
		this.driver.loadRemoteMetadata(EmbeddedMetadata.write(name, parsed.connection(), forged));
		long request = this.driver.createRequest(XferOp.READ, DescriptorList.of(this.local), peer.region(), name);
		this.driver.post(request, null);
		assertThat(awaitEnd(request)).isEqualTo(NixlStatus.ERROR_INVALID_PARAM.code());
		assertThat(this.driver.failureDetail(request)).isEqualTo("refused by '" + name
				+ "': descriptor 0 names no registration with that key (deregistered memory, or stale or forged "
				+ "metadata)");
		this.driver.release(request);
		assertThat(Bytes.hasPattern(this.local, 1)).as("no byte arrived").isTrue();
		assertThat(this.driver.sameHostTransfers(name)).isZero();
		// a range past the registration, under its right key
		List<RemoteRegion> widened = new ArrayList<>();
		for (RemoteRegion region : parsed.regions()) {
			MemoryDescriptor d = region.descriptor();
			widened.add(new RemoteRegion(new MemoryDescriptor(d.address(), d.length() + 4096, d.deviceId()),
					region.registration(), region.key()));
		}
		String wide = "widened-" + peer.name();
		this.driver.loadRemoteMetadata(EmbeddedMetadata.write(wide, parsed.connection(), widened));
		MemoryDescriptor past = new MemoryDescriptor(peer.region().descriptors().get(0).address() + 64 * MiB, 4096, 0);
		long write = this.driver.createRequest(XferOp.WRITE, DescriptorList.of(this.local.asSlice(0, 4096)),
				DescriptorList.of(MemoryType.DRAM, past), wide);
		this.driver.post(write, null);
		assertThat(awaitEnd(write)).isEqualTo(NixlStatus.ERROR_INVALID_PARAM.code());
		assertThat(this.driver.failureDetail(write))
			.isEqualTo("refused by '" + wide + "': descriptor 0 lies outside the memory of the registration it names");
		this.driver.release(write);
		assertThat(this.driver.sameHostTransfers(wide)).isZero();
		assertThat(peer.crc()).as("the peer's memory is untouched")
			.isEqualTo(PeerMain.crc(Bytes.pattern(this.arena, 64 * MiB, 2)));
	}

	@Test
	void aPeerOnAnotherHostIsReachedOverTcp() throws Exception {
		PeerProcess peer = peer(Map.of(PeerMain.SAME_HOST, "true", PeerMain.HOST_IDENTITY, "another-host"));
		assertThat(this.driver.sameHostFallback(peer.name())).isEqualTo(SameHostPath.Fallback.OTHER_HOST);
		writeAndReadArriveIntact(peer);
		assertThat(this.driver.sameHostTransfers(peer.name())).isZero();
	}

	@Test
	void aPeerWithoutTheParameterIsReachedOverTcp() throws Exception {
		PeerProcess peer = peer(Map.of());
		assertThat(this.driver.sameHostFallback(peer.name())).isEqualTo(SameHostPath.Fallback.NOT_OFFERED);
		writeAndReadArriveIntact(peer);
		assertThat(this.driver.sameHostTransfers(peer.name())).isZero();
	}

	@Test
	void memoryThatIsNotShareableIsReachedOverTcp() throws Exception {
		Map<String, String> environment = new HashMap<>();
		environment.put(PeerMain.SAME_HOST, "true");
		environment.put(PeerMain.MEMORY, "plain");
		PeerProcess peer = peer(environment);
		assertThat(this.driver.sameHostFallback(peer.name())).isNull();
		writeAndReadArriveIntact(peer);
		assertThat(this.driver.sameHostTransfers(peer.name())).isZero();
	}

	@Test
	void aBadSameHostParameterIsRefused() {
		assertThatExceptionOfType(NixlException.class)
			.isThrownBy(() -> this.driver.createBackend("EMBEDDED", Map.of("same_host", "yes")))
			.satisfies((ex) -> assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM))
			.withMessageContaining("same_host");
	}

}
