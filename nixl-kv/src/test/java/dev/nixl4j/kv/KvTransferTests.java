package dev.nixl4j.kv;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Drain;
import dev.nixl4j.DrainResult;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.FaultInjectingDriver;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * KV block transfers between a producer and consumers, on every engine (one subclass per
 * engine). Agents find each other through an in-memory metadata exchange; every block
 * that moves is checked byte by byte against the pattern of (region, block, generation)
 * it was filled with.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class KvTransferTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration LONG_LEASE = Duration.ofMinutes(5);

	/**
	 * 4 layers, K and V, 64 blocks of 16 tokens x 4 heads x 8 elements x 2 bytes (1 KiB
	 * per block).
	 */
	private static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(4)
		.blocks(64)
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

	private PagedKvCache cache(String role, KvCacheLayout layout) {
		return this.kv.cache(role, layout, (builder) -> {
		});
	}

	private PagedKvCache cache(String role, KvCacheLayout layout, Consumer<AgentConfig.Builder> customizer) {
		return this.kv.cache(role, layout, customizer);
	}

	/**
	 * Records the descriptor count of every transfer an agent posts (its agent must
	 * capture telemetry).
	 */
	private static List<Long> postedDescriptors(NixlAgent agent) {
		List<Long> counts = new CopyOnWriteArrayList<>();
		agent.addTransferListener(new TransferListener() {

			@Override
			public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
					@Nullable NixlException failure) {
				counts.add(transfer.telemetry().descriptorCount());
			}

		});
		return counts;
	}

	private void publish(PagedKvCache... caches) {
		this.kv.publish(caches);
	}

	private KvProducer producer(PagedKvCache cache) {
		return this.kv.producer(cache);
	}

	private KvConsumer consumer(PagedKvCache cache, int rank, KvProducer producer) {
		return this.kv.consumer(cache, rank, producer);
	}

	static long seed(int region, int block, long generation) {
		return generation * 1_000_000_007L + region * 65_537L + block;
	}

	private static void fill(PagedKvCache cache, int[] blockIds, long generation) {
		for (int r = 0; r < cache.layout().regionCount(); r++) {
			for (int id : blockIds) {
				Bytes.fill(cache.block(r, id), seed(r, id, generation));
			}
		}
	}

	/**
	 * Checks that local block {@code local[i]} of every region holds producer block
	 * {@code remote[i]}.
	 */
	private static void assertHolds(PagedKvCache cache, int[] local, int[] remote, long generation) {
		for (int r = 0; r < cache.layout().regionCount(); r++) {
			for (int i = 0; i < local.length; i++) {
				assertThat(Bytes.hasPattern(cache.block(r, local[i]), seed(r, remote[i], generation)))
					.as("region %d, local block %d <- producer block %d", r, local[i], remote[i])
					.isTrue();
			}
		}
	}

	private static int[] randomSubset(Random random, int[] from, int count) {
		List<Integer> pool = new ArrayList<>();
		for (int id : from) {
			pool.add(id);
		}
		java.util.Collections.shuffle(pool, random);
		return pool.subList(0, count).stream().mapToInt(Integer::intValue).toArray();
	}

	@ParameterizedTest
	@ValueSource(strings = { "split-HND", "joint-NHD" })
	void pullsMoveRandomBlockSetsOfEveryLayerByteForByte(String shape) {
		KvCacheLayout layout = shape.equals("split-HND") ? LAYOUT
				: new KvCacheLayout(3, false, 48, 16, 2, 8, 2, KvBlockOrder.NHD);
		PagedKvCache producerCache = cache("prefill", layout);
		PagedKvCache consumerCache = cache("decode", layout.withNumBlocks(40));
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] producerBlocks = producerCache.allocator().allocate(layout.numBlocks());
		fill(producerCache, producerBlocks, 1);
		int[] consumerBlocks = consumerCache.allocator().allocate(40);
		Random random = new Random(20240611L);
		for (int round = 0; round < 6; round++) {
			int count = 1 + random.nextInt(20);
			int[] remote = randomSubset(random, producerBlocks, count);
			int[] local = randomSubset(random, consumerBlocks, count);
			KvLease lease = KvFixture.leaseKeeping(producer, "req-" + round, remote, 1, LONG_LEASE);

			long bytes = consumer.pull(lease.params(), local, WAIT);

			assertThat(bytes).isEqualTo((long) count * layout.regionCount() * layout.blockLength());
			assertHolds(consumerCache, local, remote, 1);
			assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
			for (int id : remote) {
				assertThat(producerCache.allocator().references(id)).as("block %d after the lease", id).isEqualTo(1);
			}
		}
		assertThat(producer.activeLeases()).isZero();
	}

	/**
	 * Block pairs of a request and the runs they form (consecutive on both sides): a
	 * fully contiguous request, scattered ids, and mixed runs, among them runs contiguous
	 * on one side only.
	 */
	private static int[][] blockPairs(String shape) {
		return switch (shape) {
			case "contiguous" -> new int[][] { range(10, 32), range(20, 32) };
			case "scattered" ->
				new int[][] { { 0, 2, 4, 6, 8, 10, 12, 14, 16 }, { 63, 61, 59, 57, 55, 53, 51, 49, 47 } };
			default -> new int[][] {
					// runs: 5-8/40-43, 20-22/10-12, 30/0, 31-35/2-6, 50/60, 51/59,
					// 60/20, 58/21
					{ 5, 6, 7, 8, 20, 21, 22, 30, 31, 32, 33, 34, 35, 50, 51, 60, 58 },
					{ 40, 41, 42, 43, 10, 11, 12, 0, 2, 3, 4, 5, 6, 60, 59, 20, 21 } };
		};
	}

	private static int expectedRuns(String shape) {
		return switch (shape) {
			case "contiguous" -> 1;
			case "scattered" -> 9;
			default -> 8;
		};
	}

	private static int[] range(int from, int count) {
		int[] ids = new int[count];
		for (int i = 0; i < count; i++) {
			ids[i] = from + i;
		}
		return ids;
	}

	/**
	 * Checks that every block of a cache outside {@code moved} still holds its pattern of
	 * {@code generation}: a merged descriptor one block too long would overwrite a
	 * neighbour.
	 */
	private static void assertUntouched(PagedKvCache cache, int[] moved, long generation) {
		java.util.Set<Integer> skip = new java.util.HashSet<>();
		for (int id : moved) {
			skip.add(id);
		}
		for (int r = 0; r < cache.layout().regionCount(); r++) {
			for (int b = 0; b < cache.layout().numBlocks(); b++) {
				if (!skip.contains(b)) {
					assertThat(Bytes.hasPattern(cache.block(r, b), seed(r, b, generation)))
						.as("region %d, block %d outside the transfer", r, b)
						.isTrue();
				}
			}
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "contiguous", "scattered", "mixed" })
	void pullsOfContiguousScatteredAndMixedRunsMoveEveryByteWithOneDescriptorPerRunAndRegion(String shape) {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT, builder -> builder.telemetry(true));
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		List<Long> posted = postedDescriptors(consumerCache.agent());
		int[] all = range(0, LAYOUT.numBlocks());
		producerCache.allocator().allocate(LAYOUT.numBlocks());
		consumerCache.allocator().allocate(LAYOUT.numBlocks());
		fill(producerCache, all, 3);
		fill(consumerCache, all, 4);
		int[] local = blockPairs(shape)[0];
		int[] remote = blockPairs(shape)[1];
		KvLease lease = KvFixture.leaseKeeping(producer, "runs-" + shape, remote, 1, LONG_LEASE);

		long bytes = consumer.pull(lease.params(), local, WAIT);

		assertThat(bytes).isEqualTo((long) local.length * LAYOUT.regionCount() * LAYOUT.blockLength());
		assertHolds(consumerCache, local, remote, 3);
		assertUntouched(consumerCache, local, 4);
		assertUntouched(producerCache, new int[0], 3);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		int runs = expectedRuns(shape);
		long descriptors = (runs * PagedKvCache.MIN_AVERAGE_RUN <= local.length) ? (long) runs * LAYOUT.regionCount()
				: (long) local.length * LAYOUT.regionCount();
		assertThat(posted).containsExactly(descriptors);
		if (!shape.equals("scattered")) {
			assertThat(descriptors).isLessThan((long) local.length * LAYOUT.regionCount());
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "contiguous", "mixed" })
	void pushesOfRunsMoveEveryByteWithOneDescriptorPerRunAndRegion(String shape) {
		PagedKvCache producerCache = cache("prefill", LAYOUT, builder -> builder.telemetry(true));
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = KvConsumer.builder(consumerCache).peers(PeerLoader.of(this.kv.exchange())).build();
		List<Long> posted = postedDescriptors(producerCache.agent());
		int[] all = range(0, LAYOUT.numBlocks());
		producerCache.allocator().allocate(LAYOUT.numBlocks());
		consumerCache.allocator().allocate(LAYOUT.numBlocks());
		fill(producerCache, all, 5);
		fill(consumerCache, all, 6);
		// the producer's blocks are the source, the consumer's the destination
		int[] source = blockPairs(shape)[1];
		int[] destination = blockPairs(shape)[0];

		producer.push(consumer.pushParams("push-" + shape, destination), consumer.handle(), source, WAIT);
		consumer.awaitPush(producerCache.agent().name(), "push-" + shape, WAIT);

		assertHolds(consumerCache, destination, source, 5);
		assertUntouched(consumerCache, destination, 6);
		assertThat(posted).containsExactly((long) expectedRuns(shape) * LAYOUT.regionCount());
	}

	@Test
	void concurrentRequestsShareOneProducer() throws Exception {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache decodeA = cache("decodeA", LAYOUT);
		PagedKvCache decodeB = cache("decodeB", LAYOUT);
		publish(producerCache, decodeA, decodeB);
		KvProducer producer = producer(producerCache);
		List<KvConsumer> consumers = List.of(consumer(decodeA, 0, producer), consumer(decodeB, 0, producer));
		int requests = 8;
		ExecutorService pool = Executors.newFixedThreadPool(4);
		try {
			List<Future<?>> results = new ArrayList<>();
			for (int request = 0; request < requests; request++) {
				int n = request;
				results.add(pool.submit(() -> {
					int[] remote = producerCache.allocator().allocate(6);
					fill(producerCache, remote, 100 + n);
					KvLease lease = KvFixture.leaseKeeping(producer, "concurrent-" + n, remote, 1, LONG_LEASE);
					producerCache.allocator().release(remote);
					KvConsumer consumer = consumers.get(n % 2);
					int[] local = consumer.cache().allocator().allocate(6);
					consumer.pull(lease.params(), local, WAIT);
					assertHolds(consumer.cache(), local, remote, 100 + n);
					consumer.cache().allocator().release(local);
					return null;
				}));
			}
			for (Future<?> result : results) {
				result.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(producer.activeLeases()).isZero();
		assertThat(producerCache.allocator().freeCount()).isEqualTo(LAYOUT.numBlocks());
	}

	@Test
	void pullsSucceedDuringAndAfterAFloodOfUnclaimedJunkFromAnotherAgent() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		NixlAgent flooder = this.kv.agent("junk", (builder) -> {
		});
		String producerName = producerCache.agent().name();
		flooder.loadRemoteMetadata(producerCache.agent().localMetadata());
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = producerCache.allocator().allocate(4);
		fill(producerCache, remote, 7);
		int junk = AgentConfig.DEFAULT_MAILBOX_CAPACITY + 1000;
		CompletableFuture<Void> flood = CompletableFuture.runAsync(() -> {
			for (int i = 0; i < junk; i++) {
				flooder.sendNotification(producerName, ("junk-" + i).getBytes(StandardCharsets.UTF_8));
			}
		});
		int round = 0;
		while (!flood.isDone() || round < 3) {
			pullOnce(producer, consumer, remote, "during-" + round++);
		}
		flood.join();
		for (int i = 0; i < 3; i++) {
			pullOnce(producer, consumer, remote, "after-" + i);
		}
		Eventually.until(WAIT, "the junk over the flooder's bound is dropped",
				() -> producerCache.agent().statistics().notificationsDropped(flooder.name()) == junk
						- AgentConfig.DEFAULT_MAILBOX_PER_SENDER);
		assertThat(producerCache.agent().statistics().notificationsDropped(consumerCache.agent().name())).isZero();
		assertThat(producer.activeLeases()).isZero();
	}

	private static void pullOnce(KvProducer producer, KvConsumer consumer, int[] remote, String requestId) {
		int[] local = consumer.cache().allocator().allocate(remote.length);
		KvLease lease = KvFixture.leaseKeeping(producer, requestId, remote, 1, LONG_LEASE);
		consumer.pull(lease.params(), local, Duration.ofSeconds(10));
		assertHolds(consumer.cache(), local, remote, 7);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		consumer.cache().allocator().release(local);
	}

	@Test
	void aPushLandsInTheConsumersBlocksAndItsNotificationCompletesTheWait() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT.withNumBlocks(16));
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = KvConsumer.builder(consumerCache).peers(PeerLoader.of(this.kv.exchange())).build();
		int[] remote = producerCache.allocator().allocate(9);
		fill(producerCache, remote, 7);
		consumerCache.allocator().allocate(3);
		int[] local = consumerCache.allocator().allocate(9);

		KvPushParams params = consumer.pushParams("push-1", local);
		producer.push(params, consumer.handle(), remote, WAIT);
		consumer.awaitPush(producerCache.agent().name(), "push-1", WAIT);

		assertHolds(consumerCache, local, remote, 7);
		for (int id : remote) {
			assertThat(producerCache.allocator().references(id)).isEqualTo(1);
		}
	}

	@Test
	void aLeaseThatExpiredBeforeTheReadFailsThePullEvenThoughTheReadSucceeded() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] blocks = producerCache.allocator().allocate(5);
		fill(producerCache, blocks, 1);
		KvLease lease = KvFixture.leaseKeeping(producer, "slow", blocks, 1, Duration.ofMillis(50));
		producerCache.allocator().release(blocks);

		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.EXPIRED);
		int[] reused = producerCache.allocator().allocate(5);
		assertThat(reused).containsExactlyInAnyOrder(blocks);
		fill(producerCache, reused, 2);
		int[] local = consumerCache.allocator().allocate(5);

		KvLeaseLostException failure = catchThrowableOfType(KvLeaseLostException.class,
				() -> consumer.pull(lease.params(), local, WAIT));

		assertThat(failure.confirmation()).isEqualTo(LeaseConfirmation.EXPIRED);
		assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_INVALID_STATE);
		assertThat(failure.requestId()).isEqualTo("slow");
		assertThat(failure.getMessage()).contains("EXPIRED", "'slow'", "must not be used");
		// what the READ brought is the other request's data: exactly why the pull must
		// fail
		assertHolds(consumerCache, local, blocks, 2);
	}

	@Test
	void aLeaseThatNobodyPullsReleasesItsBlocksAtExpiry() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		publish(producerCache);
		KvProducer producer = producer(producerCache);
		int[] blocks = producerCache.allocator().allocate(12);
		KvLease lease = KvFixture.leaseKeeping(producer, "abandoned", blocks, 1, Duration.ofMillis(100));
		producerCache.allocator().release(blocks);
		assertThat(producerCache.allocator().freeCount()).isEqualTo(LAYOUT.numBlocks() - 12);
		assertThat(producer.activeLeases()).isOne();

		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.EXPIRED);

		assertThat(producerCache.allocator().freeCount()).isEqualTo(LAYOUT.numBlocks());
		assertThat(producer.activeLeases()).isZero();
	}

	@Test
	void aDrainWaitsForTheProducersLeasesAndNamesThoseLeftAtItsDeadline() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		Drain drain = Drain.attach(producerCache.agent());
		int[] blocks = producerCache.allocator().allocate(2);
		fill(producerCache, blocks, 5);
		KvLease lease = KvFixture.leaseKeeping(producer, "drained", blocks, 1, WAIT);

		DrainResult early = drain.drain(Duration.ofMillis(200), List.of(producer));
		assertThat(early.transfersLeft()).isEmpty();
		assertThat(early.participantsLeft()).singleElement().satisfies(pending -> {
			assertThat(pending.participant()).isSameAs(producer);
			assertThat(pending.work()).isEqualTo("1 KV lease(s)");
		});

		// the consumer's agent posts the READ: the producer's drain does not refuse it
		int[] local = consumerCache.allocator().allocate(2);
		consumer.pull(lease.params(), local, WAIT);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(drain.drain(WAIT, List.of(producer)).isComplete()).isTrue();
	}

	@Test
	void awaitingTheEndOfLeasesWaitsForTheReadsConfirmationOrExpiry() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		assertThat(producer.awaitLeasesEnded(Duration.ZERO)).isTrue();
		int[] blocks = producerCache.allocator().allocate(3);
		fill(producerCache, blocks, 3);
		KvLease read = KvFixture.leaseKeeping(producer, "read", blocks, 1, WAIT);
		KvLease abandoned = KvFixture.leaseKeeping(producer, "abandoned", producerCache.allocator().allocate(1), 1,
				Duration.ofMillis(200));

		assertThat(producer.awaitLeasesEnded(Duration.ofMillis(20))).isFalse();
		int[] local = consumerCache.allocator().allocate(3);
		consumer.pull(read.params(), local, WAIT);
		assertThat(read.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(producer.awaitLeasesEnded(WAIT)).isTrue();
		assertThat(abandoned.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.EXPIRED);
		assertThat(producer.activeLeases()).isZero();
	}

	@ParameterizedTest
	@ValueSource(ints = { 2, 4 })
	void consumerRanksEachReadTheirSliceOfHeadsAndTheLeaseWaitsForAll(int ranks) throws Exception {
		KvCacheLayout producerLayout = KvCacheLayout.builder()
			.layers(3)
			.blocks(32)
			.blockSize(16)
			.kvHeads(8)
			.headDim(8)
			.build();
		PagedKvCache producerCache = cache("prefill", producerLayout);
		List<PagedKvCache> consumerCaches = new ArrayList<>();
		for (int r = 0; r < ranks; r++) {
			consumerCaches.add(cache("decode" + r, producerLayout.headSlice(ranks).withNumBlocks(20)));
		}
		publish(producerCache);
		consumerCaches.forEach(this::publish);
		KvProducer producer = producer(producerCache);
		int[] remote = producerCache.allocator().allocate(7);
		fill(producerCache, remote, 3);
		KvLease lease = KvFixture.leaseKeeping(producer, "tp", remote, ranks, LONG_LEASE);
		producerCache.allocator().release(remote);
		int headsPerRank = 8 / ranks;
		long headBytes = (long) producerLayout.blockSize() * producerLayout.headDim() * producerLayout.dtypeSize();

		for (int r = 0; r < ranks; r++) {
			PagedKvCache cache = consumerCaches.get(r);
			// consumer ranks beyond the first group read the same slices (rank % k)
			KvConsumer consumer = consumer(cache, r + ranks, producer);
			int[] local = cache.allocator().allocate(7);
			assertThat(lease.outcome()).as("lease before rank %d", r).isNotDone();

			consumer.pull(lease.params(), local, WAIT);

			for (int region = 0; region < producerLayout.regionCount(); region++) {
				for (int i = 0; i < local.length; i++) {
					MemorySegment mine = cache.block(region, local[i]);
					MemorySegment theirs = producerCache.block(region, remote[i]);
					assertThat(Bytes.hasPattern(theirs, seed(region, remote[i], 3))).isTrue();
					for (int h = 0; h < headsPerRank; h++) {
						long at = cache.layout().elementOffset(0, h, 0);
						long from = producerLayout.elementOffset(0, r * headsPerRank + h, 0);
						assertThat(Bytes.same(mine.asSlice(at, headBytes), theirs.asSlice(from, headBytes)))
							.as("rank %d, region %d, block %d, head %d", r, region, local[i], h)
							.isTrue();
					}
				}
			}
		}
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(producerCache.allocator().freeCount()).isEqualTo(producerLayout.numBlocks());
	}

	@Test
	void ranksCannotSplitAnNhdLayout() {
		PagedKvCache producerCache = cache("prefill",
				KvCacheLayout.builder()
					.layers(2)
					.blocks(8)
					.blockSize(16)
					.kvHeads(8)
					.headDim(8)
					.order(KvBlockOrder.NHD)
					.build());
		KvProducer producer = producer(producerCache);
		int[] blocks = producerCache.allocator().allocate(2);

		assertThatThrownBy(() -> KvFixture.leaseKeeping(producer, "nhd", blocks, 2, LONG_LEASE))
			.isInstanceOfSatisfying(NixlException.class,
					ex -> assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM))
			.hasMessageContaining("NHD")
			.hasMessageContaining("HND");
		assertThat(producerCache.allocator().references(blocks[0])).isOne();
		assertThat(producer.activeLeases()).isZero();
	}

	@Test
	void badBlockIdsAndMismatchedLayoutsAreRejectedBeforeAnyTransfer() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		PagedKvCache otherShape = cache("other",
				KvCacheLayout.builder().layers(4).blocks(64).blockSize(16).kvHeads(4).headDim(16).build());
		publish(producerCache, consumerCache, otherShape);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = producerCache.allocator().allocate(3);
		fill(producerCache, remote, 5);
		KvLease lease = KvFixture.leaseKeeping(producer, "checked", remote, 1, LONG_LEASE);
		int[] local = consumerCache.allocator().allocate(3);
		KvTransferParams params = lease.params();

		assertInvalid(() -> producer.lease("bad", new int[] { 64 }), "block id 64 is out of range");
		assertInvalid(() -> producer.lease("bad", new int[] { 5, 5 }), "appears twice");
		assertInvalid(() -> producer.lease("bad", new int[] { 40 }), "block 40 is free");
		assertInvalid(() -> KvFixture.leaseKeeping(producer, "checked", remote, 1, LONG_LEASE),
				"already holds a lease");
		assertInvalid(() -> consumer.pull(withBlocks(params, List.of(1, 2, 99)), local, WAIT),
				"block id 99 is out of range: producer");
		assertInvalid(() -> consumer.pull(params, new int[] { local[0], local[1] }, WAIT), "2 local blocks");
		assertInvalid(() -> consumer.pull(params, new int[] { local[0], local[0], local[1] }, WAIT), "appears twice");
		assertInvalid(() -> consumer.pull(params, new int[] { local[0], local[1], 50 }, WAIT),
				"local block 50 is not allocated");
		assertInvalid(() -> consumer.pull(withFingerprint(params, "kv-layout/1;layers=5"), local, WAIT),
				"names layout");
		KvConsumer mismatched = consumer(otherShape, 0, producer);
		int[] otherLocal = otherShape.allocator().allocate(3);
		assertInvalid(() -> mismatched.pull(params, otherLocal, WAIT), "layout mismatch");
		KvConsumer unconnected = KvConsumer.builder(consumerCache).peers(PeerLoader.of(this.kv.exchange())).build();
		assertThatThrownBy(() -> unconnected.pull(params, local, WAIT))
			.isInstanceOfSatisfying(NixlException.class,
					ex -> assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_NOT_FOUND))
			.hasMessageContaining("not connected");
		assertThatThrownBy(() -> producer.push(consumer.pushParams("p", local), otherShape.handle(), remote, WAIT))
			.hasMessageContaining("names consumer");

		// nothing was disturbed: the lease still serves its request
		consumer.pull(params, local, WAIT);
		assertHolds(consumerCache, local, remote, 5);
	}

	@Test
	void aLeaseTheProducerNeverMadeIsAnsweredUnknown() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = producerCache.allocator().allocate(2);
		KvLease lease = KvFixture.leaseKeeping(producer, "real", remote, 1, LONG_LEASE);
		KvTransferParams forged = KvTransferParams.builder()
			.producerAgent(lease.params().producerAgent())
			.requestId("real")
			.blockIds(lease.params().blockIds())
			.layoutFingerprint(lease.params().layoutFingerprint())
			.leaseId(lease.id() + 1)
			.build();

		KvLeaseLostException failure = catchThrowableOfType(KvLeaseLostException.class,
				() -> consumer.pull(forged, consumerCache.allocator().allocate(2), WAIT));

		assertThat(failure.confirmation()).isEqualTo(LeaseConfirmation.UNKNOWN);
		assertThat(lease.outcome()).as("the real lease is untouched").isNotDone();
	}

	@Test
	void aConsumerWhoseCacheIsFullGivesTheLeaseBackAndTheProducersBlocksAreFreeAtOnce() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT.withNumBlocks(4));
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] blocks = producerCache.allocator().allocate(12);
		KvLease lease = KvFixture.leaseKeeping(producer, "no-room", blocks, 1, LONG_LEASE);
		producerCache.allocator().release(blocks);
		consumerCache.allocator().allocate(4);
		assertThatThrownBy(() -> consumerCache.allocator().allocate(12)).isInstanceOf(NixlException.class);
		assertThat(producerCache.allocator().freeCount()).isEqualTo(LAYOUT.numBlocks() - 12);

		long start = System.nanoTime();
		assertThat(consumer.release(lease.params())).isTrue();

		assertThat(lease.outcome()).succeedsWithin(Duration.ofSeconds(1)).isEqualTo(LeaseOutcome.RELEASED);
		System.out.printf("lease given back: producer's blocks free %.1f ms after the release%n",
				(System.nanoTime() - start) / 1e6);
		assertThat(producerCache.allocator().freeCount()).isEqualTo(LAYOUT.numBlocks());
		assertThat(producer.activeLeases()).isZero();
		// a second release, of a lease that ended, changes nothing
		consumer.release(lease.params());
		assertThat(KvFixture.leaseKeeping(producer, "no-room", producerCache.allocator().allocate(2), 1, LONG_LEASE)
			.params()
			.leaseId()).isNotEqualTo(lease.id());
	}

	@Test
	void aPullWhoseReadFailsGivesTheLeaseBackAndNamesTheProducer() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = KvConsumer.builder(consumerCache).peers(PeerLoader.of(this.kv.exchange())).build();
		String producerName = producerCache.agent().name();
		// a handle whose regions lie where the producer registered nothing: its READ
		// cannot be made
		List<Long> nowhere = new ArrayList<>();
		for (int r = 0; r < LAYOUT.regionCount(); r++) {
			nowhere.add(0x1000L + r * LAYOUT.regionLength());
		}
		RemoteCacheHandle real = producer.handle();
		consumer
			.connect(new RemoteCacheHandle(producerName, real.layout(), nowhere, real.memoryType(), real.deviceId()));
		int[] blocks = producerCache.allocator().allocate(3);
		KvLease lease = KvFixture.leaseKeeping(producer, "bad-read", blocks, 1, LONG_LEASE);
		producerCache.allocator().release(blocks);
		int[] local = consumerCache.allocator().allocate(3);

		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> consumer.pull(lease.params(), local, WAIT));

		assertThat(failure).isNotInstanceOf(KvLeaseLostException.class);
		assertThat(failure.remoteAgent()).isEqualTo(producerName);
		assertThat(failure.getMessage()).contains("'" + producerName + "'", "'bad-read'").doesNotContain("lease-ttl");
		assertThat(lease.outcome()).succeedsWithin(Duration.ofSeconds(1)).isEqualTo(LeaseOutcome.RELEASED);
		assertThat(producerCache.allocator().freeCount()).isEqualTo(LAYOUT.numBlocks());
	}

	@Test
	void awaitingTheEndOfLeasesWaitsForAnAnswerThatIsTriedAgain() throws Exception {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		// the consumer cannot be loaded by the producer the first two times: its answer
		// is tried again
		PeerLoader loader = PeerLoader.of(this.kv.exchange());
		AtomicInteger refusals = new AtomicInteger(2);
		KvProducer producer = this.kv.track(KvProducer.builder(producerCache).peers((agent, peer, timeout) -> {
			if (refusals.getAndDecrement() > 0) {
				throw new NixlException(NixlStatus.ERROR_NOT_FOUND, "load_remote_md", agent.name(), peer, "not yet");
			}
			loader.load(agent, peer, timeout);
		}).build());
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = producerCache.allocator().allocate(3);
		fill(producerCache, remote, 9);
		KvLease lease = KvFixture.leaseKeeping(producer, "answered-late", remote, 1, LONG_LEASE);
		int[] local = consumerCache.allocator().allocate(3);
		ExecutorService pool = Executors.newSingleThreadExecutor();
		try {
			Future<Long> pull = pool.submit(() -> consumer.pull(lease.params(), local, Duration.ofSeconds(10)));
			assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);

			assertThat(producer.awaitLeasesEnded(WAIT)).isTrue();
			producer.close();

			assertThat(pull.get(20, TimeUnit.SECONDS)).isPositive();
			assertHolds(consumerCache, local, remote, 9);
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void aPullRetriedAfterItsReadTimedOutDoesNotTakeTheAnswerToTheFirstRead() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		KvFixture.FaultInjectingAgent decode = this.kv.faultInjectingAgent("decode-retried");
		FaultInjectingDriver driver = decode.driver();
		PagedKvCache consumerCache = this.kv.track(PagedKvCache.allocate(decode.agent(), LAYOUT));
		publish(producerCache, consumerCache);
		// the producer's answer to the first READ leaves once that pull gave up
		CountDownLatch answerFirst = new CountDownLatch(1);
		PeerLoader loader = PeerLoader.of(this.kv.exchange());
		KvProducer producer = this.kv.track(KvProducer.builder(producerCache).peers((agent, peer, timeout) -> {
			try {
				answerFirst.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			loader.load(agent, peer, timeout);
		}).build());
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = producerCache.allocator().allocate(3);
		fill(producerCache, remote, 1);
		KvLease lease = KvFixture.leaseKeeping(producer, "retried", remote, 1, LONG_LEASE);
		producerCache.allocator().release(remote);
		// the READ lands and its notification is sent, but the consumer's wait for the
		// READ times out
		driver.deferPosts(true);
		driver.holdTransfers(true);

		NixlException first = catchThrowableOfType(NixlException.class,
				() -> consumer.pull(lease.params(), consumerCache.allocator().allocate(3), Duration.ofSeconds(1)));

		assertThat(first.status()).isEqualTo(NixlStatus.TIMEOUT);
		driver.holdTransfers(false);
		driver.deferPosts(false);
		assertThat(lease.outcome()).as("the first READ's notification reached the producer while the lease was held")
			.succeedsWithin(WAIT)
			.isEqualTo(LeaseOutcome.COMPLETED);
		answerFirst.countDown();
		// the lease ended: its blocks go to another request
		fill(producerCache, remote, 2);
		int[] local = consumerCache.allocator().allocate(3);

		KvLeaseLostException second = catchThrowableOfType(KvLeaseLostException.class,
				() -> consumer.pull(lease.params(), local, WAIT));

		assertThat(second).as("a pull of blocks read after their lease ended").isNotNull();
	}

	@Test
	void aPullFromAProducerWhoseAgentClosedFailsNamingItWithoutLeaseTimeAdvice() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		String producerName = producerCache.agent().name();
		int[] remote = producerCache.allocator().allocate(2);
		KvLease lease = KvFixture.leaseKeeping(producer, "orphan", remote, 1, LONG_LEASE);
		int[] local = consumerCache.allocator().allocate(2);
		producer.close();
		producerCache.close();
		producerCache.agent().close();

		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> consumer.pull(lease.params(), local, WAIT));

		assertThat(failure.remoteAgent()).isEqualTo(producerName);
		assertThat(failure.getMessage()).contains("'" + producerName + "'").doesNotContain("lease-ttl");
		System.out.printf("pull from a closed producer: %s%n", failure.getMessage());
	}

	@Test
	void aReleaseFromAnotherAgentOrOfAnotherLeaseChangesNothing() throws InterruptedException {
		KvCacheLayout producerLayout = KvCacheLayout.builder()
			.layers(2)
			.blocks(16)
			.blockSize(16)
			.kvHeads(4)
			.headDim(8)
			.build();
		PagedKvCache producerCache = cache("prefill", producerLayout);
		PagedKvCache rank0 = cache("decode0", producerLayout.headSlice(2));
		PagedKvCache rank1 = cache("decode1", producerLayout.headSlice(2));
		PagedKvCache intruder = cache("intruder", producerLayout.headSlice(2));
		publish(producerCache, rank0, rank1, intruder);
		KvProducer producer = producer(producerCache);
		String producerName = producerCache.agent().name();
		int[] remote = producerCache.allocator().allocate(3);
		fill(producerCache, remote, 4);
		KvLease lease = KvFixture.leaseKeeping(producer, "guarded", remote, 2, LONG_LEASE);
		producerCache.allocator().release(remote);
		consumer(rank0, 0, producer).pull(lease.params(), rank0.allocator().allocate(3), WAIT);
		intruder.agent().loadRemoteMetadata(this.kv.exchange().fetch(producerName, WAIT));

		// rank 0 was reported by another agent: its release and done messages for that
		// rank change nothing (a done under another generation would have ended it
		// STALE); the other lease id names no lease held
		intruder.agent()
			.sendNotification(producerName, KvMessages.release(KvMessages.DEFAULT_PREFIX, "guarded", lease.id(), 0));
		intruder.agent()
			.sendNotification(producerName, KvMessages.done(KvMessages.DEFAULT_PREFIX, "guarded", lease.id(), 0,
					lease.params().generation() ^ 1));
		intruder.agent()
			.sendNotification(producerName, KvMessages.done(KvMessages.DEFAULT_PREFIX, "guarded", lease.id(), 0));
		intruder.agent()
			.sendNotification(producerName,
					KvMessages.release(KvMessages.DEFAULT_PREFIX, "guarded", lease.id() ^ 1, 1));
		Eventually.until(WAIT, "three messages ignored", () -> producer.ignoredMessages() == 3);
		Thread.sleep(300);

		assertThat(lease.outcome()).isNotDone();
		assertThat(producer.ignoredMessages()).as("the release of another lease id is not counted").isEqualTo(3);
		assertThat(producerCache.allocator().references(remote[0])).isOne();
		consumer(rank1, 1, producer).pull(lease.params(), rank1.allocator().allocate(3), WAIT);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
	}

	@Test
	void aProducerConnectedAgainAfterItsMetadataWasInvalidatedIsPulledFromWithListsPreparedAgain() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		String producerName = producerCache.agent().name();
		// every other block, paired in reverse: runs of one block, so the prepared lists
		// serve the READs
		int[] producerBlocks = producerCache.allocator().allocate(8);
		int[] consumerBlocks = consumerCache.allocator().allocate(8);
		int[] remote = { producerBlocks[0], producerBlocks[2], producerBlocks[4], producerBlocks[6] };
		int[] local = { consumerBlocks[7], consumerBlocks[5], consumerBlocks[3], consumerBlocks[1] };
		fill(producerCache, remote, 11);
		consumer.pull(KvFixture.leaseKeeping(producer, "before", remote, 1, LONG_LEASE).params(), local, WAIT);
		assertHolds(consumerCache, local, remote, 11);

		consumerCache.agent().invalidateRemoteMetadata(producerName);
		consumerCache.forgetRemote(producerName);
		fill(producerCache, remote, 12);
		KvLease again = KvFixture.leaseKeeping(producer, "after", remote, 1, LONG_LEASE);
		consumer.pull(again.params(), local, WAIT);

		assertHolds(consumerCache, local, remote, 12);
		assertThat(again.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(consumerCache.agent().hasRemoteMetadata(producerName)).isTrue();
	}

	@Test
	void aConsumerFailsAtOnceOnAProducerWhoseEntryWasRemovedAndPullsAgainOnceItIsBack() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		Duration patient = Duration.ofMinutes(2);
		KvConsumer consumer = KvConsumer.builder(consumerCache)
			.peers(PeerLoader.of(this.kv.exchange()))
			.peerTimeout(patient)
			.build();
		consumer.connect(producer.handle());
		String producerName = producerCache.agent().name();
		int[] remote = producerCache.allocator().allocate(4);
		fill(producerCache, remote, 6);
		int[] local = consumerCache.allocator().allocate(4);

		this.kv.exchange().invalidate(producerName);
		dev.nixl4j.testsupport.Eventually.until(WAIT, "the consumer forgot the producer",
				() -> !consumerCache.agent().hasRemoteMetadata(producerName));
		KvLease first = KvFixture.leaseKeeping(producer, "while-gone", remote, 1, LONG_LEASE);
		long start = System.nanoTime();
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> consumer.pull(first.params(), local, patient));
		Duration took = Duration.ofNanos(System.nanoTime() - start);

		assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_NOT_FOUND);
		assertThat(failure.remoteAgent()).isEqualTo(producerName);
		assertThat(failure.getMessage()).contains("'" + producerName + "'", "removed from the exchange");
		assertThat(took).as("failed without waiting for the peer timeout").isLessThan(patient.dividedBy(4));
		System.out.printf("pull of a producer whose entry was removed failed after %.1f ms%n", took.toNanos() / 1e6);

		this.kv.exchange().publish(producerCache.agent());
		KvLease second = KvFixture.leaseKeeping(producer, "back", remote, 1, LONG_LEASE);
		consumer.pull(second.params(), local, WAIT);

		assertHolds(consumerCache, local, remote, 6);
		assertThat(second.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
	}

	@Test
	void theProducerTakesOnlyItsOwnNotificationsAndClosingStopsItsThread() throws InterruptedException {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		String producerName = producerCache.agent().name();
		consumerCache.agent().sendNotification(producerName, "nixl4j.kv/other".getBytes());
		consumerCache.agent().sendNotification(producerName, "hello".getBytes());
		int[] remote = producerCache.allocator().allocate(2);
		KvLease held = KvFixture.leaseKeeping(producer, "first", remote, 1, LONG_LEASE);
		consumer.pull(held.params(), consumerCache.allocator().allocate(2), WAIT);
		KvLease open = KvFixture.leaseKeeping(producer, "second", remote, 1, LONG_LEASE);
		List<Thread> threads = producerThreads(producerName);
		assertThat(threads).hasSize(1);

		producer.close();

		threads.getFirst().join(WAIT.toMillis());
		assertThat(threads.getFirst().isAlive()).isFalse();
		assertThat(open.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.CLOSED);
		assertThat(producerCache.allocator().references(remote[0])).isOne();
		String consumerName = consumerCache.agent().name();
		assertThat(producerCache.agent().expectNotification(NotificationMatcher.exact(consumerName, "hello"), WAIT))
			.succeedsWithin(WAIT);
		assertThat(producerCache.agent()
			.expectNotification(NotificationMatcher.exact(consumerName, "nixl4j.kv/other"), WAIT)).succeedsWithin(WAIT);
		assertThatThrownBy(() -> KvFixture.leaseKeeping(producer, "third", remote, 1, LONG_LEASE))
			.isInstanceOfSatisfying(NixlException.class, ex -> assertThat(ex.status()).isEqualTo(NixlStatus.CLOSED));
	}

	@Test
	void anErrorWhileAnsweringAConsumerIsSurvivedAndLaterPullsMoveEveryByte() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		PeerLoader loader = PeerLoader.of(this.kv.exchange());
		AtomicInteger loads = new AtomicInteger();
		KvProducer producer = this.kv.track(KvProducer.builder(producerCache).peers((agent, peer, timeout) -> {
			if (loads.getAndIncrement() == 0) {
				throw new OutOfMemoryError("injected into the producer's peer loader");
			}
			loader.load(agent, peer, timeout);
		}).build());
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = producerCache.allocator().allocate(4);
		fill(producerCache, remote, 7);
		KvLease unanswered = KvFixture.leaseKeeping(producer, "unanswered", remote, 1, LONG_LEASE);
		int[] first = consumerCache.allocator().allocate(4);

		// the answer the producer could not send is made up by the consumer's repeat
		consumer.pull(unanswered.params(), first, WAIT);
		assertHolds(consumerCache, first, remote, 7);
		assertThat(consumer.confirmationResends()).isPositive();
		Eventually.until(Duration.ofSeconds(1), "the producer counted the Error", () -> producer.internalErrors() == 1);

		KvLease answered = KvFixture.leaseKeeping(producer, "answered", remote, 1, LONG_LEASE);
		int[] local = consumerCache.allocator().allocate(4);
		consumer.pull(answered.params(), local, WAIT);
		assertHolds(consumerCache, local, remote, 7);
		assertThat(answered.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(producer.internalErrors()).isOne();
	}

	@Test
	void anErrorWhileTryingAnAnswerAgainIsCountedAndLaterPullsMoveEveryByte() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		PeerLoader loader = PeerLoader.of(this.kv.exchange());
		AtomicInteger loads = new AtomicInteger();
		KvProducer producer = this.kv.track(KvProducer.builder(producerCache).peers((agent, peer, timeout) -> {
			switch (loads.getAndIncrement()) {
				case 0 -> throw new NixlException(NixlStatus.ERROR_NOT_FOUND, "load_remote_md", agent.name(), peer,
						"not yet");
				case 1 -> throw new OutOfMemoryError("injected into the producer's peer loader on a second try");
				default -> loader.load(agent, peer, timeout);
			}
		}).build());
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = producerCache.allocator().allocate(4);
		fill(producerCache, remote, 10);
		KvLease unanswered = KvFixture.leaseKeeping(producer, "unanswered", remote, 1, LONG_LEASE);
		int[] first = consumerCache.allocator().allocate(4);

		// the answer the producer could not send is made up by the consumer's repeat
		consumer.pull(unanswered.params(), first, WAIT);
		assertHolds(consumerCache, first, remote, 10);
		assertThat(consumer.confirmationResends()).isPositive();
		Eventually.until(Duration.ofSeconds(2), "the producer counted the Error", () -> producer.internalErrors() == 1);

		KvLease answered = KvFixture.leaseKeeping(producer, "answered", remote, 1, LONG_LEASE);
		int[] local = consumerCache.allocator().allocate(4);
		consumer.pull(answered.params(), local, WAIT);
		assertHolds(consumerCache, local, remote, 10);
		assertThat(producer.internalErrors()).isOne();
	}

	@Test
	void anErrorDuringAnExpiryStillReleasesTheBlocksAndTheThreadGoesOn() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		// The expiry's log line goes through the logging configuration, which is the
		// application's:
		// a handler that throws there is an Error inside the expiry.
		Logger log = Logger.getLogger(KvProducer.class.getName());
		AtomicInteger thrown = new AtomicInteger();
		Handler failing = new Handler() {
			@Override
			public void publish(LogRecord record) {
				if (record.getMessage().contains("expired after") && thrown.getAndIncrement() == 0) {
					throw new OutOfMemoryError("injected into the log handler of an expiry");
				}
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}
		};
		log.addHandler(failing);
		try {
			int[] blocks = producerCache.allocator().allocate(12);
			KvLease lease = KvFixture.leaseKeeping(producer, "abandoned", blocks, 1, Duration.ofMillis(50));
			producerCache.allocator().release(blocks);

			assertThat(lease.outcome()).succeedsWithin(Duration.ofSeconds(1)).isEqualTo(LeaseOutcome.EXPIRED);
			assertThat(thrown).hasValue(1);
			assertThat(producerCache.allocator().freeCount()).isEqualTo(LAYOUT.numBlocks());
			assertThat(producer.activeLeases()).isZero();
			assertThat(producer.internalErrors()).isOne();
		}
		finally {
			log.removeHandler(failing);
		}
		int[] remote = producerCache.allocator().allocate(3);
		fill(producerCache, remote, 8);
		KvLease later = KvFixture.leaseKeeping(producer, "later", remote, 1, LONG_LEASE);
		int[] local = consumerCache.allocator().allocate(3);
		consumer.pull(later.params(), local, WAIT);
		assertHolds(consumerCache, local, remote, 8);
		KvLease expiring = KvFixture.leaseKeeping(producer, "expiring", remote, 1, Duration.ofMillis(50));
		assertThat(expiring.outcome()).succeedsWithin(Duration.ofSeconds(1)).isEqualTo(LeaseOutcome.EXPIRED);
	}

	private static List<Thread> producerThreads(String agentName) {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter(thread -> thread.getName().equals("nixl4j-kv-producer-" + agentName) && thread.isAlive())
			.toList();
	}

	@Test
	void aLeaseTakesOverTheCallersReferencesAndGivesTheBlocksBackToThePoolWhenItEnds() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = producer(producerCache);
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		BlockAllocator pool = producerCache.allocator();
		int[] remote = pool.allocate(5);
		fill(producerCache, remote, 7);
		KvLease lease = producer.lease("owned", remote);
		for (int id : remote) {
			assertThat(pool.references(id)).as("block %d under the lease", id).isEqualTo(1);
		}
		assertThat(pool.freeCount()).isEqualTo(LAYOUT.numBlocks() - 5);
		int[] local = consumerCache.allocator().allocate(5);

		consumer.pull(lease.params(), local, WAIT);

		assertHolds(consumerCache, local, remote, 7);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(lease.ttl()).isEqualTo(KvProducer.DEFAULT_LEASE_TTL);
		assertThat(lease.consumer()).isEmpty();
		assertThat(lease.params().consumerRanks()).isEqualTo(1);
		for (int id : remote) {
			assertThat(pool.references(id)).as("block %d after the lease", id).isZero();
		}
		assertThat(pool.freeCount()).isEqualTo(LAYOUT.numBlocks());
	}

	@Test
	void aRefusedLeaseLeavesTheReferencesWithTheCaller() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		publish(producerCache);
		KvProducer producer = producer(producerCache);
		BlockAllocator pool = producerCache.allocator();
		int[] held = pool.allocate(2);
		producer.lease("taken", held);
		int[] other = pool.allocate(2);

		assertInvalid(() -> producer.lease("taken", other), "already holds a lease");
		assertInvalid(() -> producer.lease("three-ranks", other, KvLease.options().consumerRanks(3)), "3");

		for (int id : other) {
			assertThat(pool.references(id)).as("block %d after the refusals", id).isEqualTo(1);
		}
		assertThat(pool.release(other)).isEqualTo(2);
	}

	@Test
	void leasesLastTheProducersTimeToLiveUnlessTheirOptionsNameAnother() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		publish(producerCache);
		Duration ttl = Duration.ofMillis(200);
		KvProducer producer = this.kv.producer(producerCache, (builder) -> builder.leaseTtl(ttl));
		BlockAllocator pool = producerCache.allocator();

		KvLease brief = producer.lease("brief", pool.allocate(3));
		KvLease lasting = producer.lease("lasting", pool.allocate(2), KvLease.options().ttl(LONG_LEASE));

		assertThat(producer.leaseTtl()).isEqualTo(ttl);
		assertThat(brief.ttl()).isEqualTo(ttl);
		assertThat(lasting.ttl()).isEqualTo(LONG_LEASE);
		assertThat(brief.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.EXPIRED);
		assertThat(producer.activeLeases()).isEqualTo(1);
		assertThat(pool.freeCount()).as("the expired lease's blocks are back in the pool")
			.isEqualTo(LAYOUT.numBlocks() - 2);
	}

	@Test
	void paramsThatTravelAsJsonPullTheSameBytesWithEveryIntegrityCheck() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		publish(producerCache, consumerCache);
		KvProducer producer = this.kv.producer(producerCache, (builder) -> builder.integrity(KvIntegrity.CRC32C));
		KvConsumer consumer = consumer(consumerCache, 0, producer);
		int[] remote = producerCache.allocator().allocate(4);
		fill(producerCache, remote, 11);
		KvLease lease = producer.lease("json", remote, KvLease.options().consumer(consumerCache.agent().name()));
		String json = lease.params().toJson();

		KvTransferParams received = KvTransferParams.fromJson(json);

		assertThat(received).isEqualTo(lease.params());
		assertThat(received.checksums()).hasSize(4);
		assertThat(received.generation()).isNotZero();
		assertThat(received.producerIncarnation()).isEqualTo(producerCache.handle().incarnation());
		int[] local = consumerCache.allocator().allocate(4);
		consumer.pull(received, local, WAIT);
		assertHolds(consumerCache, local, remote, 11);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
	}

	@Test
	void aProducerGivenTheExchangeKeepsItsHandlePublishedForItsLifeAndWithdrawsItWhenClosed() {
		PagedKvCache producerCache = cache("prefill", LAYOUT);
		PagedKvCache consumerCache = cache("decode", LAYOUT);
		MetadataExchange exchange = this.kv.exchange();
		String producerName = producerCache.agent().name();
		KvProducer producer = KvProducer.builder(producerCache).exchange(exchange).build();
		try {
			assertThat(exchange.fetchDocument(producerName, KvDirectory.HANDLE_DOCUMENT, WAIT))
				.isEqualTo(producerCache.handle().toJson());
			KvConsumer consumer = KvConsumer.builder(consumerCache)
				.peers(PeerLoader.of(exchange))
				.directory(KvDirectory.of(exchange, this.kv.publication(consumerCache.agent(), null)))
				.peerTimeout(WAIT)
				.build();
			int[] remote = producerCache.allocator().allocate(3);
			fill(producerCache, remote, 13);
			KvLease lease = producer.lease("published", remote);
			int[] local = consumerCache.allocator().allocate(3);

			consumer.pull(lease.params(), local, WAIT);

			assertHolds(consumerCache, local, remote, 13);
			assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
			exchange.invalidate(producerName);
			Eventually.until(WAIT, "the producer's entry is published again after it vanished",
					() -> publishedHandle(exchange, producerName, producerCache));
		}
		finally {
			producer.close();
		}
		// the in-memory exchange answers TIMEOUT for an entry that is not there
		assertThatThrownBy(() -> exchange.fetch(producerName, Duration.ZERO))
			.isInstanceOfSatisfying(NixlException.class, (ex) -> assertThat(ex.status()).isEqualTo(NixlStatus.TIMEOUT));
		assertThatThrownBy(() -> exchange.fetchDocument(producerName, KvDirectory.HANDLE_DOCUMENT, Duration.ZERO))
			.isInstanceOfSatisfying(NixlException.class, (ex) -> assertThat(ex.status()).isEqualTo(NixlStatus.TIMEOUT));
	}

	private static boolean publishedHandle(MetadataExchange exchange, String agent, PagedKvCache cache) {
		try {
			exchange.fetch(agent, Duration.ZERO);
			return java.util.Arrays.equals(exchange.fetchDocument(agent, KvDirectory.HANDLE_DOCUMENT, Duration.ZERO),
					cache.handle().toJson());
		}
		catch (NixlException ex) {
			return false;
		}
	}

	private static KvTransferParams withBlocks(KvTransferParams params, List<Integer> blocks) {
		return KvTransferParams.builder()
			.producerAgent(params.producerAgent())
			.requestId(params.requestId())
			.blockIds(blocks)
			.layoutFingerprint(params.layoutFingerprint())
			.leaseId(params.leaseId())
			.consumerRanks(params.consumerRanks())
			.build();
	}

	private static KvTransferParams withFingerprint(KvTransferParams params, String fingerprint) {
		return KvTransferParams.builder()
			.producerAgent(params.producerAgent())
			.requestId(params.requestId())
			.blockIds(params.blockIds())
			.layoutFingerprint(fingerprint)
			.leaseId(params.leaseId())
			.consumerRanks(params.consumerRanks())
			.build();
	}

	private static void assertInvalid(org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String message) {
		assertThatThrownBy(call)
			.isInstanceOfSatisfying(NixlException.class,
					ex -> assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM))
			.hasMessageContaining(message);
	}

}
