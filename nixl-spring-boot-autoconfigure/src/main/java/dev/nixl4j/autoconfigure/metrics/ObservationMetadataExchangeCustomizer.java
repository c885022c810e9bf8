package dev.nixl4j.autoconfigure.metrics;

import dev.nixl4j.autoconfigure.MetadataExchangeCustomizer;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.micrometer.MetadataObservationConvention;
import dev.nixl4j.micrometer.ObservedMetadataExchange;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;

/**
 * Wraps the auto-configured exchange in an {@link ObservedMetadataExchange}. It runs
 * first, so the observation sits closest to the exchange: customizers applied after it
 * (retries, for example) wrap it, and each attempt is observed on its own.
 */
public class ObservationMetadataExchangeCustomizer implements MetadataExchangeCustomizer, Ordered {

	/** The order: before every customizer of the default order. */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 100;

	private final ObservationRegistry registry;

	private final @Nullable MetadataObservationConvention convention;

	/**
	 * Creates the customizer.
	 * @param registry where observations go
	 * @param convention a convention that replaces the default, or {@code null}
	 */
	public ObservationMetadataExchangeCustomizer(ObservationRegistry registry,
			@Nullable MetadataObservationConvention convention) {
		this.registry = registry;
		this.convention = convention;
	}

	@Override
	public MetadataExchange customize(MetadataExchange exchange) {
		return new ObservedMetadataExchange(exchange, this.registry, this.convention);
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
