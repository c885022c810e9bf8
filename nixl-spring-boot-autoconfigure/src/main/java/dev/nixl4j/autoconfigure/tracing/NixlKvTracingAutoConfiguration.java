package dev.nixl4j.autoconfigure.tracing;

import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.kv.KvObserver;
import dev.nixl4j.micrometer.tracing.ObservationKvObserver;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.propagation.Propagator;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of traces across the KV hand-off when the application traces (an
 * {@link ObservationRegistry} and a micrometer-tracing {@link Propagator}, as Spring
 * Boot's OpenTelemetry support provides): a {@link KvObserver} that the managed
 * {@code KvProducer} and {@code KvConsumer} use ({@link ObservationKvObserver}). Nothing
 * is needed, and nothing happens, without tracing; Boot's
 * {@code management.observations.enable.nixl.kv=false} turns the observations off.
 */
@AutoConfiguration(before = NixlAutoConfiguration.class, afterName = {
		"org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
		"org.springframework.boot.micrometer.tracing.autoconfigure.MicrometerTracingAutoConfiguration",
		"org.springframework.boot.micrometer.tracing.opentelemetry.autoconfigure.OpenTelemetryTracingAutoConfiguration" })
@ConditionalOnClass({ ObservationRegistry.class, Propagator.class, ObservationKvObserver.class })
@ConditionalOnBean({ ObservationRegistry.class, Propagator.class })
@ConditionalOnBooleanProperty(name = "nixl.agent.enabled", matchIfMissing = true)
public final class NixlKvTracingAutoConfiguration {

	NixlKvTracingAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	KvObserver nixlKvObserver(ObservationRegistry registry, Propagator propagator) {
		return new ObservationKvObserver(registry, propagator);
	}

}
