package dev.nixl4j.autoconfigure.health;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

class NixlHealthContributorAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(NixlAutoConfiguration.class, NixlHealthContributorAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=embedded");

	@Test
	void contributesTheAgentsHealth() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed().hasSingleBean(NixlHealthIndicator.class).hasBean("nixlHealthIndicator");
			assertThat(context.getBean(NixlHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
		});
	}

	@Test
	void hidesNamesWhenTheHealthEndpointShowsDetailsToAnonymousCallers() {
		this.runner
			.withConfiguration(AutoConfigurations.of(HealthContributorRegistryAutoConfiguration.class,
					HealthEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoint.health.show-details=always")
			.run((context) -> assertThat(agentDetail(context.getBean(NixlHealthIndicator.class)))
				.isEqualTo(NixlHealthIndicator.HIDDEN));
	}

	@Test
	void hidesNamesWhenAGroupWithNixlShowsDetailsToAnonymousCallers() {
		this.runner
			.withConfiguration(AutoConfigurations.of(HealthContributorRegistryAutoConfiguration.class,
					HealthEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoint.health.show-details=when-authorized",
					"management.endpoint.health.group.ready.include=nixl",
					"management.endpoint.health.group.ready.show-details=always")
			.run((context) -> assertThat(agentDetail(context.getBean(NixlHealthIndicator.class)))
				.isEqualTo(NixlHealthIndicator.HIDDEN));
	}

	@Test
	void showsNamesWhenOnlyAuthorizedCallersReadTheDetails() {
		this.runner
			.withConfiguration(AutoConfigurations.of(HealthContributorRegistryAutoConfiguration.class,
					HealthEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoint.health.show-details=when-authorized")
			.run((context) -> assertThat(agentDetail(context.getBean(NixlHealthIndicator.class)))
				.isEqualTo(context.getBean(NixlAgent.class).name()));
	}

	@Test
	void showNamesDecidesBeforeTheHealthEndpoint() {
		ApplicationContextRunner always = this.runner
			.withConfiguration(AutoConfigurations.of(HealthContributorRegistryAutoConfiguration.class,
					HealthEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoint.health.show-details=always");
		always.withPropertyValues("nixl.endpoint.show-names=always")
			.run((context) -> assertThat(agentDetail(context.getBean(NixlHealthIndicator.class)))
				.isEqualTo(context.getBean(NixlAgent.class).name()));
		always.withPropertyValues("management.endpoint.health.show-details=never", "nixl.endpoint.show-names=never")
			.run((context) -> assertThat(agentDetail(context.getBean(NixlHealthIndicator.class)))
				.isEqualTo(NixlHealthIndicator.HIDDEN));
		always
			.withPropertyValues("management.endpoint.health.show-details=when-authorized",
					"nixl.endpoint.roles=operator")
			.run((context) -> assertThat(agentDetail(context.getBean(NixlHealthIndicator.class)))
				.isEqualTo(NixlHealthIndicator.HIDDEN));
	}

	@Test
	void showsNamesWithoutAHealthEndpoint() {
		this.runner.run((context) -> assertThat(agentDetail(context.getBean(NixlHealthIndicator.class)))
			.isEqualTo(context.getBean(NixlAgent.class).name()));
	}

	private static Object agentDetail(NixlHealthIndicator indicator) {
		return indicator.health().getDetails().get("agent");
	}

	@Test
	void backsOffWithoutBootsHealthModule() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NixlHealthIndicator.class));
	}

	@Test
	void isTurnedOffByTheHealthIndicatorProperty() {
		this.runner.withPropertyValues("management.health.nixl.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NixlHealthIndicator.class));
	}

	@Test
	void backsOffWhenTheUserContributesNixlHealth() {
		this.runner.withBean("nixlHealthIndicator", HealthIndicator.class, () -> () -> Health.up().build())
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(NixlHealthIndicator.class)
				.hasSingleBean(HealthIndicator.class));
	}

	@Test
	void needsAnAgent() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlHealthContributorAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(NixlHealthIndicator.class));
	}

}
