package dev.nixl4j.autoconfigure.metrics;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.TransferListenerOrder;
import dev.nixl4j.micrometer.MetadataObservationConvention;
import dev.nixl4j.micrometer.ObservationTransferListener;
import dev.nixl4j.micrometer.TransferObservationConvention;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;

/**
 * Auto-configuration of observations of the agent's transfer posts and of metadata
 * fetches and loads, when an {@link ObservationRegistry} bean exists. Boot's
 * {@code management.observations.enable.nixl=false} turns them off. With Boot's metrics
 * the observations also become timers named {@code nixl.transfer} and
 * {@code nixl.metadata}, tagged with their low-cardinality keys.
 */
@AutoConfiguration(after = NixlAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({ ObservationRegistry.class, ObservationTransferListener.class })
@ConditionalOnBean({ NixlAgent.class, ObservationRegistry.class })
public final class NixlObservationAutoConfiguration {

	NixlObservationAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	@Order(TransferListenerOrder.OBSERVATION)
	ObservationTransferListener nixlObservationTransferListener(AgentConfig config, ObservationRegistry registry,
			ObjectProvider<TransferObservationConvention> convention) {
		return new ObservationTransferListener(registry, config.name(), convention.getIfUnique());
	}

	@Bean
	@ConditionalOnMissingBean
	ObservationMetadataExchangeCustomizer nixlObservationMetadataExchangeCustomizer(ObservationRegistry registry,
			ObjectProvider<MetadataObservationConvention> convention) {
		return new ObservationMetadataExchangeCustomizer(registry, convention.getIfUnique());
	}

}
