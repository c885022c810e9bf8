package dev.nixl4j.kv;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.Engine;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.testsupport.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The integrity checks of KV leases ({@link KvIntegrity}) on every engine (one subclass
 * per engine): generations that catch blocks handed out again, CRC32C that catches blocks
 * written to after the lease, and honest pulls that pass both, checked byte by byte.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class KvIntegrityTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration LONG_LEASE = Duration.ofMinutes(5);

	/** 3 layers, K and V, 32 blocks of 16 tokens x 4 heads x 8 elements x 2 bytes. */
	private static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(3)
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

	/** A cache with its own agent, published. */
	private PagedKvCache cache(String role, KvCacheLayout layout) {
		PagedKvCache cache = this.kv.cache(role, layout, (config) -> {
		});
		this.kv.publish(cache);
		return cache;
	}

	private KvProducer producer(PagedKvCache cache, KvIntegrity integrity) {
		return this.kv.producer(cache, (builder) -> builder.integrity(integrity));
	}

	private KvConsumer consumer(PagedKvCache cache, int rank, KvProducer producer) {
		return this.kv.consumer(cache, rank, producer);
	}

	private static long seed(int region, int block, long generation) {
		return generation * 1_000_000_007L + region * 65_537L + block;
	}

	private static void fill(PagedKvCache cache, int[] blockIds, long generation) {
		for (int r = 0; r < cache.layout().regionCount(); r++) {
			for (int id : blockIds) {
				Bytes.fill(cache.block(r, id), seed(r, id, generation));
			}
		}
	}

	private static void assertHolds(PagedKvCache cache, int[] local, int[] remote, long generation) {
		for (int r = 0; r < cache.layout().regionCount(); r++) {
			for (int i = 0; i < local.length; i++) {
				assertThat(Bytes.hasPattern(cache.block(r, local[i]), seed(r, remote[i], generation)))
					.as("region %d, local block %d <- producer block %d", r, local[i], remote[i])
					.isTrue();
			}
		}
	}

	@Test
	void aBlockWrittenToAfterTheLeaseFailsTheCrc32cPullNamingItAndIsCounted() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		KvProducer producer = producer(producerCache, KvIntegrity.CRC32C);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] blocks = producerCache.allocator().allocate(6);
		fill(producerCache, blocks, 1);
		KvLease lease = KvFixture.leaseKeeping(producer, "tampered", blocks, 1, LONG_LEASE);
		// one byte of the last region of the third block changes after the lease
		MemorySegment target = producerCache.block(LAYOUT.regionCount() - 1, blocks[2]);
		target.set(ValueLayout.JAVA_BYTE, 100, (byte) ~target.get(ValueLayout.JAVA_BYTE, 100));
		int[] local = consumerCache.allocator().allocate(6);

		KvIntegrityException failure = catchThrowableOfType(KvIntegrityException.class,
				() -> consumer.pull(lease.params(), local, WAIT));

		assertThat(failure.requestId()).isEqualTo("tampered");
		assertThat(failure.remoteAgent()).isEqualTo(producerCache.agent().name());
		assertThat(failure.producerBlockId()).isEqualTo(blocks[2]);
		assertThat(failure.localBlockId()).isEqualTo(local[2]);
		assertThat(failure.confirmation()).isEqualTo(LeaseConfirmation.HELD);
		assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_INVALID_STATE);
		assertThat(failure.getMessage()).contains("'tampered'", "producer block " + blocks[2], "must not be used");
		assertThat(consumer.integrityFailures()).isOne();
		// the producer confirmed the lease itself: it completed
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
	}

	@Test
	void aBlockHandedOutAgainWhileLeasedIsAnsweredStaleAndLeftToItsNewOwner() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		KvProducer producer = producer(producerCache, KvIntegrity.GENERATION);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] blocks = producerCache.allocator().allocate(4);
		fill(producerCache, blocks, 1);
		KvLease lease = KvFixture.leaseKeeping(producer, "reused", blocks, 1, LONG_LEASE);
		producerCache.allocator().release(blocks);
		// the application releases a leased block once too often: it is free, and
		// handed out again with another request's data
		producerCache.allocator().release(blocks[1]);
		assertThat(producerCache.allocator().allocate(1)).containsExactly(blocks[1]);
		fill(producerCache, new int[] { blocks[1] }, 2);
		int[] local = consumerCache.allocator().allocate(4);

		KvLeaseLostException failure = catchThrowableOfType(KvLeaseLostException.class,
				() -> consumer.pull(lease.params(), local, WAIT));

		assertThat(failure).isNotInstanceOf(KvIntegrityException.class);
		assertThat(failure.confirmation()).isEqualTo(LeaseConfirmation.STALE);
		assertThat(failure.getMessage()).contains("STALE", "'reused'", "must not be used");
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.STALE);
		assertThat(producer.activeLeases()).isZero();
		// the blocks still of the lease's generation were released; the reused one keeps
		// its new owner's reference
		assertThat(producerCache.allocator().references(blocks[1])).isOne();
		assertThat(producerCache.allocator().freeCount()).isEqualTo(LAYOUT.numBlocks() - 1);
	}

	@Test
	void aPullWithTheParametersOfALeaseWhoseBlocksWereLeasedAgainIsNotHeld() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		KvProducer producer = producer(producerCache, KvIntegrity.GENERATION);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] blocks = producerCache.allocator().allocate(3);
		fill(producerCache, blocks, 1);
		KvLease first = KvFixture.leaseKeeping(producer, "again", blocks, 1, LONG_LEASE);
		producerCache.allocator().release(blocks);
		// the producer's release path frees the blocks; they are handed out again and
		// leased under the same request
		assertThat(consumer.release(first.params())).isTrue();
		assertThat(first.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.RELEASED);
		int[] reused = producerCache.allocator().allocate(3);
		assertThat(reused).containsExactlyInAnyOrder(blocks);
		fill(producerCache, reused, 2);
		KvLease second = KvFixture.leaseKeeping(producer, "again", reused, 1, LONG_LEASE);
		assertThat(second.params().generation()).isNotEqualTo(first.params().generation());
		int[] local = consumerCache.allocator().allocate(3);

		KvLeaseLostException failure = catchThrowableOfType(KvLeaseLostException.class,
				() -> consumer.pull(first.params(), local, WAIT));

		assertThat(failure.confirmation()).isNotNull().isNotEqualTo(LeaseConfirmation.HELD);
		assertThat(second.outcome()).isNotDone();
		consumer.pull(second.params(), local, WAIT);
		assertHolds(consumerCache, local, reused, 2);
		assertThat(second.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
	}

	@Test
	void aConsumerThatReportsAnotherGenerationIsAnsweredStale() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		KvProducer producer = producer(producerCache, KvIntegrity.GENERATION);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] blocks = producerCache.allocator().allocate(2);
		KvLease lease = KvFixture.leaseKeeping(producer, "other-generation", blocks, 1, LONG_LEASE);
		KvTransferParams params = lease.params();
		KvTransferParams wrong = params.toBuilder().generation(params.generation() + 1).build();

		KvLeaseLostException failure = catchThrowableOfType(KvLeaseLostException.class,
				() -> consumer.pull(wrong, consumerCache.allocator().allocate(2), WAIT));

		assertThat(failure.confirmation()).isEqualTo(LeaseConfirmation.STALE);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.STALE);
		assertThat(producerCache.allocator().references(blocks[0])).isOne();
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 2 })
	void honestCrc32cPullsPassEveryCheckForEveryConsumerRanksSlice(int ranks) {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		KvProducer producer = producer(producerCache, KvIntegrity.CRC32C);
		int[] remote = producerCache.allocator().allocate(5);
		fill(producerCache, remote, 7);
		KvLease lease = KvFixture.leaseKeeping(producer, "honest", remote, ranks, LONG_LEASE);
		producerCache.allocator().release(remote);
		assertThat(lease.params().checksums()).hasSize(5 * ranks);
		assertThat(lease.params().generation()).isNotZero();
		int headsPerRank = LAYOUT.numKvHeads() / ranks;
		long headBytes = (long) LAYOUT.blockSize() * LAYOUT.headDim() * LAYOUT.dtypeSize();

		for (int r = 0; r < ranks; r++) {
			PagedKvCache cache = cache("decode" + r, LAYOUT.headSlice(ranks).withNumBlocks(12));
			KvConsumer consumer = consumer(cache, r, producer);
			int[] local = cache.allocator().allocate(5);

			consumer.pull(lease.params(), local, WAIT);

			assertThat(consumer.integrityFailures()).isZero();
			for (int region = 0; region < LAYOUT.regionCount(); region++) {
				for (int i = 0; i < local.length; i++) {
					MemorySegment mine = cache.block(region, local[i]);
					MemorySegment theirs = producerCache.block(region, remote[i]);
					for (int h = 0; h < headsPerRank; h++) {
						long at = cache.layout().elementOffset(0, h, 0);
						long from = LAYOUT.elementOffset(0, r * headsPerRank + h, 0);
						assertThat(Bytes.same(mine.asSlice(at, headBytes), theirs.asSlice(from, headBytes)))
							.as("rank %d, region %d, block %d, head %d", r, region, local[i], h)
							.isTrue();
					}
				}
			}
		}
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(producerCache.allocator().freeCount()).isEqualTo(LAYOUT.numBlocks());
	}

	@ParameterizedTest
	@EnumSource(KvIntegrity.class)
	void eachIntegrityCarriesItsOwnDataAndHonestPullsMoveEveryByte(KvIntegrity integrity) {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		KvProducer producer = producer(producerCache, integrity);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = { 9, 3, 4, 5, 20 };
		producerCache.allocator().allocate(LAYOUT.numBlocks());
		fill(producerCache, remote, 4);
		KvLease lease = KvFixture.leaseKeeping(producer, "each", remote, 1, LONG_LEASE);
		int[] local = consumerCache.allocator().allocate(5);

		consumer.pull(lease.params(), local, WAIT);

		assertHolds(consumerCache, local, remote, 4);
		assertThat(lease.params().generation() != 0).isEqualTo(integrity != KvIntegrity.NONE);
		assertThat(lease.params().checksums()).hasSize((integrity == KvIntegrity.CRC32C) ? 5 : 0);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
	}

	@Test
	void parametersWithoutIntegrityDataArePulledWithTheOldDoneMessage() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		KvProducer producer = producer(producerCache, KvIntegrity.GENERATION);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = producerCache.allocator().allocate(3);
		fill(producerCache, remote, 5);
		KvLease lease = KvFixture.leaseKeeping(producer, "legacy", remote, 1, LONG_LEASE);
		KvTransferParams params = lease.params();
		// as a consumer sees parameters that passed through code that knows only the
		// first six components: it sends the three-field done message
		KvTransferParams legacy = KvTransferParams.builder()
			.producerAgent(params.producerAgent())
			.requestId(params.requestId())
			.blockIds(params.blockIds())
			.layoutFingerprint(params.layoutFingerprint())
			.leaseId(params.leaseId())
			.consumerRanks(params.consumerRanks())
			.build();
		int[] local = consumerCache.allocator().allocate(3);

		consumer.pull(legacy, local, WAIT);

		assertHolds(consumerCache, local, remote, 5);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
	}

}
