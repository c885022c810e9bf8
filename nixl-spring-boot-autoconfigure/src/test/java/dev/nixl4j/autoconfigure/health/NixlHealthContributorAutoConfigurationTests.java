package dev.nixl4j.autoconfigure.health;

import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
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
