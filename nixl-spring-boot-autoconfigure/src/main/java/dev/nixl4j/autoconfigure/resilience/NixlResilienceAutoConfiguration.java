package dev.nixl4j.autoconfigure.resilience;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.MetadataExchangeCustomizer;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.NixlProperties;
import dev.nixl4j.autoconfigure.TransferListenerOrder;
import dev.nixl4j.resilience4j.MetadataExchangeRetry;
import dev.nixl4j.resilience4j.PeerCircuitBreakers;
import dev.nixl4j.resilience4j.TransferBulkhead;
import dev.nixl4j.resilience4j.TransferTimeLimiter;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * Resilience4j around nixl4j with nixl-resilience4j's classes, each part present when
 * Resilience4j's registry for it is: the {@value MetadataExchangeRetry#NAME} retry of
 * metadata fetches ({@link MetadataExchangeRetry}, applied to the exchange by a
 * {@link MetadataExchangeCustomizer} bean), a circuit breaker per peer
 * ({@link PeerCircuitBreakers}) and the {@value TransferBulkhead#NAME} bulkhead of
 * transfers in flight ({@link TransferBulkhead}), the last two transfer listener beans
 * that the agent applies in the orders {@link TransferListenerOrder#CIRCUIT_BREAKER} and
 * {@link TransferListenerOrder#BULKHEAD}. The {@value TransferTimeLimiter#NAME} time
 * limiter is configured by {@link NixlTimeLimiterAutoConfiguration}.
 *
 * <p>
 * A bean of one of these types defined by the application replaces the auto-configured
 * one; being a transfer listener bean it is applied to the agent, in the order its
 * {@code @Order} gives.
 */
@AutoConfiguration(after = NixlAutoConfiguration.class,
		afterName = { "io.github.resilience4j.springboot.retry.autoconfigure.RetryAutoConfiguration",
				"io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration",
				"io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration" })
@ConditionalOnClass(name = "io.github.resilience4j.core.Registry")
public final class NixlResilienceAutoConfiguration {

	NixlResilienceAutoConfiguration() {
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ RetryRegistry.class, MetadataExchangeRetry.class })
	@ConditionalOnBean(RetryRegistry.class)
	static class MetadataRetryConfiguration {

		@Bean
		@ConditionalOnMissingBean
		MetadataExchangeRetry nixlMetadataExchangeRetry(RetryRegistry registry) {
			return new MetadataExchangeRetry(registry);
		}

		/**
		 * Wraps the exchange in the retry, whichever bean it is; in the default order, so
		 * after the observation's customizer: each attempt is observed on its own.
		 */
		@Bean
		MetadataExchangeCustomizer nixlMetadataExchangeRetryCustomizer(MetadataExchangeRetry retry) {
			return retry::wrap;
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ CircuitBreakerRegistry.class, PeerCircuitBreakers.class })
	@ConditionalOnBean({ CircuitBreakerRegistry.class, NixlAgent.class })
	static class PeerCircuitBreakerConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@Order(TransferListenerOrder.CIRCUIT_BREAKER)
		PeerCircuitBreakers nixlPeerCircuitBreakers(CircuitBreakerRegistry registry) {
			return new PeerCircuitBreakers(registry);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass({ BulkheadRegistry.class, TransferBulkhead.class })
	@ConditionalOnBean({ BulkheadRegistry.class, NixlAgent.class })
	static class TransferBulkheadConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@Order(TransferListenerOrder.BULKHEAD)
		TransferBulkhead nixlTransferBulkhead(BulkheadRegistry registry, NixlProperties properties) {
			return TransferBulkhead.builder(registry)
				.defaultMaxInFlight(properties.getTransfer().getMaxInFlight())
				.build();
		}

	}

}
