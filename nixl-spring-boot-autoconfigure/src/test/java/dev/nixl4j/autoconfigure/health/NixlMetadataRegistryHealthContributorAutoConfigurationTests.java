package dev.nixl4j.autoconfigure.health;

import java.util.UUID;

import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.web.NixlMetadataWebAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conditions of {@link NixlMetadataRegistryHealthContributorAutoConfiguration}: a served
 * registry has its health, with or without an agent; a client of a registry elsewhere has
 * none, and the property turns it off.
 */
class NixlMetadataRegistryHealthContributorAutoConfigurationTests {

	private static final String TOKEN = "health-" + UUID.randomUUID();

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetadataWebAutoConfiguration.class,
				NixlHealthContributorAutoConfiguration.class,
				NixlMetadataRegistryHealthContributorAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded", "nixl.metadata.exchange=http",
				"nixl.metadata.http.token=" + TOKEN);

	@Test
	void aRegistryWithoutAnAgentReportsTheRegistryAndNoAgent() {
		this.runner.withPropertyValues("nixl.agent.enabled=false", "nixl.metadata.http.registry.max-entries=7")
			.run(context -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(MetadataRegistryHealthIndicator.class)
					.doesNotHaveBean(NixlHealthIndicator.class);
				Health health = context.getBean(MetadataRegistryHealthIndicator.class).health();
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails()).containsEntry("basePath", "/nixl")
					.containsEntry("entries", 0)
					.containsEntry("maxEntries", 7)
					.containsEntry("entryBytes", 0L)
					.containsEntry("entryTtl", "PT30S");
			});
	}

	@Test
	void aWorkerThatServesTheRegistryReportsBoth() {
		this.runner.run(context -> assertThat(context).hasNotFailed()
			.hasSingleBean(MetadataRegistryHealthIndicator.class)
			.hasSingleBean(NixlHealthIndicator.class));
	}

	@Test
	void aClientOfARegistryElsewhereHasNoRegistryHealth() {
		this.runner
			.withPropertyValues("nixl.metadata.http.endpoint=https://127.0.0.1:9/nixl", "nixl.metadata.publish=false")
			.run(context -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(MetadataRegistryHealthIndicator.class)
				.hasSingleBean(NixlHealthIndicator.class));
	}

	@Test
	void theRegistryHealthCanBeTurnedOff() {
		this.runner
			.withPropertyValues("nixl.agent.enabled=false", "management.health.nixl-metadata-registry.enabled=false")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(MetadataRegistryHealthIndicator.class));
	}

}
