package dev.nixl4j;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.PeerMain;
import dev.nixl4j.testsupport.PeerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Draining a plain Java agent: posts accepted before the drain finish with their data
 * intact, posts after it are refused as shutting down, and a drain that cannot finish
 * returns at its deadline naming what was left.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DrainTest {

	private static final int WORKERS = 4;

	private static final int SLOT = 1 << 20;

	private static final Duration WAIT = Duration.ofSeconds(30);

	@Test
	void drainUnderLoadLetsAcceptedPostsCompleteAndRefusesLaterOnes() throws Exception {
		// every transfer goes through TCP, so transfers take long enough to overlap the
		// drain
		EmbeddedOptions tcp = EmbeddedOptions.builder().inProcessCopies(false).build();
		try (Arena arena = Arena.ofShared();
				NixlAgent target = NixlAgent
					.create(AgentConfig.builder("drain-target").engine(Engine.EMBEDDED).embedded(tcp).build());
				NixlAgent initiator = NixlAgent
					.create(AgentConfig.builder("drain-initiator").engine(Engine.EMBEDDED).embedded(tcp).build())) {
			MemorySegment remote = arena.allocate((long) WORKERS * SLOT, 4096);
			MemorySegment local = arena.allocate(2L * WORKERS * SLOT, 4096);
			target.register(remote);
			initiator.register(local);
			initiator.loadRemoteMetadata(target.localMetadata());
			Drain drain = Drain.attach(initiator);

			Load load = new Load(initiator, drain, target.name(), local, remote);
			load.awaitCompletions(10 * WORKERS);
			DrainResult result = drain.drain(WAIT);
			load.finish();

			assertThat(result.isComplete()).as("everything in flight ended: %s", result).isTrue();
			assertThat(result.elapsed()).isLessThanOrEqualTo(WAIT);
			assertThat(load.failures).as("accepted posts that did not complete with their data").isEmpty();
			assertThat(load.completions.get()).isGreaterThanOrEqualTo(10 * WORKERS);
			assertThat(load.refusals).as("every worker's first post after the drain began").hasSize(WORKERS);
			assertThat(load.refusals).allSatisfy(refusal -> {
				assertThat(refusal.status()).isEqualTo(NixlStatus.UNAVAILABLE);
				assertThat(refusal.getMessage()).contains("shutting down").contains(target.name());
			});
			assertThat(load.acceptedWhileDraining.get()).as("posts begun after the drain began and accepted").isZero();
			assertThat(initiator.inFlightTransfers()).isEmpty();
		}
	}

	@Test
	void aDrainThatCannotFinishReturnsAtItsDeadlineNamingWhatWasLeft() throws Exception {
		int size = 1 << 20;
		try (Arena arena = Arena.ofShared();
				NixlAgent initiator = NixlAgent
					.create(AgentConfig.builder("drain-stalled").engine(Engine.EMBEDDED).build());
				PeerProcess peer = PeerProcess.start("drain-stalled-peer", size, 42, Map.of(), Engine.EMBEDDED)) {
			MemorySegment local = Bytes.pattern(arena, size, 1);
			initiator.register(local);
			initiator.loadRemoteMetadata(peer.metadata());
			Drain drain = Drain.attach(initiator);
			StuckParticipant stuck = new StuckParticipant();
			peer.pause();
			try (Transfer read = initiator.transfer(XferOp.READ, DescriptorList.of(local), peer.region(), peer.name(),
					null)) {
				assertThat(read.state()).as("a READ from a paused peer is in flight")
					.isEqualTo(TransferState.IN_PROGRESS);
				Duration deadline = Duration.ofMillis(500);

				DrainResult result = drain.drain(deadline, List.of(stuck));

				assertThat(result.isComplete()).isFalse();
				assertThat(result.transfersLeft()).containsExactly(read);
				assertThat(result.participantsLeft()).singleElement().satisfies(pending -> {
					assertThat(pending.participant()).isSameAs(stuck);
					assertThat(pending.work()).isEqualTo("1 stuck job");
				});
				assertThat(result.elapsed()).isGreaterThanOrEqualTo(deadline).isLessThan(WAIT);
				assertThat(stuck.waitedNanos).as("the participant got only what was left of the timeout")
					.isLessThan(deadline.toNanos());
				assertThat(drain.isDraining()).isTrue();

				peer.resume();
				read.await(WAIT);
				assertThat(PeerMain.crc(local)).isEqualTo(peer.crc());
				NixlException late = catchThrowableOfType(NixlException.class,
						() -> initiator
							.transfer(XferOp.READ, DescriptorList.of(local), peer.region(), peer.name(), null)
							.close());
				assertThat(late.status()).isEqualTo(NixlStatus.UNAVAILABLE);
				assertThat(drain.drain(Duration.ZERO).isComplete()).as("nothing left once the read ended").isTrue();
			}
		}
	}

	/** A participant whose work never ends. */
	private static final class StuckParticipant implements DrainParticipant {

		volatile long waitedNanos = -1;

		@Override
		public boolean awaitDrained(Duration timeout) {
			this.waitedNanos = timeout.toNanos();
			try {
				Thread.sleep(timeout);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return false;
		}

		@Override
		public String pendingWork() {
			return "1 stuck job";
		}

	}

	/**
	 * Workers that each write rounds of a pattern into their own slot of the target until
	 * a post is refused, checking the slot after every completed round.
	 */
	private static final class Load {

		private final ExecutorService executor = Executors.newFixedThreadPool(WORKERS);

		private final List<Future<?>> workers = new ArrayList<>();

		final ConcurrentLinkedQueue<NixlException> refusals = new ConcurrentLinkedQueue<>();

		final ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();

		final AtomicInteger completions = new AtomicInteger();

		final AtomicInteger acceptedWhileDraining = new AtomicInteger();

		private final CountDownLatch enough = new CountDownLatch(1);

		private volatile int wanted = Integer.MAX_VALUE;

		Load(NixlAgent initiator, Drain drain, String target, MemorySegment local, MemorySegment remote) {
			for (int w = 0; w < WORKERS; w++) {
				MemorySegment[] sources = { local.asSlice(2L * w * SLOT, SLOT),
						local.asSlice((2L * w + 1) * SLOT, SLOT) };
				Bytes.fill(sources[0], 2L * w);
				Bytes.fill(sources[1], 2L * w + 1);
				MemorySegment slot = remote.asSlice((long) w * SLOT, SLOT);
				int worker = w;
				this.workers.add(this.executor.submit(() -> run(initiator, drain, target, sources, slot, worker)));
			}
		}

		private void run(NixlAgent initiator, Drain drain, String target, MemorySegment[] sources, MemorySegment slot,
				int worker) {
			// bounded: the drain comes after a few dozen rounds
			for (int round = 0; round < 100_000; round++) {
				MemorySegment source = sources[round % 2];
				try (Transfer transfer = initiator.createTransfer(XferOp.WRITE, DescriptorList.of(source),
						DescriptorList.of(slot), target, null)) {
					boolean draining = drain.isDraining();
					try {
						transfer.post();
					}
					catch (NixlException ex) {
						this.refusals.add(ex);
						return;
					}
					if (draining) {
						this.acceptedWhileDraining.incrementAndGet();
					}
					try {
						transfer.await(WAIT);
					}
					catch (RuntimeException ex) {
						this.failures.add("worker " + worker + " round " + round + ": " + ex);
						return;
					}
					if (!Bytes.same(slot, source)) {
						this.failures.add("worker " + worker + " round " + round + ": data differs");
						return;
					}
				}
				if (this.completions.incrementAndGet() >= this.wanted) {
					this.enough.countDown();
				}
			}
			this.failures.add("worker " + worker + " was never refused");
		}

		void awaitCompletions(int count) throws InterruptedException {
			this.wanted = count;
			if (this.completions.get() < count) {
				assertThat(this.enough.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("%d transfers completed", count)
					.isTrue();
			}
		}

		void finish() throws Exception {
			for (Future<?> worker : this.workers) {
				worker.get(WAIT.toSeconds(), TimeUnit.SECONDS);
			}
			this.executor.shutdown();
		}

	}

}
