package dev.nixl4j.autoconfigure.resilience;

import java.time.Duration;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.NixlTimeouts;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.resilience4j.MetadataExchangeRetry;
import dev.nixl4j.resilience4j.PeerCircuitBreakers;
import dev.nixl4j.resilience4j.TransferBulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration;
import io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadMetricsAutoConfiguration;
import io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration;
import io.github.resilience4j.springboot.retry.autoconfigure.RetryAutoConfiguration;
import io.github.resilience4j.springboot.retry.autoconfigure.RetryMetricsAutoConfiguration;
import io.github.resilience4j.springboot.timelimiter.autoconfigure.TimeLimiterAutoConfiguration;
import io.github.resilience4j.springboot.timelimiter.autoconfigure.TimeLimiterMetricsAutoConfiguration;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

class NixlResilienceAutoConfigurationTests {

	static final AutoConfigurations RESILIENCE4J = AutoConfigurations.of(RetryAutoConfiguration.class,
			CircuitBreakerAutoConfiguration.class, BulkheadAutoConfiguration.class, TimeLimiterAutoConfiguration.class);

	static final AutoConfigurations NIXL = AutoConfigurations.of(NixlAutoConfiguration.class,
			NixlResilienceAutoConfiguration.class, NixlTimeLimiterAutoConfiguration.class);

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(RESILIENCE4J)
		.withConfiguration(NIXL)
		.withPropertyValues("nixl.agent.engine=embedded");

	@Test
	void everyPartIsRegisteredInResilience4jsRegistries() {
		this.runner.run(context -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(MetadataExchangeRetry.class)
				.hasSingleBean(PeerCircuitBreakers.class)
				.hasSingleBean(TransferBulkhead.class)
				.hasSingleBean(NixlTimeouts.class);
			assertThat(context.getBean(RetryRegistry.class).find("nixl-metadata"))
				.containsSame(context.getBean(MetadataExchangeRetry.class).retry());
			assertThat(context.getBean(BulkheadRegistry.class).find("nixl-transfers"))
				.containsSame(context.getBean(TransferBulkhead.class).bulkhead());
			assertThat(context.getBean(BulkheadRegistry.class)
				.bulkhead("nixl-transfers")
				.getBulkheadConfig()
				.getMaxConcurrentCalls()).isEqualTo(1024);
			assertThat(context.getBean(TimeLimiterRegistry.class).find("nixl-transfer")).isPresent();
			assertThat(context.getBean(NixlTimeouts.class).transferTimeout()).isEqualTo(Duration.ofSeconds(30));
		});
	}

	@Test
	void anUnconfiguredBulkheadAdmitsNixlTransferMaxInFlight() {
		this.runner.withPropertyValues("nixl.transfer.max-in-flight=7")
			.run(context -> assertThat(
					context.getBean(TransferBulkhead.class).bulkhead().getBulkheadConfig().getMaxConcurrentCalls())
				.isEqualTo(7));
	}

	@Test
	void aConfiguredBulkheadKeepsItsOwnLimit() {
		this.runner
			.withPropertyValues("nixl.transfer.max-in-flight=7",
					"resilience4j.bulkhead.instances.nixl-transfers.max-concurrent-calls=3")
			.run(context -> assertThat(
					context.getBean(TransferBulkhead.class).bulkhead().getBulkheadConfig().getMaxConcurrentCalls())
				.isEqualTo(3));
	}

	@Test
	void anUnconfiguredTimeLimiterGivesNixlTransferTimeout() {
		this.runner.withPropertyValues("nixl.transfer.timeout=12s").run(context -> {
			assertThat(context.getBean(NixlTimeouts.class).transferTimeout()).isEqualTo(Duration.ofSeconds(12));
			assertThat(context.getBean(TimeLimiterRegistry.class)
				.timeLimiter("nixl-transfer")
				.getTimeLimiterConfig()
				.getTimeoutDuration()).isEqualTo(Duration.ofSeconds(12));
		});
	}

	@Test
	void aConfiguredTimeLimiterGivesItsOwnTimeout() {
		this.runner
			.withPropertyValues("nixl.transfer.timeout=12s",
					"resilience4j.timelimiter.instances.nixl-transfer.timeout-duration=3s")
			.run(context -> assertThat(context.getBean(NixlTimeouts.class).transferTimeout())
				.isEqualTo(Duration.ofSeconds(3)));
	}

	@Test
	void aConfiguredRetryKeepsItsSettingsAndStaysInTheRegistry() {
		this.runner
			.withPropertyValues("resilience4j.retry.instances.nixl-metadata.max-attempts=5",
					"resilience4j.retry.instances.nixl-metadata.wait-duration=20ms")
			.run(context -> {
				Retry retry = context.getBean(MetadataExchangeRetry.class).retry();
				assertThat(retry.getRetryConfig().getMaxAttempts()).isEqualTo(5);
				assertThat(retry.getRetryConfig().getIntervalBiFunction().apply(1, null)).isEqualTo(20L);
				assertThat(context.getBean(RetryRegistry.class).retry("nixl-metadata")).isSameAs(retry);
			});
	}

	@Test
	void theMetadataExchangeIsWrappedByTheRetry() {
		this.runner.withPropertyValues("nixl.metadata.exchange=http", "nixl.metadata.http.token=0123456789abcdef")
			.run(context -> assertThat(context.getBean(MetadataExchange.class).toString())
				.startsWith("InMemoryMetadataExchange")
				.endsWith("(retried by 'nixl-metadata')"));
	}

	@Test
	void resilience4jMetricsReportTheInstances() {
		this.runner
			.withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
					SimpleMetricsExportAutoConfiguration.class, BulkheadMetricsAutoConfiguration.class,
					RetryMetricsAutoConfiguration.class, TimeLimiterMetricsAutoConfiguration.class))
			.withPropertyValues("nixl.transfer.max-in-flight=9")
			.run(context -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get("resilience4j.bulkhead.max.allowed.concurrent.calls")
					.tag("name", "nixl-transfers")
					.gauge()
					.value()).isEqualTo(9.0);
				assertThat(meters.get("resilience4j.bulkhead.available.concurrent.calls")
					.tag("name", "nixl-transfers")
					.gauge()
					.value()).isEqualTo(9.0);
				assertThat(meters.find("resilience4j.retry.calls").tag("name", "nixl-metadata").meters()).isNotEmpty();
				assertThat(meters.find("resilience4j.timelimiter.calls").tag("name", "nixl-transfer").meters())
					.isNotEmpty();
			});
	}

	@Test
	void backsOffWithoutResilience4jClasses() {
		// without the jar, Resilience4j's own auto-configurations are not listed either
		new ApplicationContextRunner().withConfiguration(NIXL)
			.withClassLoader(new FilteredClassLoader("io.github.resilience4j"))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.transfer.timeout=12s")
			.run(context -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(NixlAgent.class)
					.doesNotHaveBean(MetadataExchangeRetry.class)
					.doesNotHaveBean(PeerCircuitBreakers.class)
					.doesNotHaveBean(TransferBulkhead.class);
				assertThat(context.getBean(NixlTimeouts.class).transferTimeout()).isEqualTo(Duration.ofSeconds(12));
			});
	}

	@Test
	void backsOffWithoutNixlResilience4j() {
		this.runner.withClassLoader(new FilteredClassLoader("dev.nixl4j.resilience4j"))
			.withPropertyValues("nixl.transfer.timeout=12s")
			.run(context -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(MetadataExchangeRetry.class)
					.doesNotHaveBean(PeerCircuitBreakers.class)
					.doesNotHaveBean(TransferBulkhead.class);
				assertThat(context.getBean(NixlTimeouts.class).transferTimeout()).isEqualTo(Duration.ofSeconds(12));
			});
	}

	@Test
	void backsOffWithoutResilience4jRegistries() {
		new ApplicationContextRunner().withConfiguration(NIXL)
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.transfer.timeout=12s")
			.run(context -> {
				assertThat(context).hasNotFailed()
					.doesNotHaveBean(MetadataExchangeRetry.class)
					.doesNotHaveBean(PeerCircuitBreakers.class)
					.doesNotHaveBean(TransferBulkhead.class);
				assertThat(context.getBean(NixlTimeouts.class).transferTimeout()).isEqualTo(Duration.ofSeconds(12));
			});
	}

	@Test
	void theTransferListenersAreCreatedAtStartEvenWithLazyInitialization() {
		this.runner.withBean(LazyInitializationBeanFactoryPostProcessor.class).run(context -> {
			assertThat(context.getBeanFactory().containsSingleton("nixlTransferBulkhead")).isTrue();
			assertThat(context.getBeanFactory().containsSingleton("nixlPeerCircuitBreakers")).isTrue();
			assertThat(context.getBeanFactory().containsSingleton("nixlMetadataExchangeRetry")).isFalse();
		});
	}

	@Test
	void userBeansWin() {
		NixlTimeouts timeouts = () -> Duration.ofMillis(42);
		this.runner.withBean(NixlTimeouts.class, () -> timeouts)
			.withBean("myBreakers", PeerCircuitBreakers.class,
					() -> new PeerCircuitBreakers(CircuitBreakerRegistry.ofDefaults()))
			.withBean("myBulkhead", TransferBulkhead.class,
					() -> TransferBulkhead.builder(BulkheadRegistry.ofDefaults()).defaultMaxInFlight(1).build())
			.withBean("myRetry", MetadataExchangeRetry.class,
					() -> new MetadataExchangeRetry(RetryRegistry.ofDefaults()))
			.run(context -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(NixlTimeouts.class)).isSameAs(timeouts);
				assertThat(context).getBeanNames(PeerCircuitBreakers.class).containsExactly("myBreakers");
				assertThat(context).getBeanNames(TransferBulkhead.class).containsExactly("myBulkhead");
				assertThat(context).getBeanNames(MetadataExchangeRetry.class).containsExactly("myRetry");
				assertThat(context.getBean(BulkheadRegistry.class).find("nixl-transfers")).isEmpty();
			});
	}

}
