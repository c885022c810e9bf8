package dev.nixl4j.autoconfigure.resilience;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.resilience4j.MetadataExchangeRetry;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.MetadataExchange;
import io.github.resilience4j.retry.Retry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The {@code nixl-metadata} retry around the auto-configured exchange (this application
 * serves the HTTP registry, so the exchange is its in-memory store) with real agents of
 * the embedded engine. nixl-resilience4j's own tests cover the retry without Spring.
 */
class MetadataExchangeRetryTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(NixlResilienceAutoConfigurationTests.RESILIENCE4J)
		.withConfiguration(NixlResilienceAutoConfigurationTests.NIXL)
		.withPropertyValues("nixl.agent.engine=embedded", "nixl.agent.name=app", "nixl.metadata.exchange=http",
				"nixl.metadata.http.token=0123456789abcdef",
				"resilience4j.retry.instances.nixl-metadata.max-attempts=3",
				"resilience4j.retry.instances.nixl-metadata.wait-duration=10ms");

	@Test
	void aPeerPublishedAfterTheFirstAttemptTimedOutIsLoadedByARetry() {
		this.runner.run(context -> {
			NixlAgent agent = context.getBean(NixlAgent.class);
			MetadataExchange exchange = context.getBean(MetadataExchange.class);
			Retry retry = context.getBean(MetadataExchangeRetry.class).retry();
			try (Arena arena = Arena.ofShared();
					NixlAgent peer = NixlAgent
						.create(AgentConfig.builder("late-peer").engine(Engine.EMBEDDED).build())) {
				MemorySegment remote = Bytes.pattern(arena, 1 << 20, 9);
				MemorySegment local = Bytes.pattern(arena, 1 << 20, 1);
				try (Registration remoteRegistration = peer.register(remote);
						Registration registration = agent.register(local)) {
					AtomicInteger retries = new AtomicInteger();
					// the peer appears only once the first attempt has failed
					retry.getEventPublisher().onRetry(event -> {
						if (retries.getAndIncrement() == 0) {
							exchange.publish(peer);
						}
					});
					try (MetadataExchange.Watch watch = exchange.load(agent, "late-peer", Duration.ofMillis(200))) {
						assertThat(agent.hasRemoteMetadata("late-peer")).isTrue();
					}
					assertThat(retries).hasValue(1);
					assertThat(retry.getMetrics().getNumberOfSuccessfulCallsWithRetryAttempt()).isEqualTo(1);
					try (Transfer read = agent.createTransfer(XferOp.READ, DescriptorList.of(local),
							DescriptorList.of(remote), "late-peer", null)) {
						read.post();
						read.await(Duration.ofSeconds(30));
					}
					assertThat(Bytes.hasPattern(local, 9)).isTrue();
				}
			}
		});
	}

	@Test
	void invalidMetadataIsNotRetried() {
		this.runner.run(context -> {
			MetadataExchange exchange = context.getBean(MetadataExchange.class);
			Retry retry = context.getBean(MetadataExchangeRetry.class).retry();
			AtomicInteger retries = new AtomicInteger();
			retry.getEventPublisher().onRetry(event -> retries.incrementAndGet());
			try (NixlAgent peer = NixlAgent.create(AgentConfig.builder("real-peer").engine(Engine.EMBEDDED).build())) {
				// another agent's metadata under this name: the value names 'real-peer'
				exchange.publish("impostor", peer.localMetadata());
				NixlException invalid = catchThrowableOfType(NixlException.class,
						() -> exchange.fetch("impostor", Duration.ofSeconds(5)));
				assertThat(invalid.status()).isEqualTo(NixlStatus.INVALID_METADATA);
			}
			assertThat(retries).hasValue(0);
			assertThat(retry.getMetrics().getNumberOfFailedCallsWithoutRetryAttempt()).isEqualTo(1);
		});
	}

	@Test
	void aPeerThatNeverAppearsTimesOutAfterEveryAttempt() {
		this.runner.run(context -> {
			MetadataExchange exchange = context.getBean(MetadataExchange.class);
			Retry retry = context.getBean(MetadataExchangeRetry.class).retry();
			long start = System.nanoTime();
			NixlException timeout = catchThrowableOfType(NixlException.class,
					() -> exchange.fetch("never-published", Duration.ofMillis(50)));
			assertThat(timeout.status()).isEqualTo(NixlStatus.TIMEOUT);
			assertThat(timeout.remoteAgent()).isEqualTo("never-published");
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(150));
			assertThat(retry.getMetrics().getNumberOfFailedCallsWithRetryAttempt()).isEqualTo(1);
		});
	}

	@Test
	void aFetchWithoutWaitingAsksOnceSoTheRegistryAnswersAtOnce() {
		this.runner.run(context -> {
			MetadataExchange exchange = context.getBean(MetadataExchange.class);
			Retry retry = context.getBean(MetadataExchangeRetry.class).retry();
			AtomicInteger retries = new AtomicInteger();
			retry.getEventPublisher().onRetry(event -> retries.incrementAndGet());
			NixlException absent = catchThrowableOfType(NixlException.class,
					() -> exchange.fetch("never-published", Duration.ZERO));
			assertThat(absent.remoteAgent()).isEqualTo("never-published");
			assertThat(retries).hasValue(0);
		});
	}

	@Test
	void aLoadWithoutWaitingAsksOnce() {
		this.runner.run(context -> {
			MetadataExchange exchange = context.getBean(MetadataExchange.class);
			Retry retry = context.getBean(MetadataExchangeRetry.class).retry();
			AtomicInteger retries = new AtomicInteger();
			retry.getEventPublisher().onRetry(event -> retries.incrementAndGet());
			NixlException absent = catchThrowableOfType(NixlException.class,
					() -> exchange.load(context.getBean(NixlAgent.class), "never-published", Duration.ZERO));
			assertThat(absent.status()).isEqualTo(NixlStatus.TIMEOUT);
			assertThat(retries).hasValue(0);
		});
	}

}
