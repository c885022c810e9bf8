package dev.nixl4j.resilience4j;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link MetadataExchangeRetry} without Spring: a plain service wraps its exchange, as
 * docs/operations.md shows.
 */
class MetadataExchangeRetryTests {

	private final RetryRegistry registry = RetryRegistry
		.of(RetryConfig.custom().maxAttempts(3).waitDuration(Duration.ofMillis(10)).build());

	@Test
	void aPlainServiceWrapsItsExchangeSoALatePeerIsLoadedByARetry() {
		MetadataExchangeRetry retry = new MetadataExchangeRetry(this.registry);
		assertThat(this.registry.retry(MetadataExchangeRetry.NAME)).as("registered").isSameAs(retry.retry());
		InMemoryMetadataExchange store = new InMemoryMetadataExchange();
		try (MetadataExchange exchange = retry.wrap(store);
				NixlAgent agent = NixlAgent.create(AgentConfig.builder("retrying").engine(Engine.EMBEDDED).build());
				NixlAgent peer = NixlAgent.create(AgentConfig.builder("late").engine(Engine.EMBEDDED).build())) {
			AtomicInteger retries = new AtomicInteger();
			// the peer appears only once the first attempt has failed
			retry.retry().getEventPublisher().onRetry(event -> {
				if (retries.getAndIncrement() == 0) {
					store.publish(peer);
				}
			});
			try (MetadataExchange.Watch watch = exchange.load(agent, "late", Duration.ofMillis(100))) {
				assertThat(agent.hasRemoteMetadata("late")).isTrue();
			}
			assertThat(retries).hasValue(1);
			assertThat(exchange.toString()).endsWith("(retried by 'nixl-metadata')");
		}
	}

	@Test
	void onlyTimeoutsAndUnavailableExchangesAreRetried() {
		assertThat(MetadataExchangeRetry.isRetryable(failure(NixlStatus.TIMEOUT))).isTrue();
		assertThat(MetadataExchangeRetry.isRetryable(failure(NixlStatus.UNAVAILABLE))).isTrue();
		assertThat(MetadataExchangeRetry.isRetryable(failure(NixlStatus.INVALID_METADATA))).isFalse();
		assertThat(MetadataExchangeRetry.isRetryable(failure(NixlStatus.ERROR_NOT_FOUND))).isFalse();
		assertThat(MetadataExchangeRetry.isRetryable(new IllegalStateException())).isFalse();
	}

	private static NixlException failure(NixlStatus status) {
		return new NixlException(status, "fetch_remote_md", null, "peer", "test");
	}

	@Test
	void aConfiguredInstanceKeepsItsSettingsAndStaysInTheRegistry() {
		Retry configured = this.registry.retry(MetadataExchangeRetry.NAME, RetryConfig.custom().maxAttempts(5).build());
		MetadataExchangeRetry retry = new MetadataExchangeRetry(this.registry);
		assertThat(retry.retry()).isNotSameAs(configured);
		assertThat(retry.retry().getRetryConfig().getMaxAttempts()).isEqualTo(5);
		assertThat(this.registry.retry(MetadataExchangeRetry.NAME)).isSameAs(retry.retry());
	}

	@Test
	void closingTheRetryingExchangeClosesTheDelegate() {
		InMemoryMetadataExchange delegate = new InMemoryMetadataExchange();
		MetadataExchange retrying = new MetadataExchangeRetry(RetryRegistry.ofDefaults()).wrap(delegate);
		retrying.close();
		NixlException closed = catchThrowableOfType(NixlException.class, () -> delegate.fetch("any", Duration.ZERO));
		assertThat(closed.status()).isEqualTo(NixlStatus.CLOSED);
	}

}
