package dev.nixl4j.resilience4j;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.TransferRefusedException;
import dev.nixl4j.kv.KvBlocks;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvDirectory;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.LeaseOutcome;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Bytes;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A KV pull that the transfer bulkhead or a peer's circuit breaker refuses fails with a
 * typed, retryable {@link TransferRefusedException} that names the limit, gives the lease
 * and the local blocks back, and moves nothing; once the limit lets transfers through, a
 * new lease is pulled byte for byte. On every engine (one subclass per engine).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class KvPullRefusalTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(2)
		.blocks(16)
		.blockSize(16)
		.kvHeads(4)
		.headDim(8)
		.build();

	private final InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();

	private NixlAgent prefillAgent;

	private NixlAgent decodeAgent;

	private PagedKvCache prefill;

	private PagedKvCache decode;

	private MetadataPublication published;

	private KvProducer producer;

	/**
	 * Returns the engine under test.
	 * @return the engine
	 */
	abstract Engine engine();

	@BeforeEach
	void start(TestInfo test) {
		String name = test.getTestMethod().orElseThrow().getName() + "-" + engine();
		this.prefillAgent = NixlAgent.create(AgentConfig.builder("prefill-" + name).engine(engine()).build());
		this.decodeAgent = NixlAgent.create(AgentConfig.builder("decode-" + name).engine(engine()).build());
		this.prefill = PagedKvCache.allocate(this.prefillAgent, LAYOUT);
		this.decode = PagedKvCache.allocate(this.decodeAgent, LAYOUT);
		this.published = MetadataPublication.builder(this.exchange, this.prefillAgent)
			.document(KvDirectory.HANDLE_DOCUMENT, this.prefill.handle().toJson())
			.build();
		this.published.publish();
		this.producer = KvProducer.builder(this.prefill).peers(PeerLoader.of(this.exchange)).build();
	}

	@AfterEach
	void stop() {
		this.producer.close();
		this.published.close();
		this.prefillAgent.close();
		this.decodeAgent.close();
		this.prefill.close();
		this.decode.close();
		this.exchange.close();
	}

	private KvLease lease(String requestId, long seed) {
		int[] blocks = this.prefill.allocator().allocate(2);
		for (int r = 0; r < LAYOUT.regionCount(); r++) {
			for (int i = 0; i < blocks.length; i++) {
				Bytes.fill(this.prefill.block(r, blocks[i]), seed + r * 100 + i);
			}
		}
		// the lease takes over the blocks' references
		return this.producer.lease(requestId, blocks, KvLease.options().ttl(Duration.ofMinutes(5)));
	}

	private void assertPulled(KvConsumer consumer, long seed) {
		try (KvBlocks blocks = consumer.pull(lease("after-" + seed, seed).params(), WAIT)) {
			for (int r = 0; r < LAYOUT.regionCount(); r++) {
				for (int i = 0; i < blocks.size(); i++) {
					assertThat(Bytes.hasPattern(blocks.block(r, i), seed + r * 100 + i)).isTrue();
				}
			}
		}
	}

	private void assertNothingHeld(KvConsumer consumer, KvLease refused) {
		assertThat(refused.outcome()).as("the refused pull gave the lease back")
			.succeedsWithin(WAIT)
			.isEqualTo(LeaseOutcome.RELEASED);
		assertThat(this.decode.allocator().freeCount()).as("the refused pull gave its blocks back")
			.isEqualTo(LAYOUT.numBlocks());
		assertThat(consumer.quarantinedBlocks()).isZero();
	}

	@Test
	void aFullBulkheadRefusesAPullWithATypedRetryableFailure() {
		TransferBulkhead bulkhead = TransferBulkhead.builder(BulkheadRegistry.ofDefaults())
			.defaultMaxInFlight(1)
			.build();
		this.decodeAgent.addTransferListener(bulkhead);
		try (KvConsumer consumer = KvConsumer.builder(this.decode).exchange(this.exchange).build()) {
			assertPulled(consumer, 1);
			Bulkhead permits = bulkhead.bulkhead();
			permits.acquirePermission();
			KvLease refused = lease("refused", 2);

			TransferRefusedException failure = catchThrowableOfType(TransferRefusedException.class,
					() -> consumer.pull(refused.params(), WAIT));

			assertThat(failure.status()).isEqualTo(NixlStatus.REFUSED);
			assertThat(failure.reason()).isEqualTo(TransferRefusedException.Reason.TOO_MANY_IN_FLIGHT);
			assertThat(failure.limiter()).isEqualTo(TransferBulkhead.NAME);
			assertThat(failure.retryable()).isTrue();
			assertThat(failure.getCause()).isInstanceOf(BulkheadFullException.class);
			assertNothingHeld(consumer, refused);
			permits.releasePermission();
			assertPulled(consumer, 3);
		}
	}

	@Test
	void anOpenBreakerRefusesAPullWithATypedRetryableFailure() {
		PeerCircuitBreakers breakers = new PeerCircuitBreakers(CircuitBreakerRegistry.ofDefaults());
		this.decodeAgent.addTransferListener(breakers);
		try (KvConsumer consumer = KvConsumer.builder(this.decode).exchange(this.exchange).build()) {
			assertPulled(consumer, 1);
			breakers.circuitBreaker(this.prefillAgent.name()).transitionToOpenState();
			KvLease refused = lease("suspended", 2);

			TransferRefusedException failure = catchThrowableOfType(TransferRefusedException.class,
					() -> consumer.pull(refused.params(), WAIT));

			assertThat(failure.reason()).isEqualTo(TransferRefusedException.Reason.PEER_SUSPENDED);
			assertThat(failure.limiter()).isEqualTo(PeerCircuitBreakers.PREFIX + this.prefillAgent.name());
			assertThat(failure.remoteAgent()).isEqualTo(this.prefillAgent.name());
			assertThat(failure.retryable()).isTrue();
			assertThat(failure.getCause()).isInstanceOf(CallNotPermittedException.class);
			assertNothingHeld(consumer, refused);
			breakers.circuitBreaker(this.prefillAgent.name()).transitionToClosedState();
			assertPulled(consumer, 3);
		}
	}

}
