package dev.nixl4j.autoconfigure.health;

import dev.nixl4j.autoconfigure.web.NixlMetadataWebAutoConfiguration;
import dev.nixl4j.metadata.http.MetadataRegistryHandler;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code nixlMetadataRegistry} health contributor
 * ({@link MetadataRegistryHealthIndicator}) of an application that serves the HTTP
 * metadata registry, with or without an agent. Turned off with
 * {@code management.health.nixl-metadata-registry.enabled=false}.
 */
@AutoConfiguration(after = NixlMetadataWebAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(MetadataRegistryHandler.class)
@ConditionalOnEnabledHealthIndicator("nixl-metadata-registry")
public final class NixlMetadataRegistryHealthContributorAutoConfiguration {

	NixlMetadataRegistryHealthContributorAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean(name = "nixlMetadataRegistryHealthIndicator")
	MetadataRegistryHealthIndicator nixlMetadataRegistryHealthIndicator(MetadataRegistryHandler registry) {
		return new MetadataRegistryHealthIndicator(registry);
	}

}
