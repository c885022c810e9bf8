package dev.nixl4j.kv;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.Engine;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.FaultInjectingDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A consumer's pull that owns its local blocks
 * ({@link KvConsumer#pull(KvTransferParams, Duration)}), on every engine (one subclass
 * per engine): the blocks it returns hold the producer's bytes, closing them gives them
 * back, a failed pull gives them back itself, and a pull given up while its READ may
 * still land holds them back until the bound. The consumer names only its exchange: it
 * loads producers, finds their handles and publishes its own agent there.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class KvPullTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration LONG_LEASE = Duration.ofMinutes(5);

	/** 2 layers, K and V, 32 blocks of 1 KiB. */
	private static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(2)
		.blocks(32)
		.blockSize(16)
		.kvHeads(4)
		.headDim(8)
		.build();

	@RegisterExtension
	final KvFixture kv = new KvFixture(this::engine);

	/**
	 * Returns the engine under test.
	 * @return the engine
	 */
	protected abstract Engine engine();

	/** A producer whose handle is published beside its metadata. */
	private KvProducer producer() {
		PagedKvCache cache = this.kv.cache("prefill", LAYOUT, (builder) -> {
		});
		this.kv.publication(cache.agent(), cache).publish();
		return this.kv.producer(cache);
	}

	/** A consumer that names only the exchange. */
	private KvConsumer consumer(PagedKvCache cache) {
		return this.kv.track(KvConsumer.builder(cache).exchange(this.kv.exchange()).peerTimeout(WAIT).build());
	}

	private static void fill(PagedKvCache cache, int[] blockIds, long generation) {
		for (int r = 0; r < cache.layout().regionCount(); r++) {
			for (int id : blockIds) {
				Bytes.fill(cache.block(r, id), KvTransferTests.seed(r, id, generation));
			}
		}
	}

	/** A lease of freshly filled producer blocks, which the lease takes over. */
	private static KvLease lease(KvProducer producer, String requestId, int blocks, long generation) {
		int[] remote = producer.cache().allocator().allocate(blocks);
		fill(producer.cache(), remote, generation);
		return producer.lease(requestId, remote, KvLease.options().ttl(LONG_LEASE));
	}

	@Test
	void aPullReturnsBlocksHoldingTheProducersBytesAndClosingGivesThemBack() {
		KvProducer producer = producer();
		PagedKvCache cache = this.kv.cache("decode", LAYOUT, (builder) -> {
		});
		KvConsumer consumer = consumer(cache);
		KvLease lease = lease(producer, "owned", 3, 4);
		int free = cache.allocator().freeCount();

		KvBlocks blocks = consumer.pull(lease.params(), WAIT);

		assertThat(blocks.size()).isEqualTo(3);
		assertThat(blocks.bytes()).isEqualTo(3L * LAYOUT.regionCount() * LAYOUT.blockLength());
		assertThat(cache.allocator().freeCount()).isEqualTo(free - 3);
		int[] remote = lease.params().blockIdArray();
		for (int r = 0; r < LAYOUT.regionCount(); r++) {
			for (int i = 0; i < blocks.size(); i++) {
				assertThat(Bytes.hasPattern(blocks.block(r, i), KvTransferTests.seed(r, remote[i], 4)))
					.as("region %d, pulled block %d <- producer block %d", r, blocks.blockId(i), remote[i])
					.isTrue();
				assertThat(
						Bytes.hasPattern(cache.block(r, blocks.blockIds()[i]), KvTransferTests.seed(r, remote[i], 4)))
					.isTrue();
			}
		}
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);

		blocks.close();
		assertThat(cache.allocator().freeCount()).isEqualTo(free);
		blocks.close();
		assertThat(cache.allocator().freeCount()).as("closing twice gives nothing back twice").isEqualTo(free);
		assertThat(consumer.quarantinedBlocks()).isZero();
	}

	@Test
	void aPullWhoseLeaseWasLostGivesItsBlocksBack() {
		KvProducer producer = producer();
		PagedKvCache cache = this.kv.cache("decode", LAYOUT, (builder) -> {
		});
		KvConsumer consumer = consumer(cache);
		int[] remote = producer.cache().allocator().allocate(4);
		fill(producer.cache(), remote, 1);
		KvLease lease = producer.lease("expired", remote, KvLease.options().ttl(Duration.ofMillis(50)));
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.EXPIRED);
		int free = cache.allocator().freeCount();

		KvLeaseLostException failure = catchThrowableOfType(KvLeaseLostException.class,
				() -> consumer.pull(lease.params(), WAIT));

		assertThat(failure.confirmation()).isEqualTo(LeaseConfirmation.EXPIRED);
		assertThat(cache.allocator().freeCount()).isEqualTo(free);
		assertThat(consumer.quarantinedBlocks()).isZero();
	}

	@Test
	void aPullThatFindsTooFewFreeBlocksGivesTheLeaseBack() {
		KvProducer producer = producer();
		PagedKvCache cache = this.kv.cache("decode", LAYOUT, (builder) -> {
		});
		KvConsumer consumer = consumer(cache);
		int[] taken = cache.allocator().allocate(LAYOUT.numBlocks() - 2);
		KvLease lease = lease(producer, "too-big", 3, 1);

		NixlException full = catchThrowableOfType(NixlException.class, () -> consumer.pull(lease.params(), WAIT));

		assertThat(full.status()).isEqualTo(NixlStatus.BUSY);
		assertThat(full.retryable()).isTrue();
		assertThat(full.getMessage()).contains("'too-big'", "3 blocks", "given back");
		assertThat(cache.allocator().freeCount()).isEqualTo(2);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.RELEASED);
		cache.allocator().release(taken);
	}

	@Test
	void aPullGivenUpWhileItsReadMayLandHoldsItsBlocksBackUntilTheBound() {
		KvProducer producer = producer();
		KvFixture.FaultInjectingAgent decode = this.kv.faultInjectingAgent("decode-stalled");
		FaultInjectingDriver driver = decode.driver();
		PagedKvCache cache = this.kv.track(PagedKvCache.allocate(decode.agent(), LAYOUT));
		Duration bound = Duration.ofSeconds(2);
		KvConsumer consumer = this.kv
			.track(KvConsumer.builder(cache).exchange(this.kv.exchange()).peerTimeout(WAIT).quarantine(bound).build());
		// connected first, so that the held READ is the pull's and not the handshake's
		consumer.pull(lease(producer, "first", 1, 1).params(), WAIT).close();
		KvLease lease = lease(producer, "stalled", 3, 2);
		int free = cache.allocator().freeCount();
		// the READ lands, but the consumer's wait for it times out
		driver.deferPosts(true);
		driver.holdTransfers(true);

		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> consumer.pull(lease.params(), Duration.ofMillis(500)));
		long failed = System.nanoTime();

		assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(consumer.quarantinedBlocks()).isEqualTo(3);
		assertThat(cache.allocator().freeCount()).as("blocks a late READ may still write are not handed out")
			.isEqualTo(free - 3);
		driver.holdTransfers(false);
		driver.deferPosts(false);
		Eventually.until(WAIT, "the held blocks came back", () -> cache.allocator().freeCount() == free);
		long heldMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failed);
		assertThat(consumer.quarantinedBlocks()).isZero();
		System.out.printf("%s: blocks of a pull given up in flight held %d ms (bound %d ms)%n", engine(), heldMillis,
				bound.toMillis());
	}

	@Test
	void aCallersOwnBlocksOfAPullGivenUpInFlightAreHeldBackEvenWhenTheCallerLetsThemGo() {
		KvProducer producer = producer();
		KvFixture.FaultInjectingAgent decode = this.kv.faultInjectingAgent("decode-own");
		FaultInjectingDriver driver = decode.driver();
		PagedKvCache cache = this.kv.track(PagedKvCache.allocate(decode.agent(), LAYOUT));
		KvConsumer consumer = this.kv.track(KvConsumer.builder(cache)
			.exchange(this.kv.exchange())
			.peerTimeout(WAIT)
			.quarantine(Duration.ofSeconds(2))
			.build());
		consumer.pull(lease(producer, "first", 1, 1).params(), WAIT).close();
		KvLease lease = lease(producer, "own-blocks", 2, 3);
		int free = cache.allocator().freeCount();
		int[] local = cache.allocator().allocate(2);
		driver.deferPosts(true);
		driver.holdTransfers(true);

		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> consumer.pull(lease.params(), local, Duration.ofMillis(500)));
		cache.allocator().release(local);

		assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(cache.allocator().freeCount()).isEqualTo(free - 2);
		driver.holdTransfers(false);
		driver.deferPosts(false);
		Eventually.until(WAIT, "the held blocks came back", () -> cache.allocator().freeCount() == free);
	}

	@Test
	void aConsumerWithAPublicationOfItsOwnUsesIt() {
		KvProducer producer = producer();
		PagedKvCache cache = this.kv.cache("decode", LAYOUT, (builder) -> {
		});
		MetadataPublication publication = this.kv.publication(cache.agent(), null);
		KvConsumer consumer = this.kv.track(KvConsumer.builder(cache)
			.exchange(this.kv.exchange())
			.publication(publication)
			.peerTimeout(WAIT)
			.build());

		try (KvBlocks blocks = consumer.pull(lease(producer, "given", 2, 5).params(), WAIT)) {
			assertThat(blocks.size()).isEqualTo(2);
		}

		assertThat(publication.state().status()).isEqualTo(MetadataPublication.Status.PUBLISHED);
	}

	@Test
	void aConsumerNeedsAnExchangeOrALoaderAndAPublicationOfItsOwnAgent() {
		PagedKvCache cache = this.kv.cache("decode", LAYOUT, (builder) -> {
		});
		PagedKvCache other = this.kv.cache("other", LAYOUT, (builder) -> {
		});

		assertThatIllegalStateException().isThrownBy(() -> KvConsumer.builder(cache).build())
			.withMessageContaining("MetadataExchange");
		assertThatIllegalStateException()
			.isThrownBy(() -> KvConsumer.builder(cache)
				.peers(PeerLoader.preloaded())
				.publication(this.kv.publication(cache.agent(), null))
				.build())
			.withMessageContaining("exchange");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> KvConsumer.builder(cache)
				.exchange(this.kv.exchange())
				.publication(this.kv.publication(other.agent(), null))
				.build())
			.withMessageContaining(other.agent().name());
		assertThatIllegalArgumentException().isThrownBy(() -> KvConsumer.builder(cache).quarantine(Duration.ZERO))
			.withMessageContaining("quarantine");
	}

}
