package dev.nixl4j.autoconfigure.metrics;

import java.util.Objects;

import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvIntegrityException;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Meters of a {@link KvConsumer}, tagged with {@code agent} (the consumer's agent):
 *
 * <ul>
 * <li>{@code nixl.kv.integrity.failures} (function counter): pulls that failed with
 * {@link KvIntegrityException}, whose data did not match the producer's CRC32C
 * ({@link KvConsumer#integrityFailures()});</li>
 * <li>{@code nixl.kv.confirmation.resends} (function counter): done messages a pull sent
 * again because no answer came within the resend bound
 * ({@link KvConsumer#confirmationResends()}).</li>
 * </ul>
 */
public class NixlKvMetrics implements MeterBinder {

	private final KvConsumer consumer;

	private final Tags tags;

	/**
	 * Creates the meters of a consumer.
	 * @param consumer the consumer
	 * @param tags tags added to every meter, beside {@code agent}
	 */
	public NixlKvMetrics(KvConsumer consumer, Iterable<Tag> tags) {
		this.consumer = Objects.requireNonNull(consumer, "consumer");
		this.tags = Tags.of(tags).and("agent", consumer.cache().agent().name());
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		FunctionCounter.builder("nixl.kv.integrity.failures", this.consumer, KvConsumer::integrityFailures)
			.description("KV pulls whose data did not match the producer's CRC32C")
			.tags(this.tags)
			.register(registry);
		FunctionCounter.builder("nixl.kv.confirmation.resends", this.consumer, KvConsumer::confirmationResends)
			.description("Done messages KV pulls sent again because no answer came within the resend bound")
			.tags(this.tags)
			.register(registry);
	}

}
