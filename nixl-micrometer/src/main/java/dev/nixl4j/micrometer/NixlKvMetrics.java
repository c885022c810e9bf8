package dev.nixl4j.micrometer;

import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.kv.BlockAllocator;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvIncompatibleException;
import dev.nixl4j.kv.KvIntegrityException;
import dev.nixl4j.kv.KvLeaseLostException;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.KvProducerUnavailableException;
import dev.nixl4j.kv.KvPullListener;
import dev.nixl4j.kv.LeaseOutcome;
import dev.nixl4j.kv.PagedKvCache;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

/**
 * Meters of a {@link KvProducer} and a {@link KvConsumer} (either may be absent), tagged
 * with {@code agent} (the agent of their cache). Of the producer:
 *
 * <ul>
 * <li>{@code nixl.kv.leases.active} (gauge): leases held now
 * ({@link KvProducer#activeLeases()});</li>
 * <li>{@code nixl.kv.leases} (function counter; tag {@code outcome}: {@code completed},
 * {@code expired}, {@code released}, {@code closed}, {@code stale}): leases that ended
 * ({@link KvProducer#endedLeases(LeaseOutcome)});</li>
 * <li>{@code nixl.kv.answers.pending} (gauge): answers to consumers that wait for the
 * consumer's metadata to be found ({@link KvProducer#pendingAnswers()});</li>
 * <li>{@code nixl.kv.answers.dropped} (function counter): answers never sent, their
 * consumer's metadata not found in time or too many waiting
 * ({@link KvProducer#droppedAnswers()});</li>
 * <li>{@code nixl.kv.messages.ignored} (function counter): done and release messages
 * about a lease from another agent than its consumer
 * ({@link KvProducer#ignoredMessages()});</li>
 * <li>{@code nixl.kv.pool.blocks} (gauge; tag {@code state}): blocks of the cache's pool
 * that are {@code free}, {@code leased} (held by the producer's leases now, a block
 * counted once per lease) or {@code used} (allocated and not leased); with a consumer
 * only, {@code leased} is 0.</li>
 * </ul>
 *
 * Of the consumer:
 *
 * <ul>
 * <li>{@code nixl.kv.pull.duration} (timer, percentile histogram; tag {@code outcome}:
 * {@code completed}, {@code lease_lost}, {@code integrity_failed},
 * {@code producer_unavailable}, {@code incompatible}, {@code failed}): pulls, from the
 * call to the return or throw;</li>
 * <li>{@code nixl.kv.confirmation.duration} (timer, percentile histogram): from a pull's
 * READ completing to the producer's answer, resends included;</li>
 * <li>{@code nixl.kv.pull.bytes} (distribution summary, bytes): bytes of each pull that
 * completed;</li>
 * <li>{@code nixl.kv.reconnects} (counter; tag {@code producer}): sessions with a
 * producer lost and connected anew (a transfer failed in the backend, or the producer
 * restarted); a producer's series appears, at 0, with its first completed pull, the first
 * {@value BoundedTagValues#MAX} producers by name and the rest as {@code other};</li>
 * <li>{@code nixl.kv.integrity.failures} (function counter): pulls that failed with
 * {@link KvIntegrityException}, whose data did not match the producer's CRC32C
 * ({@link KvConsumer#integrityFailures()});</li>
 * <li>{@code nixl.kv.confirmation.resends} (function counter): done messages a pull sent
 * again because no answer came within the resend bound
 * ({@link KvConsumer#confirmationResends()}).</li>
 * </ul>
 *
 * <p>
 * No tag carries a request. Boot's {@code management.metrics.distribution.*} properties
 * reshape the timers and the summary (client-side percentiles, SLOs). A pull costs one
 * timer record, one summary record and, once its READ completed, one more timer record;
 * nothing else is allocated for it.
 */
public class NixlKvMetrics implements MeterBinder {

	private final @Nullable KvProducer producer;

	private final @Nullable KvConsumer consumer;

	private final Tags tags;

	private final AtomicBoolean listening = new AtomicBoolean();

	/**
	 * Replaced as a whole on each bind, so a pull reads it once and allocates nothing.
	 */
	private volatile PullMeters[] bound = {};

	private final BoundedTagValues producers = new BoundedTagValues();

	private NixlKvMetrics(@Nullable KvProducer producer, @Nullable KvConsumer consumer, Iterable<Tag> tags) {
		PagedKvCache cache = (producer != null) ? producer.cache() : (consumer != null) ? consumer.cache() : null;
		if (cache == null) {
			throw new IllegalStateException("KV meters need a KvProducer or a KvConsumer: set one on the builder");
		}
		this.producer = producer;
		this.consumer = consumer;
		this.tags = Tags.of(tags).and("agent", cache.agent().name());
	}

	/**
	 * Starts building the meters of a producer, a consumer or both (of the same cache).
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		KvProducer producer = this.producer;
		if (producer != null) {
			bindProducer(registry, producer);
		}
		KvConsumer consumer = this.consumer;
		if (consumer != null) {
			bindConsumer(registry, consumer);
		}
		PagedKvCache cache = (producer != null) ? producer.cache() : Objects.requireNonNull(consumer).cache();
		BlockAllocator allocator = cache.allocator();
		Gauge.builder("nixl.kv.pool.blocks", allocator, BlockAllocator::freeCount)
			.tags(this.tags.and("state", "free"))
			.description("Blocks of the KV cache's pool: free, leased, or used (allocated and not leased)")
			.register(registry);
		// gauges hold their state objects weakly: only objects that live as long as the
		// cache, never this binder
		Gauge.builder("nixl.kv.pool.blocks", allocator, (a) -> leasedBlocks(producer))
			.tags(this.tags.and("state", "leased"))
			.description("Blocks of the KV cache's pool: free, leased, or used (allocated and not leased)")
			.register(registry);
		Gauge
			.builder("nixl.kv.pool.blocks", allocator,
					(a) -> Math.max(0, a.capacity() - a.freeCount() - leasedBlocks(producer)))
			.tags(this.tags.and("state", "used"))
			.description("Blocks of the KV cache's pool: free, leased, or used (allocated and not leased)")
			.register(registry);
	}

	private static double leasedBlocks(@Nullable KvProducer producer) {
		return (producer != null) ? producer.leasedBlocks() : 0;
	}

	private void bindProducer(MeterRegistry registry, KvProducer producer) {
		Gauge.builder("nixl.kv.leases.active", producer, KvProducer::activeLeases)
			.tags(this.tags)
			.description("KV leases held now")
			.register(registry);
		for (LeaseOutcome outcome : LeaseOutcome.values()) {
			FunctionCounter.builder("nixl.kv.leases", producer, (p) -> p.endedLeases(outcome))
				.tags(this.tags.and("outcome", outcome.name().toLowerCase(Locale.ROOT)))
				.description("KV leases that ended, by how")
				.register(registry);
		}
		Gauge.builder("nixl.kv.answers.pending", producer, KvProducer::pendingAnswers)
			.tags(this.tags)
			.description("Answers to KV consumers that wait for the consumer's metadata to be found")
			.register(registry);
		FunctionCounter.builder("nixl.kv.answers.dropped", producer, KvProducer::droppedAnswers)
			.tags(this.tags)
			.description("Answers to KV consumers never sent: their metadata was not found in time, or too many waited")
			.register(registry);
		FunctionCounter.builder("nixl.kv.messages.ignored", producer, KvProducer::ignoredMessages)
			.tags(this.tags)
			.description("KV done and release messages about a lease from another agent than its consumer")
			.register(registry);
	}

	private void bindConsumer(MeterRegistry registry, KvConsumer consumer) {
		FunctionCounter.builder("nixl.kv.integrity.failures", consumer, KvConsumer::integrityFailures)
			.description("KV pulls whose data did not match the producer's CRC32C")
			.tags(this.tags)
			.register(registry);
		FunctionCounter.builder("nixl.kv.confirmation.resends", consumer, KvConsumer::confirmationResends)
			.description("Done messages KV pulls sent again because no answer came within the resend bound")
			.tags(this.tags)
			.register(registry);
		synchronized (this.listening) {
			PullMeters[] grown = Arrays.copyOf(this.bound, this.bound.length + 1);
			grown[grown.length - 1] = new PullMeters(registry, this.tags);
			this.bound = grown;
		}
		if (this.listening.compareAndSet(false, true)) {
			consumer.addPullListener(new Listener());
		}
	}

	/** The tag value of a pull's failure, by its type. */
	static String outcomeOf(RuntimeException failure) {
		// before its superclass KvLeaseLostException
		if (failure instanceof KvIntegrityException) {
			return "integrity_failed";
		}
		if (failure instanceof KvLeaseLostException) {
			return "lease_lost";
		}
		if (failure instanceof KvProducerUnavailableException) {
			return "producer_unavailable";
		}
		if (failure instanceof KvIncompatibleException) {
			return "incompatible";
		}
		return "failed";
	}

	/**
	 * The consumer's recorded meters in one registry.
	 */
	private static final class PullMeters {

		private static final double[] PERCENTILES = { 0.5, 0.95, 0.99 };

		private static final String[] FAILURES = { "lease_lost", "integrity_failed", "producer_unavailable",
				"incompatible", "failed" };

		private final MeterRegistry registry;

		private final Tags tags;

		private final Timer completed;

		private final Map<String, Timer> failed = new ConcurrentHashMap<>();

		private final Timer confirmation;

		private final DistributionSummary bytes;

		PullMeters(MeterRegistry registry, Tags tags) {
			this.registry = registry;
			this.tags = tags;
			this.completed = pullTimer("completed");
			for (String outcome : FAILURES) {
				this.failed.put(outcome, pullTimer(outcome));
			}
			this.confirmation = Timer.builder("nixl.kv.confirmation.duration")
				.tags(tags)
				.publishPercentileHistogram()
				.publishPercentiles(PERCENTILES)
				.description("Time from a KV pull's READ completing to the producer's answer")
				.register(registry);
			this.bytes = DistributionSummary.builder("nixl.kv.pull.bytes")
				.tags(tags)
				.baseUnit(BaseUnits.BYTES)
				.description("Bytes read by each KV pull that completed")
				.register(registry);
		}

		private Timer pullTimer(String outcome) {
			return Timer.builder("nixl.kv.pull.duration")
				.tags(this.tags.and("outcome", outcome))
				.publishPercentileHistogram()
				.publishPercentiles(PERCENTILES)
				.description("KV pulls, from the call to the return or throw")
				.register(this.registry);
		}

	}

	/**
	 * Records the consumer's pulls in every registry bound.
	 */
	private final class Listener implements KvPullListener {

		@Override
		public void pulled(String producer, long bytes, long nanos) {
			String value = NixlKvMetrics.this.producers.valueOf(producer);
			for (PullMeters meters : NixlKvMetrics.this.bound) {
				meters.completed.record(nanos, TimeUnit.NANOSECONDS);
				meters.bytes.record(bytes);
				// the producer's reconnect series exists from its first pull, at 0
				reconnects(meters, value);
			}
		}

		@Override
		public void pullFailed(String producer, RuntimeException failure, long nanos) {
			String outcome = outcomeOf(failure);
			for (PullMeters meters : NixlKvMetrics.this.bound) {
				Objects.requireNonNull(meters.failed.get(outcome)).record(nanos, TimeUnit.NANOSECONDS);
			}
		}

		@Override
		public void confirmed(String producer, long nanos) {
			for (PullMeters meters : NixlKvMetrics.this.bound) {
				meters.confirmation.record(nanos, TimeUnit.NANOSECONDS);
			}
		}

		@Override
		public void reconnected(String producer) {
			String value = NixlKvMetrics.this.producers.valueOf(producer);
			for (PullMeters meters : NixlKvMetrics.this.bound) {
				reconnects(meters, value).increment();
			}
		}

		private Counter reconnects(PullMeters meters, String producer) {
			return Counter.builder("nixl.kv.reconnects")
				.tags(meters.tags.and("producer", producer))
				.description("Sessions with a KV producer lost and connected anew")
				.register(meters.registry);
		}

	}

	/**
	 * Builds {@link NixlKvMetrics} of a producer, a consumer or both; at least one is
	 * needed.
	 */
	public static final class Builder {

		private @Nullable KvProducer producer;

		private @Nullable KvConsumer consumer;

		private Tags tags = Tags.empty();

		private Builder() {
		}

		/**
		 * Sets the producer whose leases, answers and pool are metered.
		 * @param producer the producer, {@code null} for none
		 * @return this builder
		 */
		public Builder producer(@Nullable KvProducer producer) {
			this.producer = producer;
			return this;
		}

		/**
		 * Sets the consumer whose pulls are metered.
		 * @param consumer the consumer, {@code null} for none
		 * @return this builder
		 */
		public Builder consumer(@Nullable KvConsumer consumer) {
			this.consumer = consumer;
			return this;
		}

		/**
		 * Adds tags to every meter, beside {@code agent}; none by default.
		 * @param tags the tags
		 * @return this builder
		 */
		public Builder tags(Iterable<Tag> tags) {
			this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
			return this;
		}

		/**
		 * Builds the meters.
		 * @return the binder
		 * @throws IllegalStateException when neither a producer nor a consumer is set
		 */
		public NixlKvMetrics build() {
			return new NixlKvMetrics(this.producer, this.consumer, this.tags);
		}

	}

}
