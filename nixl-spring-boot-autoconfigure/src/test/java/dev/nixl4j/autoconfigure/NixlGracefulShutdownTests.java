package dev.nixl4j.autoconfigure;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.lifecycle.AgentLifecycle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Stopping an application while its agent is busy: posts already accepted finish and
 * their data is intact, later posts are refused with a clear error, the metadata is
 * withdrawn, and the agent leaves no registration, thread or native handle behind.
 */
class NixlGracefulShutdownTests {

	private static final int WORKERS = 4;

	private static final int SLOT = 4 << 20;

	private static final Duration WAIT = Duration.ofSeconds(30);

	@ParameterizedTest
	@ValueSource(strings = { "embedded", "native" })
	void shutdownUnderLoadLosesNoCompletedTransferAndLeavesNothingBehind(String engine) throws Exception {
		if (engine.equals("native")) {
			NativeNixl.require();
		}
		InMemoryMetadataExchange registry = new InMemoryMetadataExchange();
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withBean("registry", MetadataExchange.class, () -> new NixlAutoConfigurationTests.NamedExchange(registry))
			// every embedded transfer goes through TCP, so transfers take long enough to
			// overlap the stop
			.withPropertyValues("nixl.agent.engine=" + engine, "nixl.embedded.in-process-copies=false");
		try (Arena arena = Arena.ofShared()) {
			runner.withPropertyValues("nixl.agent.name=shutdown-target-" + engine).run(targetContext -> {
				NixlAgent target = targetContext.getBean(NixlAgent.class);
				MemorySegment remote = arena.allocate((long) WORKERS * SLOT, 4096);
				target.register(remote);
				runner.withPropertyValues("nixl.agent.name=shutdown-initiator-" + engine).run(context -> {
					NixlAgent initiator = context.getBean(NixlAgent.class);
					String name = initiator.name();
					MemorySegment local = arena.allocate(2L * WORKERS * SLOT, 4096);
					Registration registration = initiator.register(local);
					initiator.loadRemoteMetadata(target.localMetadata());
					assertThat(registry.isPublished(name)).isTrue();

					Load load = new Load(initiator, target.name(), local, remote);
					load.awaitCompletions(20 * WORKERS);
					context.close();
					List<Outcome> outcomes = load.finish();

					assertThat(load.failures).as("accepted posts that did not complete").isEmpty();
					assertThat(load.refusals).as("posts after shutdown began are refused").isNotEmpty();
					assertThat(load.refusals).allSatisfy(
							refusal -> assertThat(refusal.status()).isIn(NixlStatus.UNAVAILABLE, NixlStatus.CLOSED));
					for (Outcome outcome : outcomes) {
						MemorySegment landed = remote.asSlice((long) outcome.worker * SLOT, SLOT);
						// a worker the scheduler never ran before the stop has written
						// nothing
						MemorySegment expected = (outcome.lastCompletedRound < 0) ? arena.allocate(SLOT)
								: pattern(arena, outcome.worker, outcome.lastCompletedRound % 2);
						assertThat(landed.mismatch(expected))
							.as("worker %d: the last completed round (%d) landed intact", outcome.worker,
									outcome.lastCompletedRound)
							.isEqualTo(-1);
					}
					assertThat(initiator.isOpen()).isFalse();
					assertThat(registration.isOpen()).isFalse();
					assertThat(registry.isPublished(name)).as("metadata withdrawn").isFalse();
					awaitNoThreadsNaming(name);
				});
			});
		}
	}

	@Test
	void aPostWhileStoppingIsRefusedAsShuttingDownAndTheMetadataIsWithdrawnFirst() {
		InMemoryMetadataExchange registry = new InMemoryMetadataExchange();
		try (Arena arena = Arena.ofShared();
				NixlAgent target = NixlAgent.create(AgentConfig.builder("stop-target").engine(Engine.EMBEDDED).build());
				NixlAgent initiator = NixlAgent
					.create(AgentConfig.builder("stop-initiator").engine(Engine.EMBEDDED).build())) {
			MemorySegment local = arena.allocate(4096);
			MemorySegment remote = arena.allocate(4096);
			target.register(remote);
			initiator.register(local);
			initiator.loadRemoteMetadata(target.localMetadata());
			List<String> seenWhileStopping = new ArrayList<>();
			// closed by the lifecycle after the drain and before the agent: a last post
			// comes in here
			AutoCloseable lateCaller = () -> {
				seenWhileStopping.add("published: " + registry.isPublished(initiator.name()));
				try (Transfer late = initiator.createTransfer(XferOp.WRITE, DescriptorList.of(local),
						DescriptorList.of(remote), target.name(), null)) {
					late.post();
					seenWhileStopping.add("posted");
				}
				catch (NixlException ex) {
					seenWhileStopping.add(ex.status() + ": " + ex.getMessage());
				}
			};
			NixlLifecycle lifecycle = new NixlLifecycle(AgentLifecycle.builder(initiator)
				.exchange(registry)
				.shutdownTimeout(WAIT)
				.closeBeforeAgent(List.of(lateCaller))
				.build());
			lifecycle.start();
			assertThat(registry.isPublished(initiator.name())).isTrue();
			lifecycle.stop();
			assertThat(seenWhileStopping).hasSize(2);
			assertThat(seenWhileStopping.get(0)).isEqualTo("published: false");
			assertThat(seenWhileStopping.get(1)).startsWith("UNAVAILABLE: ").contains("shutting down");
			assertThat(lifecycle.isRunning()).isFalse();
			assertThat(initiator.isOpen()).isFalse();
		}
	}

	private static MemorySegment pattern(Arena arena, int worker, int round) {
		MemorySegment segment = arena.allocate(SLOT);
		fill(segment, worker, round);
		return segment;
	}

	private static void fill(MemorySegment segment, int worker, int round) {
		long seed = ((long) worker << 32) | round;
		for (long i = 0; i < segment.byteSize(); i += 8) {
			segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, seed * 0x9E3779B97F4A7C15L + i);
		}
	}

	private static void awaitNoThreadsNaming(String agent) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		while (Thread.getAllStackTraces().keySet().stream().anyMatch(thread -> thread.getName().contains(agent))) {
			assertThat(System.nanoTime()).as("threads of agent %s end", agent).isLessThan(deadline);
			Thread.onSpinWait();
		}
	}

	private record Outcome(int worker, int lastCompletedRound) {
	}

	/**
	 * Workers that each write rounds of a pattern into their own slot until posts are
	 * refused.
	 */
	private static final class Load {

		private final ExecutorService executor = Executors.newFixedThreadPool(WORKERS);

		private final List<Future<Outcome>> workers = new ArrayList<>();

		private final ConcurrentLinkedQueue<NixlException> refusals = new ConcurrentLinkedQueue<>();

		private final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();

		private final AtomicInteger completions = new AtomicInteger();

		private final CountDownLatch enough;

		private volatile int wanted = Integer.MAX_VALUE;

		Load(NixlAgent initiator, String target, MemorySegment local, MemorySegment remote) {
			this.enough = new CountDownLatch(1);
			for (int w = 0; w < WORKERS; w++) {
				int worker = w;
				MemorySegment[] sources = { local.asSlice(2L * worker * SLOT, SLOT),
						local.asSlice((2L * worker + 1) * SLOT, SLOT) };
				fill(sources[0], worker, 0);
				fill(sources[1], worker, 1);
				this.workers.add(this.executor
					.submit(() -> run(initiator, target, sources, remote.asSlice((long) worker * SLOT, SLOT), worker)));
			}
		}

		/**
		 * Round r writes the source of r's parity, so the workers spend their time in
		 * transfers.
		 */
		private Outcome run(NixlAgent initiator, String target, MemorySegment[] sources, MemorySegment remote,
				int worker) {
			int lastCompleted = -1;
			for (int round = 0;; round++) {
				MemorySegment local = sources[round % 2];
				Transfer transfer;
				try {
					transfer = initiator.createTransfer(XferOp.WRITE, DescriptorList.of(local),
							DescriptorList.of(remote), target, null);
				}
				catch (NixlException ex) {
					this.refusals.add(ex);
					return new Outcome(worker, lastCompleted);
				}
				try (transfer) {
					try {
						transfer.post();
					}
					catch (NixlException ex) {
						this.refusals.add(ex);
						return new Outcome(worker, lastCompleted);
					}
					try {
						transfer.await(WAIT);
					}
					catch (RuntimeException ex) {
						this.failures.add(ex);
						return new Outcome(worker, lastCompleted);
					}
				}
				lastCompleted = round;
				if (this.completions.incrementAndGet() >= this.wanted) {
					this.enough.countDown();
				}
			}
		}

		void awaitCompletions(int count) throws InterruptedException {
			this.wanted = count;
			if (this.completions.get() >= count) {
				return;
			}
			assertThat(this.enough.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("%d transfers completed", count)
				.isTrue();
		}

		List<Outcome> finish() throws Exception {
			List<Outcome> outcomes = new ArrayList<>();
			for (Future<Outcome> worker : this.workers) {
				outcomes.add(worker.get(WAIT.toSeconds(), TimeUnit.SECONDS));
			}
			this.executor.shutdown();
			return outcomes;
		}

	}

}
