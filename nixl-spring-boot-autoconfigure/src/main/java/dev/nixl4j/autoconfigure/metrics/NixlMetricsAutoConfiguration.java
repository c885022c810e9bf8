package dev.nixl4j.autoconfigure.metrics;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the agent's meters ({@link NixlAgentMetrics}). Boot's
 * {@code management.metrics.enable.nixl=false} turns them off;
 * {@code management.metrics.distribution.*.nixl.transfer.duration} shapes the duration timer.
 */
@AutoConfiguration(after = NixlAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(MeterBinder.class)
@ConditionalOnBean({ NixlAgent.class, MeterRegistry.class })
public final class NixlMetricsAutoConfiguration {

	NixlMetricsAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	NixlAgentMetrics nixlAgentMetrics(NixlAgent agent) {
		return new NixlAgentMetrics(agent);
	}

}
