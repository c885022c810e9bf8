package dev.nixl4j.autoconfigure.resilience;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.NixlProperties;
import dev.nixl4j.autoconfigure.TransferListenerOrder;
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
 * Resilience4j around nixl4j, each part present when Resilience4j's registry for it is:
 * the {@value #METADATA_RETRY} retry of metadata fetches ({@link MetadataExchangeRetry}),
 * a circuit breaker per peer ({@link PeerCircuitBreakers}) and the
 * {@value #TRANSFER_BULKHEAD} bulkhead of transfers in flight ({@link TransferBulkhead}),
 * the last two transfer listener beans that the agent applies in the orders
 * {@link TransferListenerOrder#CIRCUIT_BREAKER} and
 * {@link TransferListenerOrder#BULKHEAD}. The {@value #TRANSFER_TIME_LIMITER} time
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

	/** Name of the retry of metadata fetches and loads. */
	public static final String METADATA_RETRY = "nixl-metadata";

	/**
	 * Name of the circuit breaker configuration
	 * ({@code resilience4j.circuitbreaker.configs.nixl-peer}) that per-peer breakers are
	 * created from, when defined.
	 */
	public static final String PEER_CIRCUIT_BREAKER_CONFIG = "nixl-peer";

	/**
	 * Prefix of the per-peer circuit breakers' names, followed by the peer's agent name.
	 */
	public static final String PEER_CIRCUIT_BREAKER_PREFIX = "nixl-peer-";

	/** Name of the bulkhead bounding transfers in flight. */
	public static final String TRANSFER_BULKHEAD = "nixl-transfers";

	/** Name of the time limiter giving the default deadline of waits on transfers. */
	public static final String TRANSFER_TIME_LIMITER = "nixl-transfer";

	NixlResilienceAutoConfiguration() {
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RetryRegistry.class)
	@ConditionalOnBean(RetryRegistry.class)
	static class MetadataRetryConfiguration {

		@Bean
		@ConditionalOnMissingBean
		MetadataExchangeRetry nixlMetadataExchangeRetry(RetryRegistry registry) {
			return new MetadataExchangeRetry(registry);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(CircuitBreakerRegistry.class)
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
	@ConditionalOnClass(BulkheadRegistry.class)
	@ConditionalOnBean({ BulkheadRegistry.class, NixlAgent.class })
	static class TransferBulkheadConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@Order(TransferListenerOrder.BULKHEAD)
		TransferBulkhead nixlTransferBulkhead(BulkheadRegistry registry, NixlProperties properties) {
			return new TransferBulkhead(registry, properties.getTransfer().getMaxInFlight());
		}

	}

}
