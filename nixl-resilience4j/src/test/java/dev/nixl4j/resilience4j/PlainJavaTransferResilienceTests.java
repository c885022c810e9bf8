package dev.nixl4j.resilience4j;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.testsupport.Bytes;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A service without Spring adds the bulkhead and the per-peer breakers to its agent and
 * waits with the time limiter's deadline, as docs/operations.md shows.
 */
class PlainJavaTransferResilienceTests {

	private static final int SIZE = 1 << 16;

	@Test
	void aPlainServiceBoundsItsTransfersAndRecordsThemPerPeer() {
		TransferBulkhead bulkhead = new TransferBulkhead(BulkheadRegistry.ofDefaults(), 1);
		PeerCircuitBreakers breakers = new PeerCircuitBreakers(CircuitBreakerRegistry.ofDefaults());
		TransferTimeLimiter timeLimiter = new TransferTimeLimiter(TimeLimiterRegistry.ofDefaults(),
				Duration.ofSeconds(30));
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
					BulkheadFullException full = catchThrowableOfType(BulkheadFullException.class, read::post);
					assertThat(full).hasMessageContaining("'nixl-transfers' is full");
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
		assertThat(new TransferTimeLimiter(registry, Duration.ofSeconds(30)).timeout())
			.isEqualTo(Duration.ofSeconds(3));
	}

}
