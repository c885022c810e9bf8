package dev.nixl4j;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import dev.nixl4j.testsupport.PeerProcess;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.PeerMain;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Native NIXL with the peer in another process ({@link PeerProcess}): metadata crosses
 * the child's pipe, data crosses UCX, and every byte is checked, on the peer by its
 * CRC32C and locally by the pattern. Failure cases use the real thing too: a peer killed
 * with SIGKILL in the middle of a stream of transfers, and a peer stopped with SIGSTOP so
 * that a transfer with it stays in flight.
 *
 * <p>
 * No assertion depends on timing; deadlines only keep a broken build from hanging.
 */
class TwoProcessNativeTest {

	private static final long MiB = 1L << 20;

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final AtomicInteger ids = new AtomicInteger();

	private final Deque<AutoCloseable> resources = new ArrayDeque<>();

	private Arena arena;

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@BeforeEach
	void openArena() {
		this.arena = Arena.ofShared();
		this.resources.push(this.arena);
	}

	/**
	 * Closes in reverse order of creation: peers, then agents, then the memory they used.
	 */
	@AfterEach
	void closeResources() throws Exception {
		while (!this.resources.isEmpty()) {
			this.resources.pop().close();
		}
	}

	private static String uniqueName(String role) {
		return role + "-" + ProcessHandle.current().pid() + "-" + ids.incrementAndGet();
	}

	private NixlAgent agent(Consumer<AgentConfig.Builder> customizer) {
		AgentConfig.Builder builder = AgentConfig.builder(uniqueName("initiator")).engine(Engine.NATIVE);
		customizer.accept(builder);
		NixlAgent agent = NixlAgent.create(builder.build());
		this.resources.push(agent);
		return agent;
	}

	private PeerProcess peer(String name, long size, long seed, PeerTransports transports) throws IOException {
		PeerProcess peer = PeerProcess.start(name, size, seed, transports.environment);
		this.resources.push(peer);
		return peer;
	}

	private MemorySegment memory(long size, long seed) {
		return Bytes.pattern(this.arena, size, seed);
	}

	/**
	 * The UCX transports a peer offers. By default UCX on one host reads and writes the
	 * peer's memory with cross-memory attach (process_vm_readv/writev) where the kernel
	 * allows it: the peer's CPU takes no part, so even a stopped peer serves a READ.
	 * Without CMA, UCX emulates one-sided operations with messages (shared memory or TCP)
	 * that the peer's agent answers.
	 */
	enum PeerTransports {

		DEFAULT(Map.of()), NO_CMA(Map.of("UCX_TLS", "^cma"));

		final Map<String, String> environment;

		PeerTransports(Map<String, String> environment) {
			this.environment = environment;
		}

	}

	private static DescriptorList remote(PeerProcess peer, long offset, long size) {
		return DescriptorList.of(MemoryType.DRAM, peer.slice(offset, size));
	}

	// ---------------------------------------------------------------------------------------
	// data and notifications between two processes

	@ParameterizedTest
	@EnumSource(PeerTransports.class)
	@Timeout(value = 180, unit = TimeUnit.SECONDS)
	void aWriteAndAReadOf64MiBMoveEveryByteBetweenTwoProcesses(PeerTransports transports) throws IOException {
		long size = 64 * MiB;
		PeerProcess peer = peer(uniqueName("peer"), size, 21, transports);
		NixlAgent agent = agent(builder -> {
		});
		MemorySegment local = memory(size, 1);
		agent.register(local);
		assertThat(agent.loadRemoteMetadata(peer.metadata())).isEqualTo(peer.name());
		assertThat(peer.crc()).as("the peer starts with other data").isNotEqualTo(PeerMain.crc(local));

		try (Transfer write = agent.transfer(XferOp.WRITE, DescriptorList.of(local), peer.region(), peer.name(),
				null)) {
			write.await(WAIT);
			assertThat(write.state()).isEqualTo(TransferState.COMPLETED);
		}
		assertThat(peer.crc()).as("the peer's checksum after the WRITE").isEqualTo(PeerMain.crc(local));

		peer.fill(22);
		long filled = peer.crc();
		assertThat(filled).as("the peer holds new data").isNotEqualTo(PeerMain.crc(local));
		try (Transfer read = agent.transfer(XferOp.READ, DescriptorList.of(local), peer.region(), peer.name(), null)) {
			read.await(WAIT);
			assertThat(read.state()).isEqualTo(TransferState.COMPLETED);
		}
		assertThat(PeerMain.crc(local)).as("local checksum after the READ").isEqualTo(filled);
		assertThat(Bytes.hasPattern(local, 22)).isTrue();
	}

	/**
	 * The peer never loads the initiator's metadata: NIXL delivers a transfer's
	 * notification over the connection the initiator opened, so the target needs not know
	 * the initiator.
	 */
	@ParameterizedTest
	@EnumSource(PeerTransports.class)
	@Timeout(value = 180, unit = TimeUnit.SECONDS)
	void aNotificationReachesThePeerProcessOnlyAfterTheWrittenDataLanded(PeerTransports transports) throws Exception {
		long size = 32 * MiB;
		PeerProcess peer = peer(uniqueName("peer"), size, 31, transports);
		NixlAgent agent = agent(builder -> {
		});
		MemorySegment local = memory(size, 1);
		agent.register(local);
		agent.loadRemoteMetadata(peer.metadata());
		for (int round = 0; round < 3; round++) {
			Bytes.fill(local, 300 + round);
			String tag = "landed-" + round;
			CompletableFuture<String> answer = peer.expectNotification(tag, WAIT.toMillis());
			try (Transfer write = agent.transfer(XferOp.WRITE, DescriptorList.of(local), peer.region(), peer.name(),
					tag.getBytes(StandardCharsets.UTF_8))) {
				write.await(WAIT);
			}
			// the peer computes its checksum the moment its agent hands the notification
			// over
			assertThat(answer.get(WAIT.toSeconds() + 10, TimeUnit.SECONDS))
				.as("round %d: notification and the peer's checksum when it arrived", round)
				.isEqualTo("NOTIF " + tag + " " + PeerMain.crc(local));
		}
	}

	// ---------------------------------------------------------------------------------------
	// a peer killed with SIGKILL in the middle of a stream of transfers

	/** How one transfer of the stream ended. */
	private record Outcome(int index, XferOp op, long startedAt, long endedAt, @Nullable NixlStatus failure,
			@Nullable TransferState state, String detail, boolean verified) {
	}

	/**
	 * READs of the peer's first block and WRITEs of its second, one after the other, each
	 * awaited with a deadline; after the peer died it stops by itself once enough
	 * transfers have started.
	 */
	private static final class TransferStream implements Runnable {

		final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

		/** Counts down on each success; released at once when the stream ends. */
		final CountDownLatch warmedUp;

		/** When the peer was seen gone ({@link System#nanoTime()}), 0 while it lives. */
		final AtomicLong peerGoneAt = new AtomicLong();

		volatile boolean stopped;

		volatile @Nullable Throwable unexpected;

		private final NixlAgent agent;

		private final PeerProcess peer;

		private final MemorySegment local;

		private final long block;

		private final MemorySegment readExpected;

		private final Duration perTransfer;

		private final int afterDeath;

		TransferStream(NixlAgent agent, PeerProcess peer, MemorySegment local, long block, MemorySegment readExpected,
				Duration perTransfer, int warmUp, int afterDeath) {
			this.agent = agent;
			this.peer = peer;
			this.local = local;
			this.block = block;
			this.readExpected = readExpected;
			this.perTransfer = perTransfer;
			this.warmedUp = new CountDownLatch(warmUp);
			this.afterDeath = afterDeath;
		}

		@Override
		public void run() {
			try {
				int startedAfterDeath = 0;
				for (int i = 0; !this.stopped && startedAfterDeath < this.afterDeath; i++) {
					long goneAt = this.peerGoneAt.get();
					if (goneAt != 0) {
						startedAfterDeath++;
					}
					Outcome outcome = transfer(i);
					this.outcomes.add(outcome);
					if (outcome.failure() == null) {
						this.warmedUp.countDown();
					}
				}
			}
			catch (RuntimeException | Error ex) {
				this.unexpected = ex;
			}
			finally {
				while (this.warmedUp.getCount() > 0) {
					this.warmedUp.countDown();
				}
			}
		}

		private Outcome transfer(int index) {
			XferOp op = (index % 2 == 0) ? XferOp.READ : XferOp.WRITE;
			long offset = (op == XferOp.READ) ? 0 : this.block;
			MemorySegment localBlock = this.local.asSlice(offset, this.block);
			if (op == XferOp.READ) {
				localBlock.fill((byte) 0);
			}
			long startedAt = System.nanoTime();
			Transfer transfer = null;
			try {
				transfer = this.agent.transfer(op, DescriptorList.of(localBlock), remote(this.peer, offset, this.block),
						this.peer.name(), null);
				transfer.await(this.perTransfer);
				long endedAt = System.nanoTime();
				boolean verified = op == XferOp.WRITE || Bytes.same(localBlock, this.readExpected);
				return new Outcome(index, op, startedAt, endedAt, null, transfer.state(), "", verified);
			}
			catch (NixlException ex) {
				return new Outcome(index, op, startedAt, System.nanoTime(), ex.status(),
						(transfer != null) ? transfer.state() : null, ex.getMessage(), false);
			}
			finally {
				if (transfer != null) {
					transfer.close();
				}
			}
		}

	}

	@ParameterizedTest
	@EnumSource(PeerTransports.class)
	@Timeout(value = 300, unit = TimeUnit.SECONDS)
	void aPeerKilledMidStreamFailsEveryLaterTransferAndTheAgentRecovers(PeerTransports transports) throws Exception {
		long block = 4 * MiB;
		long peerSeed = 41;
		int warmUp = 20;
		int afterDeath = 8;
		Duration perTransfer = Duration.ofSeconds(15);
		String deadName = uniqueName("peer");
		PeerProcess peer = peer(deadName, 2 * block, peerSeed, transports);
		// a transfer in flight to a dead peer ends STALLED at the latest, should NIXL
		// never report
		NixlAgent agent = agent(builder -> builder.stallTimeout(Duration.ofSeconds(5)));
		MemorySegment local = memory(2 * block, 1);
		agent.register(local);
		agent.loadRemoteMetadata(peer.metadata());
		TransferStream stream = new TransferStream(agent, peer, local, block,
				memory(2 * block, peerSeed).asSlice(0, block), perTransfer, warmUp, afterDeath);
		Thread thread = Thread.ofPlatform().daemon(true).name("transfer-stream").start(stream);
		long killedAt;
		try {
			assertThat(stream.warmedUp.await(120, TimeUnit.SECONDS)).as("%d transfers before the kill", warmUp)
				.isTrue();
			killedAt = System.nanoTime();
			peer.kill();
			stream.peerGoneAt.set(System.nanoTime());
			// every transfer ends by its own deadline, so the stream ends after
			// afterDeath more of them
			assertThat(thread.join(perTransfer.multipliedBy(afterDeath + 1))).as("the transfer stream ended").isTrue();
		}
		finally {
			stream.stopped = true;
		}
		assertThat(stream.unexpected).as("failures other than NixlException").isNull();

		long goneAt = stream.peerGoneAt.get();
		List<Outcome> before = stream.outcomes.stream().filter(o -> o.endedAt() < killedAt).toList();
		List<Outcome> after = stream.outcomes.stream().filter(o -> o.startedAt() > goneAt).toList();
		boolean stillKnown = agent.hasRemoteMetadata(deadName);
		report(transports, stream.outcomes, killedAt, goneAt, stillKnown);
		assertThat(before).hasSizeGreaterThanOrEqualTo(warmUp)
			.allSatisfy(
					o -> assertThat(o.failure()).as("transfer %d before the kill: %s", o.index(), o.detail()).isNull());
		assertThat(stream.outcomes).filteredOn(o -> o.failure() == null)
			.allSatisfy(o -> assertThat(o.verified()).as("transfer %d moved the right bytes", o.index()).isTrue());
		assertThat(after).hasSizeGreaterThanOrEqualTo(afterDeath)
			.allSatisfy(o -> assertThat(o.failure()).as("transfer %d (%s) after the peer died", o.index(), o.op())
				.isNotNull());
		assertThat(agent.inFlightTransfers()).as("nothing left in flight").isEmpty();
		assertThat(agent.registrations()).allSatisfy(r -> assertThat(r.inFlightTransfers()).isZero());

		// the agent keeps working: forget the dead peer, then talk to a new one and to a
		// restarted one
		assertThat(agent.remoteAgents().contains(deadName)).as("listed as NIXL knows it").isEqualTo(stillKnown);
		if (stillKnown) {
			agent.invalidateRemoteMetadata(deadName);
		}
		assertThat(agent.hasRemoteMetadata(deadName)).isFalse();
		assertThat(agent.remoteAgents()).doesNotContain(deadName);
		PeerProcess other = peer(uniqueName("peer"), 2 * block, 42, transports);
		verifiedRoundTrip(agent, local, other, 43, 44);
		PeerProcess restarted = peer(deadName, 2 * block, 45, transports);
		assertThat(agent.loadRemoteMetadata(restarted.metadata())).isEqualTo(deadName);
		verifiedRoundTrip(agent, local, restarted, 46, 47);
		assertThat(agent.inFlightTransfers()).isEmpty();
	}

	private void verifiedRoundTrip(NixlAgent agent, MemorySegment local, PeerProcess peer, long writeSeed,
			long readSeed) {
		if (!agent.hasRemoteMetadata(peer.name())) {
			assertThat(agent.loadRemoteMetadata(peer.metadata())).isEqualTo(peer.name());
		}
		Bytes.fill(local, writeSeed);
		try (Transfer write = agent.transfer(XferOp.WRITE, DescriptorList.of(local), peer.region(), peer.name(),
				null)) {
			write.await(WAIT);
		}
		assertThat(peer.crc()).as("%s after the WRITE", peer.name()).isEqualTo(PeerMain.crc(local));
		peer.fill(readSeed);
		try (Transfer read = agent.transfer(XferOp.READ, DescriptorList.of(local), peer.region(), peer.name(), null)) {
			read.await(WAIT);
		}
		assertThat(Bytes.hasPattern(local, readSeed)).as("READ from %s", peer.name()).isTrue();
		assertThat(PeerMain.crc(local)).isEqualTo(peer.crc());
	}

	/** Prints what NIXL did after the kill, for the build log. */
	private static void report(PeerTransports transports, List<Outcome> outcomes, long killedAt, long goneAt,
			boolean stillKnown) {
		Map<String, Integer> statuses = new TreeMap<>();
		Outcome firstError = null;
		for (Outcome o : outcomes) {
			if (o.endedAt() > killedAt) {
				String key = o.op() + " " + ((o.failure() != null) ? o.failure() + "/" + o.state() : "COMPLETED");
				statuses.merge(key, 1, Integer::sum);
			}
			if (firstError == null && o.failure() != null) {
				firstError = o;
			}
		}
		StringBuilder text = new StringBuilder("peer transports ").append(transports)
			.append(", after SIGKILL (peer gone ")
			.append(millis(goneAt - killedAt))
			.append(" ms after the kill): ")
			.append(statuses)
			.append("; metadata of the dead peer still loaded: ")
			.append(stillKnown);
		if (firstError != null) {
			text.append("; first error ")
				.append(millis(firstError.endedAt() - killedAt))
				.append(" ms after the kill, ")
				.append(millis(firstError.endedAt() - firstError.startedAt()))
				.append(" ms after its start: ")
				.append(firstError.detail());
		}
		int shown = 0;
		for (Outcome o : outcomes) {
			if (o.endedAt() > killedAt && shown++ < 10) {
				text.append("\n  #")
					.append(o.index())
					.append(' ')
					.append(o.op())
					.append(" started ")
					.append(millis(o.startedAt() - killedAt))
					.append(" ms, took ")
					.append(millis(o.endedAt() - o.startedAt()))
					.append(" ms: ")
					.append((o.failure() != null) ? o.detail() : "COMPLETED");
			}
		}
		System.out.println(text);
	}

	private static long millis(long nanos) {
		return TimeUnit.NANOSECONDS.toMillis(nanos);
	}

	// ---------------------------------------------------------------------------------------
	// a peer stopped with SIGSTOP: without cross-memory attach, a transfer with it stays
	// in flight

	/**
	 * A stopped peer without CMA, an agent that knows it, and twice the peer's size of
	 * local memory: transfers under test use the first half; the spare half checks that
	 * the agent works afterwards, apart from where a released request's late data might
	 * still land.
	 */
	private record Paused(NixlAgent agent, PeerProcess peer, MemorySegment local, Registration registration, long block,
			long seed) {

		MemorySegment subject() {
			return this.local.asSlice(0, this.block);
		}

		MemorySegment spare() {
			return this.local.asSlice(this.block, this.block);
		}

	}

	/**
	 * Warms the connection up with a verified READ into the spare half, then stops the
	 * peer.
	 */
	private Paused pausedPeer(Consumer<AgentConfig.Builder> customizer, long seed) throws IOException {
		long block = 8 * MiB;
		PeerProcess peer = peer(uniqueName("peer"), block, seed, PeerTransports.NO_CMA);
		NixlAgent agent = agent(customizer);
		MemorySegment local = memory(2 * block, 1);
		Registration registration = agent.register(local);
		agent.loadRemoteMetadata(peer.metadata());
		Paused p = new Paused(agent, peer, local, registration, block, seed);
		readIntoSpare(p, seed);
		peer.pause();
		return p;
	}

	private void readIntoSpare(Paused p, long expectedSeed) {
		p.spare().fill((byte) 0);
		try (Transfer read = p.agent.transfer(XferOp.READ, DescriptorList.of(p.spare()), p.peer.region(), p.peer.name(),
				null)) {
			read.await(WAIT);
		}
		assertThat(Bytes.hasPattern(p.spare(), expectedSeed)).as("READ into the spare half").isTrue();
	}

	/**
	 * After resume: the agent and the connection work again, checked with fresh data both
	 * ways.
	 */
	private void worksAgain(Paused p, long seed) {
		p.peer.fill(seed);
		readIntoSpare(p, seed);
		assertThat(PeerMain.crc(p.spare())).isEqualTo(p.peer.crc());
		Bytes.fill(p.spare(), seed + 1);
		try (Transfer write = p.agent.transfer(XferOp.WRITE, DescriptorList.of(p.spare()), p.peer.region(),
				p.peer.name(), null)) {
			write.await(WAIT);
		}
		assertThat(p.peer.crc()).as("peer after a WRITE").isEqualTo(PeerMain.crc(p.spare()));
	}

	@ParameterizedTest
	@EnumSource(XferOp.class)
	@Timeout(value = 180, unit = TimeUnit.SECONDS)
	void aTransferWithAPausedPeerStaysInFlightAndPinsItsMemoryUntilThePeerResumes(XferOp op) throws IOException {
		Paused p = pausedPeer(builder -> {
		}, 51);
		if (op == XferOp.READ) {
			p.subject().fill((byte) 0);
		}
		else {
			Bytes.fill(p.subject(), 52);
		}
		Transfer transfer = p.agent.createTransfer(op, DescriptorList.of(p.subject()), p.peer.region(), p.peer.name(),
				null);
		CompletableFuture<Transfer> done = transfer.post();
		try {
			assertThat(transfer.state()).isEqualTo(TransferState.IN_PROGRESS);
			assertThat(done).isNotDone();
			assertThat(p.agent.inFlightTransfers()).containsExactly(transfer);
			assertThat(p.registration.inFlightTransfers()).isEqualTo(1);
			NixlException busy = catchThrowableOfType(NixlException.class, p.registration::close);
			assertThat(busy).as("closing the registration under the %s", op).isNotNull();
			assertThat(busy.status()).isEqualTo(NixlStatus.BUSY);
			assertThat(p.registration.isOpen()).isTrue();
		}
		finally {
			p.peer.resume();
		}
		transfer.await(WAIT);
		assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
		if (op == XferOp.READ) {
			assertThat(Bytes.hasPattern(p.subject(), p.seed())).isTrue();
		}
		assertThat(p.peer.crc()).isEqualTo(PeerMain.crc(p.subject()));
		assertThat(p.agent.inFlightTransfers()).isEmpty();
		assertThat(p.registration.inFlightTransfers()).isZero();
		transfer.close();
		p.registration.close();
		assertThat(p.registration.isOpen()).isFalse();
	}

	@Test
	@Timeout(value = 180, unit = TimeUnit.SECONDS)
	void aReadFromAPausedPeerEndsStalledAtTheStallLimitAndTheAgentWorksAfterResume() throws IOException {
		// far above what the warm-up and the checks after resume take, yet short to wait
		// for
		Paused p = pausedPeer(builder -> builder.stallTimeout(Duration.ofSeconds(2)), 61);
		Transfer read;
		try {
			read = p.agent.transfer(XferOp.READ, DescriptorList.of(p.subject()), p.peer.region(), p.peer.name(), null);
			NixlException stalled = catchThrowableOfType(NixlException.class, () -> read.await(WAIT));
			assertThat(stalled).as("the READ from the stopped peer ends").isNotNull();
			assertThat(stalled.status()).isEqualTo(NixlStatus.STALLED);
			assertThat(stalled.remoteAgent()).isEqualTo(p.peer.name());
			assertThat(read.state()).isEqualTo(TransferState.STALLED);
			assertThat(read.completion()).isCompletedExceptionally();
			assertThat(failureOf(read.completion()).status()).isEqualTo(NixlStatus.STALLED);
			assertThat(p.registration.inFlightTransfers()).isZero();
			assertThat(p.agent.inFlightTransfers()).isEmpty();
		}
		finally {
			p.peer.resume();
		}
		read.close();
		worksAgain(p, 62);
		p.registration.close();
		assertThat(p.registration.isOpen()).isFalse();
	}

	@Test
	@Timeout(value = 180, unit = TimeUnit.SECONDS)
	void cancellingAReadInFlightToAPausedPeerEndsItCancelledAndTheAgentWorksAfterResume() throws IOException {
		Paused p = pausedPeer(builder -> {
		}, 71);
		Transfer read;
		try {
			read = p.agent.transfer(XferOp.READ, DescriptorList.of(p.subject()), p.peer.region(), p.peer.name(), null);
			assertThat(read.state()).isEqualTo(TransferState.IN_PROGRESS);
			read.cancel();
			assertThat(read.state()).isEqualTo(TransferState.CANCELLED);
			NixlException cancelled = catchThrowableOfType(NixlException.class, () -> read.await(WAIT));
			assertThat(cancelled).isNotNull();
			assertThat(cancelled.status()).isEqualTo(NixlStatus.CANCELLED);
			assertThat(failureOf(read.completion()).status()).isEqualTo(NixlStatus.CANCELLED);
			assertThat(p.registration.inFlightTransfers()).isZero();
			assertThat(p.agent.inFlightTransfers()).isEmpty();
		}
		finally {
			p.peer.resume();
		}
		read.close();
		worksAgain(p, 72);
		p.registration.close();
		assertThat(p.registration.isOpen()).isFalse();
	}

	private static NixlException failureOf(CompletableFuture<Transfer> future) {
		try {
			future.join();
		}
		catch (CompletionException ex) {
			if (ex.getCause() instanceof NixlException nixl) {
				return nixl;
			}
			throw ex;
		}
		throw new AssertionError("the future completed normally");
	}

}
