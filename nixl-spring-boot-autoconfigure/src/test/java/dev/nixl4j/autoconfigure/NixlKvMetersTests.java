package dev.nixl4j.autoconfigure;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.metrics.NixlMetricsAutoConfiguration;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvIntegrityException;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.metadata.ForwardingMetadataExchange;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.Eventually;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The KV meters move as documented in docs/operations.md ("KV meters"): two applications,
 * a prefill one that leases blocks and a decode one that pulls them, with real transfers
 * whose bytes are checked.
 */
class NixlKvMetersTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final int BLOCKS = 8;

	private final InMemoryMetadataExchange registry = new InMemoryMetadataExchange();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetricsAutoConfiguration.class,
				MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
				CompositeMeterRegistryAutoConfiguration.class))
		.withBean("registry", MetadataExchange.class, () -> new SharedExchange(this.registry))
		.withPropertyValues("nixl.agent.engine=embedded", "nixl.kv.layers=2", "nixl.kv.blocks=" + BLOCKS,
				"nixl.kv.kv-heads=2", "nixl.kv.head-dim=64");

	@Test
	void pullsUnderLoadMoveTheLeaseThePoolAndThePullMeters() {
		int pulls = 20;
		this.runner.run((prefill) -> this.runner.run((decode) -> {
			KvProducer producer = prefill.getBean(KvProducer.class);
			PagedKvCache producerCache = prefill.getBean(PagedKvCache.class);
			KvConsumer consumer = decode.getBean(KvConsumer.class);
			PagedKvCache consumerCache = decode.getBean(PagedKvCache.class);
			consumer.connect(producer.handle());
			MeterRegistry producerMeters = prefill.getBean(MeterRegistry.class);
			MeterRegistry consumerMeters = decode.getBean(MeterRegistry.class);
			long bytesPerPull = 2L * producerCache.layout().regionCount() * producerCache.layout().blockLength();

			int[] blocks = producerCache.allocator().allocate(2);
			assertThat(gauge(producerMeters, "nixl.kv.pool.blocks", "state", "free")).isEqualTo(BLOCKS - 2);
			assertThat(gauge(producerMeters, "nixl.kv.pool.blocks", "state", "used")).isEqualTo(2);
			for (int i = 0; i < pulls; i++) {
				fill(producerCache, blocks, i);
				// the test keeps its own references: the lease takes over one more
				producerCache.allocator().retain(blocks);
				KvLease lease = producer.lease("load-" + i, blocks);
				assertThat(gauge(producerMeters, "nixl.kv.leases.active")).isOne();
				assertThat(gauge(producerMeters, "nixl.kv.pool.blocks", "state", "leased")).isEqualTo(2);
				assertThat(gauge(producerMeters, "nixl.kv.pool.blocks", "state", "used")).isZero();
				int[] local = consumerCache.allocator().allocate(2);
				assertThat(consumer.pull(lease.params(), local, WAIT)).isEqualTo(bytesPerPull);
				check(consumerCache, local, blocks, i);
				consumerCache.allocator().release(local);
				Eventually.until(WAIT, "the lease ended", () -> producer.activeLeases() == 0);
			}

			// meters hold their state objects weakly: what they read must survive a
			// collection
			System.gc();
			Eventually.until(WAIT, "every lease counted as completed",
					() -> counter(producerMeters, "nixl.kv.leases", "outcome", "completed") == pulls);
			assertThat(gauge(producerMeters, "nixl.kv.leases.active")).isZero();
			assertThat(gauge(producerMeters, "nixl.kv.pool.blocks", "state", "leased")).isZero();
			assertThat(counter(producerMeters, "nixl.kv.leases", "outcome", "expired")).isZero();
			Timer pulled = consumerMeters.get("nixl.kv.pull.duration")
				.tags("agent", consumerCache.agent().name(), "outcome", "completed")
				.timer();
			assertThat(pulled.count()).isEqualTo(pulls);
			HistogramSnapshot histogram = pulled.takeSnapshot();
			assertThat(histogram.percentileValues()).extracting(ValueAtPercentile::percentile)
				.containsExactly(0.5, 0.95, 0.99);
			// percentiles are approximate (buckets): positive, and not decreasing
			assertThat(histogram.percentileValues()).extracting((value) -> value.value(TimeUnit.NANOSECONDS))
				.allSatisfy((nanos) -> assertThat(nanos).isPositive())
				.isSorted();
			assertThat(consumerMeters.get("nixl.kv.confirmation.duration").timer().count()).isEqualTo(pulls);
			assertThat(consumerMeters.get("nixl.kv.confirmation.duration").timer().max(TimeUnit.NANOSECONDS))
				.isLessThanOrEqualTo(pulled.max(TimeUnit.NANOSECONDS));
			assertThat(consumerMeters.get("nixl.kv.pull.bytes").summary().count()).isEqualTo(pulls);
			assertThat(consumerMeters.get("nixl.kv.pull.bytes").summary().totalAmount())
				.isEqualTo((double) pulls * bytesPerPull);
			// the producer's reconnect series exists from its first pull, at 0
			assertThat(consumerMeters.find("nixl.kv.reconnects").counters()).singleElement()
				.satisfies((counter) -> assertThat(counter.count()).isZero());
			assertThat(consumerMeters.find("nixl.kv.pull.duration").meters())
				.allSatisfy((meter) -> assertThat(meter.getId().getTags()).extracting("key")
					.containsExactlyInAnyOrder("agent", "outcome"));
		}));
	}

	@Test
	void aLeaseGivenBackIsCountedAsReleased() {
		this.runner.run((prefill) -> this.runner.run((decode) -> {
			KvProducer producer = prefill.getBean(KvProducer.class);
			int[] blocks = prefill.getBean(PagedKvCache.class).allocator().allocate(2);
			KvLease lease = producer.lease("given-back", blocks);
			KvConsumer consumer = decode.getBean(KvConsumer.class);
			consumer.connect(producer.handle());

			assertThat(consumer.release(lease.params())).isTrue();

			MeterRegistry meters = prefill.getBean(MeterRegistry.class);
			Eventually.until(WAIT, "the lease counted as released",
					() -> counter(meters, "nixl.kv.leases", "outcome", "released") == 1);
			assertThat(gauge(meters, "nixl.kv.leases.active")).isZero();
			assertThat(counter(meters, "nixl.kv.leases", "outcome", "completed")).isZero();
		}));
	}

	@Test
	void aReleaseFromAnotherAgentThanTheLeasesConsumerIsCountedAsIgnored() {
		this.runner.run((prefill) -> this.runner.run((decode) -> {
			KvProducer producer = prefill.getBean(KvProducer.class);
			int[] blocks = prefill.getBean(PagedKvCache.class).allocator().allocate(2);
			KvLease lease = producer.lease("guarded", blocks, KvLease.options().consumer("another-decode-worker"));
			KvConsumer consumer = decode.getBean(KvConsumer.class);
			consumer.connect(producer.handle());
			MeterRegistry meters = prefill.getBean(MeterRegistry.class);
			assertThat(counter(meters, "nixl.kv.messages.ignored")).isZero();

			assertThat(consumer.release(lease.params())).isTrue();

			Eventually.until(WAIT, "the release counted as ignored",
					() -> counter(meters, "nixl.kv.messages.ignored") == 1);
			assertThat(gauge(meters, "nixl.kv.leases.active")).isOne();
			assertThat(counter(meters, "nixl.kv.leases", "outcome", "released")).isZero();
			assertThat(gauge(meters, "nixl.kv.answers.pending")).isZero();
			assertThat(counter(meters, "nixl.kv.answers.dropped")).isZero();
		}));
	}

	@Test
	void aProducerRestartCountsOneReconnectTaggedWithTheProducer() {
		String name = "prefill-restarted-" + ProcessHandle.current().pid();
		ApplicationContextRunner prefillRunner = this.runner.withPropertyValues("nixl.agent.name=" + name);
		this.runner.run((decode) -> {
			KvConsumer consumer = decode.getBean(KvConsumer.class);
			MeterRegistry meters = decode.getBean(MeterRegistry.class);
			prefillRunner.run((first) -> pullOnce(first, consumer, decode, 1));
			assertThat(meters.get("nixl.kv.reconnects").tags("producer", name).counter().count()).isZero();

			prefillRunner.run((second) -> pullOnce(second, consumer, decode, 2));

			assertThat(meters.get("nixl.kv.reconnects")
				.tags("agent", decode.getBean(PagedKvCache.class).agent().name(), "producer", name)
				.counter()
				.count()).isOne();
			assertThat(meters.get("nixl.kv.pull.duration").tags("outcome", "completed").timer().count()).isEqualTo(2);
		});
	}

	@Test
	void anIntegrityFailureIsTimedAsSuchAndCounted() {
		ApplicationContextRunner crc = this.runner.withPropertyValues("nixl.kv.integrity=crc32c");
		crc.run((prefill) -> crc.run((decode) -> {
			KvProducer producer = prefill.getBean(KvProducer.class);
			PagedKvCache producerCache = prefill.getBean(PagedKvCache.class);
			int[] blocks = producerCache.allocator().allocate(2);
			fill(producerCache, blocks, 7);
			KvLease lease = producer.lease("tampered", blocks);
			MemorySegment target = producerCache.block(0, blocks[1]);
			target.set(ValueLayout.JAVA_BYTE, 0, (byte) ~target.get(ValueLayout.JAVA_BYTE, 0));
			KvConsumer consumer = decode.getBean(KvConsumer.class);
			consumer.connect(producer.handle());
			MeterRegistry meters = decode.getBean(MeterRegistry.class);

			catchThrowableOfType(KvIntegrityException.class, () -> consumer.pull(lease.params(),
					decode.getBean(PagedKvCache.class).allocator().allocate(2), WAIT));

			assertThat(meters.get("nixl.kv.integrity.failures").functionCounter().count()).isOne();
			assertThat(meters.get("nixl.kv.pull.duration").tags("outcome", "integrity_failed").timer().count()).isOne();
			assertThat(meters.get("nixl.kv.pull.duration").tags("outcome", "completed").timer().count()).isZero();
			assertThat(meters.get("nixl.kv.pull.bytes").summary().count()).isZero();
			assertThat(meters.get("nixl.kv.confirmation.duration").timer().count()).as("the producer answered").isOne();
			Eventually.until(WAIT, "the lease ended",
					() -> counter(prefill.getBean(MeterRegistry.class), "nixl.kv.leases", "outcome", "completed") == 1);
		}));
	}

	@Test
	void aPeerFloodingTheDecodeWorkerIsNamedByTheDroppedNotificationsWhilePullsGoOn() {
		ApplicationContextRunner bounded = this.runner.withPropertyValues("nixl.agent.mailbox-per-sender=4");
		this.runner.run((prefill) -> bounded.run((decode) -> {
			NixlAgent agent = decode.getBean(NixlAgent.class);
			MeterRegistry meters = decode.getBean(MeterRegistry.class);
			KvConsumer consumer = decode.getBean(KvConsumer.class);
			try (NixlAgent flooder = NixlAgent.create(
					AgentConfig.builder("flooder-" + ProcessHandle.current().pid()).engine(Engine.EMBEDDED).build())) {
				flooder.loadRemoteMetadata(agent.localMetadata());
				flood(flooder, agent.name(), 50);
				Eventually.until(WAIT, "46 notifications dropped",
						() -> agent.statistics().notificationsDropped() == 46);
				assertThat(dropped(meters)).isEqualTo(46);
				for (int i = 0; i < 5; i++) {
					pullOnce(prefill, consumer, decode, 10 + i);
				}
				flood(flooder, agent.name(), 50);
				Eventually.until(WAIT, "96 notifications dropped",
						() -> agent.statistics().notificationsDropped() == 96);

				assertThat(dropped(meters)).isEqualTo(96);
				assertThat(counter(meters, "nixl.notifications.dropped", "sender", flooder.name()))
					.as("the flooder's own series, from its first publication")
					.isEqualTo(50);
				assertThat(counter(meters, "nixl.notifications.dropped", "sender", "other")).isEqualTo(46);
			}
			assertThat(meters.get("nixl.kv.pull.duration").tags("outcome", "completed").timer().count()).isEqualTo(5);
			assertThat(meters.find("nixl.kv.pull.duration").tags("outcome", "failed").timer().count()).isZero();
		}));
	}

	private static void flood(NixlAgent flooder, String target, int count) {
		for (int i = 0; i < count; i++) {
			flooder.sendNotification(target, ("junk-" + i).getBytes(StandardCharsets.UTF_8));
		}
	}

	/**
	 * Reads the drops as a scrape does: the {@code other} series first (which registers
	 * the series of senders that had drops since), then every series.
	 */
	private static double dropped(MeterRegistry registry) {
		// meters hold their state objects weakly: what they read must survive a
		// collection
		System.gc();
		registry.get("nixl.notifications.dropped").tags("sender", "other").functionCounter().count();
		return registry.find("nixl.notifications.dropped")
			.functionCounters()
			.stream()
			.mapToDouble(FunctionCounter::count)
			.sum();
	}

	private static void pullOnce(AssertableApplicationContext prefill, KvConsumer consumer,
			AssertableApplicationContext decode, int seed) {
		KvProducer producer = prefill.getBean(KvProducer.class);
		PagedKvCache producerCache = prefill.getBean(PagedKvCache.class);
		PagedKvCache consumerCache = decode.getBean(PagedKvCache.class);
		int[] blocks = producerCache.allocator().allocate(2);
		fill(producerCache, blocks, seed);
		// the lease takes over the blocks' references
		KvLease lease = producer.lease("pull-" + seed, blocks);
		consumer.connect(producer.handle());
		int[] local = consumerCache.allocator().allocate(2);
		consumer.pull(lease.params(), local, WAIT);
		check(consumerCache, local, blocks, seed);
		consumerCache.allocator().release(local);
	}

	private static void fill(PagedKvCache cache, int[] blocks, int seed) {
		for (int r = 0; r < cache.layout().regionCount(); r++) {
			for (int block : blocks) {
				Bytes.fill(cache.block(r, block), seed * 1000 + r * 100 + block);
			}
		}
	}

	private static void check(PagedKvCache cache, int[] local, int[] remote, int seed) {
		for (int r = 0; r < cache.layout().regionCount(); r++) {
			for (int i = 0; i < local.length; i++) {
				assertThat(Bytes.hasPattern(cache.block(r, local[i]), seed * 1000 + r * 100 + remote[i])).isTrue();
			}
		}
	}

	private static double gauge(MeterRegistry registry, String name, String... tags) {
		return registry.get(name).tags(tags).gauge().value();
	}

	private static double counter(MeterRegistry registry, String name, String... tags) {
		return registry.get(name).tags(tags).functionCounter().count();
	}

	/**
	 * The test's exchange, left open when an application closes, so that a producer can
	 * restart while the consumer runs.
	 */
	static final class SharedExchange extends ForwardingMetadataExchange {

		SharedExchange(MetadataExchange delegate) {
			super(delegate);
		}

		@Override
		public void close() {
		}

	}

}
