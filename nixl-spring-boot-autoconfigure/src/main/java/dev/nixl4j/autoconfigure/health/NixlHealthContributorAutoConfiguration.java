package dev.nixl4j.autoconfigure.health;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.NixlLifecycle;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code nixl} health contributor
 * ({@link NixlHealthIndicator}). Turned off with
 * {@code management.health.nixl.enabled=false}.
 */
@AutoConfiguration(after = NixlAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(NixlAgent.class)
@ConditionalOnEnabledHealthIndicator("nixl")
public final class NixlHealthContributorAutoConfiguration {

	NixlHealthContributorAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean(name = { "nixlHealthIndicator", "nixlHealthContributor" })
	NixlHealthIndicator nixlHealthIndicator(NixlAgent agent, ObjectProvider<NixlLifecycle> lifecycle) {
		NixlLifecycle nixl = lifecycle.getIfUnique();
		return new NixlHealthIndicator(agent).withPublication((nixl != null) ? nixl.publication() : null);
	}

}
