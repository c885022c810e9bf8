package dev.nixl4j.kv;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.PeerProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an agent that is not a lease's consumer can do to a producer with the protocol's
 * own, well-formed messages, on every engine (one subclass per engine), the foreign agent
 * in a process of its own: nothing to the lease (its done and release messages are
 * ignored and counted), and nothing to the honest consumers' pulls, expiries and outcomes
 * when the producer cannot find its metadata to answer it (the answers wait apart,
 * bounded, and are dropped; the backlog shows). Every pulled block is checked byte by
 * byte.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class KvForeignMessagesTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration LONG_LEASE = Duration.ofMinutes(5);

	private static final String PREFIX = KvMessages.DEFAULT_PREFIX;

	/**
	 * How long an honest pull may take at most while a foreign agent's answers back up: a
	 * pull takes milliseconds here, and no answer to an honest consumer waits for the
	 * foreign agent's lookups, nor does any decision, expiry or outcome.
	 */
	private static final Duration HONEST_BOUND = Duration.ofSeconds(2);

	private static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(2)
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

	private PagedKvCache cache(String role) {
		return this.kv.cache(role, LAYOUT, (builder) -> {
		});
	}

	/**
	 * A foreign agent in its own process: it loads the producer's metadata, and publishes
	 * none of its own.
	 */
	private PeerProcess foreignAgent(PagedKvCache producer) throws IOException {
		PeerProcess peer = this.kv.track(PeerProcess.start(this.kv.name("foreign"), 4096, 1, Map.of(), engine()));
		peer.load(producer.agent().localMetadata());
		return peer;
	}

	private static long seed(int region, int block, long generation) {
		return generation * 1_000_000_007L + region * 65_537L + block;
	}

	/** Leases freshly filled blocks for a consumer, the lease naming it. */
	private static KvLease lease(KvProducer producer, String requestId, int blocks, long generation, String consumer) {
		PagedKvCache cache = producer.cache();
		int[] ids = cache.allocator().allocate(blocks);
		for (int r = 0; r < LAYOUT.regionCount(); r++) {
			for (int id : ids) {
				Bytes.fill(cache.block(r, id), seed(r, id, generation));
			}
		}
		KvLease lease = KvFixture.leaseKeeping(producer, requestId, ids, 1, LONG_LEASE, consumer);
		cache.allocator().release(ids);
		return lease;
	}

	/**
	 * Pulls a lease (which returns only when the producer answered {@code HELD}) and
	 * checks every byte; returns how long the pull took.
	 */
	private static Duration pullAndCheck(KvConsumer consumer, KvLease lease, long generation) {
		int[] remote = lease.params().blockIdArray();
		PagedKvCache cache = consumer.cache();
		int[] local = cache.allocator().allocate(remote.length);
		try {
			long start = System.nanoTime();
			consumer.pull(lease.params(), local, WAIT);
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			for (int r = 0; r < LAYOUT.regionCount(); r++) {
				for (int i = 0; i < local.length; i++) {
					assertThat(Bytes.hasPattern(cache.block(r, local[i]), seed(r, remote[i], generation)))
						.as("region %d, local block %d <- producer block %d", r, local[i], remote[i])
						.isTrue();
				}
			}
			return took;
		}
		finally {
			cache.allocator().release(local);
		}
	}

	private static byte[] text(String message) {
		return message.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void doneAndReleaseFromAnAgentThatIsNotTheLeasesConsumerChangeNothingAndAreCounted() throws IOException {
		PagedKvCache producerCache = cache("prefill");
		PagedKvCache consumerCache = cache("decode");
		this.kv.publish(producerCache, consumerCache);
		KvProducer producer = this.kv.producer(producerCache);
		KvConsumer consumer = this.kv.consumer(consumerCache, 0, producer);
		String producerName = producerCache.agent().name();
		KvLease lease = lease(producer, "guarded", 3, 1, consumerCache.agent().name());
		int[] blocks = lease.params().blockIdArray();
		long generation = lease.params().generation();
		PeerProcess foreign = foreignAgent(producerCache);

		// a holder of the lease's parameters that is not its consumer: a done without a
		// generation (would complete it), under another one (would end it STALE), with
		// the right one and a read id, and a release
		for (String message : List.of(KvMessages.donePrefix(PREFIX) + "guarded:" + lease.id() + ":0",
				new String(KvMessages.done(PREFIX, "guarded", lease.id(), 0, generation ^ 1), StandardCharsets.UTF_8),
				new String(KvMessages.done(PREFIX, "guarded", lease.id(), 0, generation, 0x5eed),
						StandardCharsets.UTF_8),
				new String(KvMessages.release(PREFIX, "guarded", lease.id(), 0), StandardCharsets.UTF_8))) {
			assertThat(foreign.sendNotification(producerName, text(message))).as(message).isNull();
		}
		Eventually.until(WAIT, "four messages ignored", () -> producer.ignoredMessages() == 4);

		assertThat(lease.outcome()).as("the lease is still held").isNotDone();
		assertThat(producer.activeLeases()).isOne();
		for (int id : blocks) {
			assertThat(producerCache.allocator().references(id)).as("block %d still leased", id).isOne();
		}
		Duration took = pullAndCheck(consumer, lease, 1);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		// a repeat after the lease completed is ignored too
		foreign.sendNotification(producerName, KvMessages.done(PREFIX, "guarded", lease.id(), 0, generation, 0x5eed));
		Eventually.until(WAIT, "the repeat ignored", () -> producer.ignoredMessages() == 5);
		assertThat(foreign.poll(PREFIX + "ack:")).as("answers that reached the foreign agent").isZero();
		assertThat(producer.endedLeases(LeaseOutcome.STALE)).isZero();
		assertThat(producer.endedLeases(LeaseOutcome.RELEASED)).isZero();
		System.out.printf("%s engine: 5 foreign messages ignored; the consumer's pull answered HELD in %.1f ms%n",
				engine(), took.toNanos() / 1e6);
	}

	@Test
	void aPeerWhoseMetadataCannotBeFoundNeverHoldsUpHonestLeases() throws Exception {
		PagedKvCache producerCache = cache("prefill");
		PagedKvCache warmCache = cache("decode-warm");
		this.kv.publish(producerCache, warmCache);
		Duration peerTimeout = Duration.ofSeconds(3);
		KvProducer producer = this.kv.producer(producerCache, (builder) -> builder.peerTimeout(peerTimeout));
		String producerName = producerCache.agent().name();
		KvConsumer warm = this.kv.consumer(warmCache, 0, producer);
		AtomicInteger requests = new AtomicInteger();
		pullAndCheck(warm, lease(producer, "warm-up", 2, 1, warmCache.agent().name()), 1);
		PeerProcess foreign = foreignAgent(producerCache);
		List<KvLease> honest = new CopyOnWriteArrayList<>();
		AtomicBoolean stop = new AtomicBoolean();
		AtomicInteger sent = new AtomicInteger();
		// well-formed done messages every 100 ms: for lease ids it guesses (answered
		// UNKNOWN, once its metadata is found) and for the honest leases (not its own:
		// ignored)
		CompletableFuture<Void> attack = CompletableFuture.runAsync(() -> {
			while (!stop.get()) {
				int n = sent.getAndIncrement();
				String message;
				if (n % 2 == 0 || honest.isEmpty()) {
					message = new String(
							KvMessages.done(PREFIX, "guess-" + n,
									ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE), 0),
							StandardCharsets.UTF_8);
				}
				else {
					KvLease target = honest.get(honest.size() - 1);
					message = new String(
							KvMessages.done(PREFIX, target.requestId(), target.id(), 0, target.params().generation()),
							StandardCharsets.UTF_8);
				}
				foreign.sendNotification(producerName, text(message));
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
			}
		});
		List<Duration> pulls = new ArrayList<>();
		boolean backedUp = false;
		int mostPending = 0;
		Duration expiredAfter;
		try {
			Eventually.until(WAIT, "answers to the foreign agent wait", () -> producer.pendingAnswers() > 0);
			// a lease nobody pulls expires on time meanwhile
			int[] block = producerCache.allocator().allocate(1);
			long leased = System.nanoTime();
			KvLease unpulled = KvFixture.leaseKeeping(producer, "unpulled", block, 1, Duration.ofMillis(200));
			producerCache.allocator().release(block);
			assertThat(unpulled.outcome()).succeedsWithin(HONEST_BOUND).isEqualTo(LeaseOutcome.EXPIRED);
			expiredAfter = Duration.ofNanos(System.nanoTime() - leased);
			long end = System.nanoTime() + peerTimeout.plusSeconds(1).toNanos();
			int round = 0;
			while (System.nanoTime() - end < 0) {
				// a consumer already loaded, and a new one the producer has not seen yet
				KvLease lease = lease(producer, "warm-" + round, 2, 10 + round, warmCache.agent().name());
				honest.add(lease);
				pulls.add(pullAndCheck(warm, lease, 10 + round));
				PagedKvCache freshCache = cache("decode-fresh");
				this.kv.publish(freshCache);
				KvConsumer fresh = this.kv.consumer(freshCache, 0, producer);
				KvLease first = lease(producer, "fresh-" + round, 2, 100 + round, freshCache.agent().name());
				honest.add(first);
				pulls.add(pullAndCheck(fresh, first, 100 + round));
				backedUp |= producer.answersBackedUp();
				mostPending = Math.max(mostPending, producer.pendingAnswers());
				requests.addAndGet(2);
				round++;
			}
		}
		finally {
			stop.set(true);
			attack.get(WAIT.toSeconds(), TimeUnit.SECONDS);
		}
		for (KvLease lease : honest) {
			assertThat(lease.outcome()).as(lease.requestId()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		}
		Duration slowest = pulls.stream().max(Duration::compareTo).orElseThrow();
		System.out.printf(
				"%s engine: %d done messages from an agent whose metadata cannot be found; %d honest pulls verified"
						+ " meanwhile, the slowest in %.1f ms; answers waiting at most %d, backed up: %s;"
						+ " a 200 ms lease's outcome was EXPIRED %d ms after it was taken%n",
				engine(), sent.get(), pulls.size(), slowest.toNanos() / 1e6, mostPending, backedUp,
				expiredAfter.toMillis());
		assertThat(pulls).as("honest pulls, every one verified").hasSize(requests.get());
		assertThat(slowest).as("the slowest honest pull").isLessThan(HONEST_BOUND);
		assertThat(backedUp).as("the producer said its answers back up").isTrue();
		assertThat(mostPending).isBetween(1, KvProducer.MAX_PENDING_ANSWERS_PER_CONSUMER);
		assertThat(producer.ignoredMessages()).as("done messages for the honest leases").isPositive();
		// every answer to the foreign agent is given up at its deadline, none is sent
		Eventually.until(peerTimeout.plus(WAIT), "the answers to the foreign agent given up",
				() -> producer.pendingAnswers() == 0);
		assertThat(producer.answersBackedUp()).isFalse();
		assertThat(producer.droppedAnswers()).isPositive();
		assertThat(foreign.poll(PREFIX + "ack:")).as("answers that reached the foreign agent").isZero();
		assertThat(producer.awaitLeasesEnded(WAIT)).isTrue();
		assertThat(producer.internalErrors()).isZero();
	}

}
