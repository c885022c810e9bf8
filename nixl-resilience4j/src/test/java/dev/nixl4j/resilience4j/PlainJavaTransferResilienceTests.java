package dev.nixl4j.resilience4j;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferRefusedException;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.testsupport.Bytes;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A service without Spring adds the bulkhead and the per-peer breakers to its agent and
 * waits with the time limiter's deadline, as docs/operations.md shows.
 */
class PlainJavaTransferResilienceTests {

	private static final int SIZE = 1 << 16;

	@Test
	void aPlainServiceBoundsItsTransfersAndRecordsThemPerPeer() {
		TransferBulkhead bulkhead = TransferBulkhead.builder(BulkheadRegistry.ofDefaults())
			.defaultMaxInFlight(1)
			.build();
		PeerCircuitBreakers breakers = new PeerCircuitBreakers(CircuitBreakerRegistry.ofDefaults());
		TransferTimeLimiter timeLimiter = TransferTimeLimiter.builder(TimeLimiterRegistry.ofDefaults())
			.defaultTimeout(Duration.ofSeconds(30))
			.build();
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("plain-app").engine(Engine.EMBEDDED).build());
				NixlAgent peer = NixlAgent.create(AgentConfig.builder("plain-peer").engine(Engine.EMBEDDED).build());
				Arena arena = Arena.ofShared()) {
			agent.addTransferListener(breakers);
			agent.addTransferListener(bulkhead);
			MemorySegment remote = Bytes.pattern(arena, SIZE, 7);
			MemorySegment local = Bytes.pattern(arena, SIZE, 0);
			try (Registration _ = peer.register(remote); Registration _ = agent.register(local)) {
				agent.loadRemoteMetadata(peer.localMetadata());
				try (Transfer read = agent.createTransfer(XferOp.READ, DescriptorList.of(local),
						DescriptorList.of(remote), "plain-peer", null)) {
					Bulkhead permits = bulkhead.bulkhead();
					assertThat(permits.getName()).isEqualTo(TransferBulkhead.NAME);
					permits.acquirePermission();
					TransferRefusedException full = catchThrowableOfType(TransferRefusedException.class, read::post);
					assertThat(full.status()).isEqualTo(NixlStatus.REFUSED);
					assertThat(full.reason()).isEqualTo(TransferRefusedException.Reason.TOO_MANY_IN_FLIGHT);
					assertThat(full.limiter()).isEqualTo(TransferBulkhead.NAME);
					assertThat(full.retryable()).isTrue();
					assertThat(full.remoteAgent()).isEqualTo("plain-peer");
					assertThat(full.getCause()).isInstanceOf(BulkheadFullException.class);
					assertThat(Bytes.hasPattern(local, 0)).as("the refused READ moved nothing").isTrue();
					permits.releasePermission();

					read.post();
					assertThat(timeLimiter.await(read).state()).isEqualTo(TransferState.COMPLETED);
					assertThat(Bytes.hasPattern(local, 7)).isTrue();
					assertThat(permits.getMetrics().getAvailableConcurrentCalls()).isEqualTo(1);
					assertThat(breakers.circuitBreaker("plain-peer").getName()).isEqualTo("nixl-peer-plain-peer");
					assertThat(breakers.circuitBreaker("plain-peer").getMetrics().getNumberOfSuccessfulCalls())
						.isEqualTo(1);
					assertThat(timeLimiter.timeout()).isEqualTo(Duration.ofSeconds(30));
					assertThat(timeLimiter.timeLimiter().getName()).isEqualTo(TransferTimeLimiter.NAME);
				}
			}
		}
	}

	@Test
	void aConfiguredTimeLimiterKeepsItsOwnTimeout() {
		TimeLimiterRegistry registry = TimeLimiterRegistry.ofDefaults();
		registry.timeLimiter(TransferTimeLimiter.NAME,
				TimeLimiterConfig.custom().timeoutDuration(Duration.ofSeconds(3)).build());
		assertThat(TransferTimeLimiter.builder(registry).defaultTimeout(Duration.ofSeconds(30)).build().timeout())
			.isEqualTo(Duration.ofSeconds(3));
	}

	@Test
	void withoutADefaultTheRegistrysDefaultConfigurationApplies() {
		BulkheadRegistry bulkheads = BulkheadRegistry.ofDefaults();
		TimeLimiterRegistry timeLimiters = TimeLimiterRegistry.ofDefaults();

		assertThat(TransferBulkhead.builder(bulkheads).build().bulkhead().getBulkheadConfig().getMaxConcurrentCalls())
			.isEqualTo(bulkheads.getDefaultConfig().getMaxConcurrentCalls());
		assertThat(TransferTimeLimiter.builder(timeLimiters).build().timeout())
			.isEqualTo(timeLimiters.getDefaultConfig().getTimeoutDuration());
	}

	@Test
	void badDefaultsAreRefusedNamingTheSetting() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> TransferBulkhead.builder(BulkheadRegistry.ofDefaults()).defaultMaxInFlight(0))
			.withMessageContaining("defaultMaxInFlight");
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> TransferTimeLimiter.builder(TimeLimiterRegistry.ofDefaults()).defaultTimeout(Duration.ZERO))
			.withMessageContaining("defaultTimeout");
	}

	@Test
	void anOpenBreakerRefusesAPostWithATypedRetryableFailure() {
		PeerCircuitBreakers breakers = new PeerCircuitBreakers(CircuitBreakerRegistry.ofDefaults());
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("plain-open").engine(Engine.EMBEDDED).build());
				NixlAgent peer = NixlAgent
					.create(AgentConfig.builder("plain-suspended").engine(Engine.EMBEDDED).build());
				Arena arena = Arena.ofShared()) {
			agent.addTransferListener(breakers);
			MemorySegment remote = Bytes.pattern(arena, SIZE, 5);
			MemorySegment local = Bytes.pattern(arena, SIZE, 0);
			try (Registration _ = peer.register(remote); Registration _ = agent.register(local)) {
				agent.loadRemoteMetadata(peer.localMetadata());
				try (Transfer read = agent.createTransfer(XferOp.READ, DescriptorList.of(local),
						DescriptorList.of(remote), "plain-suspended", null)) {
					breakers.circuitBreaker("plain-suspended").transitionToOpenState();

					TransferRefusedException open = catchThrowableOfType(TransferRefusedException.class, read::post);

					assertThat(open.status()).isEqualTo(NixlStatus.REFUSED);
					assertThat(open.reason()).isEqualTo(TransferRefusedException.Reason.PEER_SUSPENDED);
					assertThat(open.limiter()).isEqualTo("nixl-peer-plain-suspended");
					assertThat(open.retryable()).isTrue();
					assertThat(open.getCause()).isInstanceOf(CallNotPermittedException.class);
					assertThat(Bytes.hasPattern(local, 0)).as("the refused READ moved nothing").isTrue();
				}
			}
		}
	}

}
