package dev.nixl4j.autoconfigure.health;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentState;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.metrics.NixlMetricsAutoConfiguration;
import dev.nixl4j.testsupport.FaultInjectingDriver;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's agent whose progress loop is made to throw, through its engine's
 * driver: a single failure is survived and counted while health stays UP; a loop that
 * cannot go on turns the agent FAILED, which the real health indicator reports as DOWN
 * and the meters show.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NixlAgentFailureTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(NixlAutoConfiguration.class, NixlHealthContributorAutoConfiguration.class,
						NixlMetricsAutoConfiguration.class, MetricsAutoConfiguration.class,
						SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
		.withUserConfiguration(FaultInjectingAgent.class)
		.withPropertyValues("nixl.agent.engine=embedded",
				"nixl.agent.name=failing-app-" + ProcessHandle.current().pid());

	@Test
	void aSurvivedFailureIsCountedAndAFatalOneTurnsHealthDownWithinASecond() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			FaultInjectingDriver driver = context.getBean(FaultInjectingDriver.class);
			NixlAgent agent = context.getBean(NixlAgent.class);
			NixlHealthIndicator health = context.getBean(NixlHealthIndicator.class);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(health.health().getStatus()).isEqualTo(Status.UP);
			assertThat(failed(registry)).isZero();

			driver.failDrains(new OutOfMemoryError("injected once into a notification drain"), 1);
			await(() -> internalErrors(registry) == 1, "the failed drain was counted");
			assertThat(agent.state()).isEqualTo(AgentState.ACTIVE);
			assertThat(health.health().getStatus()).isEqualTo(Status.UP);
			assertThat(failed(registry)).isZero();

			driver.failDrains(new OutOfMemoryError("injected into every notification drain"), Integer.MAX_VALUE);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
			await(() -> health.health().getStatus().equals(Status.DOWN), "health is DOWN");
			assertThat(System.nanoTime()).as("DOWN within a second").isLessThan(deadline);
			Health down = health.health();
			assertThat(down.getDetails()).containsEntry("agent", agent.name())
				.containsEntry("state", AgentState.FAILED);
			assertThat((String) down.getDetails().get("reason")).contains("progress thread cannot go on",
					"injected into every notification drain");
			assertThat(failed(registry)).isOne();
			assertThat(internalErrors(registry)).isGreaterThan(1);
		});
	}

	private static double failed(MeterRegistry registry) {
		return registry.get("nixl.agent.failed").gauge().value();
	}

	private static double internalErrors(MeterRegistry registry) {
		return registry.get("nixl.agent.internal.errors").functionCounter().count();
	}

	private static void await(BooleanSupplier condition, String what) {
		Duration wait = Duration.ofSeconds(10);
		long deadline = System.nanoTime() + wait.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("not within " + wait + ": " + what);
			}
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError("interrupted while waiting: " + what, ex);
			}
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class FaultInjectingAgent {

		@Bean
		FaultInjectingDriver faultInjectingDriver(AgentConfig config) {
			return FaultInjectingDriver.open(config);
		}

		@Bean(destroyMethod = "close")
		NixlAgent nixlAgent(FaultInjectingDriver driver, AgentConfig config) {
			return driver.agent(config);
		}

	}

}
