package dev.nixl4j.autoconfigure;

import java.time.Duration;
import java.util.Arrays;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.LeaseOutcome;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.micrometer.NixlKvMetrics;
import dev.nixl4j.testsupport.Eventually;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the KV meters add to a pull: two consumers of one producer, one with
 * {@link NixlKvMetrics} bound and one without, pull in interleaved rounds and the figures
 * are printed (no timed assertion). {@code -Dkvmeters.rounds} and
 * {@code -Dkvmeters.pulls} make the run longer.
 */
class NixlKvMetersCostTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	@Test
	void pullsWithAndWithoutMetersInInterleavedRounds() {
		int rounds = Integer.getInteger("kvmeters.rounds", 3);
		int pulls = Integer.getInteger("kvmeters.pulls", 200);
		KvCacheLayout layout = KvCacheLayout.builder()
			.layers(2)
			.blocks(64)
			.blockSize(16)
			.kvHeads(2)
			.headDim(64)
			.build();
		InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();
		long pid = ProcessHandle.current().pid();
		try (NixlAgent pa = NixlAgent.create(AgentConfig.builder("p-" + pid).engine(Engine.EMBEDDED).build());
				PagedKvCache pc = PagedKvCache.allocate(pa, layout);
				MetadataPublication pp = MetadataPublication.builder(exchange, pa).build();
				KvProducer producer = KvProducer.builder(pc).peers(PeerLoader.of(exchange)).build();
				NixlAgent a1 = NixlAgent.create(AgentConfig.builder("c1-" + pid).engine(Engine.EMBEDDED).build());
				PagedKvCache c1 = PagedKvCache.allocate(a1, layout);
				MetadataPublication p1 = MetadataPublication.builder(exchange, a1).build();
				NixlAgent a2 = NixlAgent.create(AgentConfig.builder("c2-" + pid).engine(Engine.EMBEDDED).build());
				PagedKvCache c2 = PagedKvCache.allocate(a2, layout);
				MetadataPublication p2 = MetadataPublication.builder(exchange, a2).build()) {
			pp.publish();
			p1.publish();
			p2.publish();
			KvConsumer plain = KvConsumer.builder(c1).peers(PeerLoader.of(exchange)).build();
			KvConsumer metered = KvConsumer.builder(c2).peers(PeerLoader.of(exchange)).build();
			plain.connect(producer.handle());
			metered.connect(producer.handle());
			SimpleMeterRegistry registry = new SimpleMeterRegistry();
			NixlKvMetrics.builder().consumer(metered).build().bindTo(registry);
			int[] blocks = pc.allocator().allocate(2);
			int[] l1 = c1.allocator().allocate(2);
			int[] l2 = c2.allocator().allocate(2);
			int warmup = 100;
			run(producer, plain, blocks, l1, warmup, "warm-plain");
			run(producer, metered, blocks, l2, warmup, "warm-metered");
			for (int r = 0; r < rounds; r++) {
				double[] without = run(producer, plain, blocks, l1, pulls, "plain-" + r);
				double[] with = run(producer, metered, blocks, l2, pulls, "metered-" + r);
				System.out.printf(
						"kv meters, round %d of %d pulls of 2 blocks (%d bytes): without meters median %.1f us, mean %.1f us;"
								+ " with meters median %.1f us, mean %.1f us%n",
						r, pulls, 2L * layout.regionCount() * layout.blockLength(), without[0], without[1], with[0],
						with[1]);
			}
			assertThat(registry.get("nixl.kv.pull.duration").tags("outcome", "completed").timer().count())
				.isEqualTo(warmup + (long) rounds * pulls);
			assertThat(registry.get("nixl.kv.confirmation.duration").timer().count())
				.isEqualTo(warmup + (long) rounds * pulls);
			// a lease leaves the producer's table before its outcome is counted
			long leases = 2L * (warmup + (long) rounds * pulls);
			Eventually.until(WAIT, "every lease's outcome counted",
					() -> producer.endedLeases(LeaseOutcome.COMPLETED) == leases);
			assertThat(producer.endedLeases(LeaseOutcome.COMPLETED)).isEqualTo(leases);
		}
	}

	/**
	 * Pulls {@code n} leases one after the other.
	 * @return the median and the mean pull time, in microseconds
	 */
	private static double[] run(KvProducer producer, KvConsumer consumer, int[] blocks, int[] local, int n,
			String tag) {
		long[] nanos = new long[n];
		for (int i = 0; i < n; i++) {
			// the same blocks every round: the lease takes over a reference of its own
			producer.cache().allocator().retain(blocks);
			KvLease lease = producer.lease(tag + "-" + i, blocks);
			long start = System.nanoTime();
			consumer.pull(lease.params(), local, WAIT);
			nanos[i] = System.nanoTime() - start;
			Eventually.until(WAIT, "the lease ended", () -> producer.activeLeases() == 0);
		}
		Arrays.sort(nanos);
		return new double[] { nanos[n / 2] / 1e3, Arrays.stream(nanos).average().orElse(0) / 1e3 };
	}

}
