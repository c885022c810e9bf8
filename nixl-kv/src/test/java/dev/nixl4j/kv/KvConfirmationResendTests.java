package dev.nixl4j.kv;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.FaultInjectingDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lost confirmation costs a resend, not the pull's deadline, on every engine (one
 * subclass per engine): a consumer that gets no answer within its resend bound sends its
 * done message again, and the producer answers a repeat as it answered the first. The
 * notifications are lost in the receiving agent's driver
 * ({@link FaultInjectingDriver#dropNotifications}); every pulled block is checked byte by
 * byte. The tests print how long a pull with a lost notification took against the bound.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class KvConfirmationResendTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration LONG_LEASE = Duration.ofMinutes(5);

	/**
	 * The resend bound of the tests' consumers: above the default, so that a busy test
	 * machine answers a repeat within it and a pull repeats exactly once.
	 */
	private static final Duration BOUND = Duration.ofMillis(100);

	private static final String PREFIX = KvMessages.DEFAULT_PREFIX;

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

	private Producer startProducer() {
		KvFixture.FaultInjectingAgent prefill = this.kv.faultInjectingAgent("prefill");
		PagedKvCache cache = this.kv
			.track(PagedKvCache.builder(prefill.agent(), LAYOUT).modelFingerprint("model-a").build());
		this.kv.publication(prefill.agent(), cache).publish();
		return new Producer(prefill.driver(), cache, this.kv.producer(cache));
	}

	private Consumer startConsumer(Duration resend) {
		KvFixture.FaultInjectingAgent decode = this.kv.faultInjectingAgent("decode");
		PagedKvCache cache = this.kv
			.track(PagedKvCache.builder(decode.agent(), LAYOUT).modelFingerprint("model-a").build());
		MetadataPublication publication = this.kv.publication(decode.agent(), null);
		KvConsumer consumer = KvConsumer.builder(cache)
			.exchange(this.kv.exchange())
			.publication(publication)
			.peerTimeout(WAIT)
			.confirmationResend(resend)
			.build();
		return new Consumer(decode.driver(), cache, consumer);
	}

	/** Leases freshly filled blocks of the producer under a request. */
	private static KvLease lease(Producer producer, String requestId, int blocks, long seed) {
		int[] ids = producer.cache.allocator().allocate(blocks);
		for (int r = 0; r < LAYOUT.regionCount(); r++) {
			for (int id : ids) {
				Bytes.fill(producer.cache.block(r, id), seed * 1000 + r * 100 + id);
			}
		}
		KvLease lease = KvFixture.leaseKeeping(producer.producer, requestId, ids, 1, LONG_LEASE);
		producer.cache.allocator().release(ids);
		return lease;
	}

	/** Pulls a lease and checks every byte; returns how long the pull took. */
	private static Duration pullAndCheck(Consumer consumer, KvLease lease, long seed) {
		int[] remote = lease.params().blockIdArray();
		int[] local = consumer.cache.allocator().allocate(remote.length);
		try {
			long start = System.nanoTime();
			consumer.consumer.pull(lease.params(), local, WAIT);
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			for (int r = 0; r < LAYOUT.regionCount(); r++) {
				for (int i = 0; i < local.length; i++) {
					assertThat(Bytes.hasPattern(consumer.cache.block(r, local[i]), seed * 1000 + r * 100 + remote[i]))
						.as("region %d, local block %d <- producer block %d", r, local[i], remote[i])
						.isTrue();
				}
			}
			return took;
		}
		finally {
			consumer.cache.allocator().release(local);
		}
	}

	/**
	 * Pulls once with nothing lost, so that both sides have loaded each other's metadata
	 * and a later pull's round trip is the steady one; returns how long it took.
	 */
	private static Duration warmUp(Producer producer, Consumer consumer) {
		pullAndCheck(consumer, lease(producer, "warm-up-1", 2, 1), 1);
		return pullAndCheck(consumer, lease(producer, "warm-up-2", 2, 2), 2);
	}

	private void report(String lost, Duration took, Duration steady) {
		System.out.printf(
				"%s engine, %s lost: the pull took %.1f ms (resend bound %d ms; the same pull with nothing"
						+ " lost %.2f ms)%n",
				engine(), lost, took.toNanos() / 1e6, BOUND.toMillis(), steady.toNanos() / 1e6);
	}

	@Test
	void aLostDoneNotificationCostsOneResend() {
		Producer producer = startProducer();
		Consumer consumer = startConsumer(BOUND);
		Duration steady = warmUp(producer, consumer);
		// the first pull may have repeated its done message while the producer loaded
		// this consumer's metadata
		long resends = consumer.consumer.confirmationResends();
		int free = producer.cache.allocator().freeCount();
		KvLease lease = lease(producer, "req-1", 3, 3);
		producer.driver.dropNotifications(KvMessages.donePrefix(PREFIX), 1);

		Duration took = pullAndCheck(consumer, lease, 3);

		report("the READ's done notification", took, steady);
		assertThat(producer.driver.droppedNotifications()).hasSize(1);
		assertThat(consumer.consumer.confirmationResends() - resends).isEqualTo(1);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(producer.producer.awaitLeasesEnded(WAIT)).isTrue();
		assertThat(producer.cache.allocator().freeCount()).as("the lease's blocks released once").isEqualTo(free);
	}

	@Test
	void aLostAnswerCostsOneResendAnsweredAsTheFirst() {
		Producer producer = startProducer();
		Consumer consumer = startConsumer(BOUND);
		Duration steady = warmUp(producer, consumer);
		// the first pull may have repeated its done message while the producer loaded
		// this consumer's metadata
		long resends = consumer.consumer.confirmationResends();
		int free = producer.cache.allocator().freeCount();
		KvLease lease = lease(producer, "req-1", 3, 3);
		consumer.driver.dropNotifications(KvMessages.ackPrefix(PREFIX, "req-1", lease.id(), 0), 1);

		Duration took = pullAndCheck(consumer, lease, 3);

		report("the producer's answer", took, steady);
		assertThat(consumer.driver.droppedNotifications()).hasSize(1);
		assertThat(consumer.consumer.confirmationResends() - resends).isEqualTo(1);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(producer.producer.awaitLeasesEnded(WAIT)).isTrue();
		assertThat(producer.cache.allocator().freeCount()).as("the lease's blocks released once").isEqualTo(free);
		// and the next pull is not disturbed by anything the first left behind
		pullAndCheck(consumer, lease(producer, "req-2", 2, 4), 4);
	}

	/**
	 * The figure for the documentation: with the default bound, how long pulls take that
	 * lose the READ's done message, that lose the producer's answer, and that lose
	 * nothing, in interleaved rounds. Prints the medians; asserts only that every pull
	 * moved its bytes and that each loss cost at least one resend.
	 */
	@Test
	void aLostNotificationDelaysAPullByAboutTheDefaultBound() {
		Producer producer = startProducer();
		Consumer consumer = startConsumer(KvConsumer.DEFAULT_CONFIRMATION_RESEND);
		warmUp(producer, consumer);
		long resends = consumer.consumer.confirmationResends();
		int rounds = 9;
		List<Duration> lostDone = new ArrayList<>();
		List<Duration> lostAnswer = new ArrayList<>();
		List<Duration> nothingLost = new ArrayList<>();
		for (int i = 0; i < rounds; i++) {
			nothingLost.add(pullAndCheck(consumer, lease(producer, "none-" + i, 4, 100 + i), 100 + i));
			producer.driver.dropNotifications(KvMessages.donePrefix(PREFIX), 1);
			lostDone.add(pullAndCheck(consumer, lease(producer, "done-" + i, 4, 200 + i), 200 + i));
			KvLease lease = lease(producer, "answer-" + i, 4, 300 + i);
			consumer.driver.dropNotifications(KvMessages.ackPrefix(PREFIX, lease.requestId(), lease.id(), 0), 1);
			lostAnswer.add(pullAndCheck(consumer, lease, 300 + i));
		}

		long repeated = consumer.consumer.confirmationResends() - resends;
		System.out.printf(
				"%s engine, resend bound %d ms (default), %d interleaved rounds of 4-block pulls, median (min-max):"
						+ " nothing lost %s; READ's done notification lost %s; producer's answer lost %s;"
						+ " resends %d for %d lost notifications%n",
				engine(), KvConsumer.DEFAULT_CONFIRMATION_RESEND.toMillis(), rounds, summary(nothingLost),
				summary(lostDone), summary(lostAnswer), repeated, 2 * rounds);
		assertThat(producer.driver.droppedNotifications()).hasSize(rounds);
		assertThat(consumer.driver.droppedNotifications()).hasSize(rounds);
		assertThat(repeated).isGreaterThanOrEqualTo(2 * rounds);
	}

	private static String summary(List<Duration> took) {
		List<Duration> sorted = took.stream().sorted().toList();
		return String.format("%.2f ms (%.2f-%.2f)", sorted.get(sorted.size() / 2).toNanos() / 1e6,
				sorted.get(0).toNanos() / 1e6, sorted.get(sorted.size() - 1).toNanos() / 1e6);
	}

	@Test
	void answersToRepeatedDoneMessagesAreDroppedAndNeverTakenByALaterPull() {
		Producer producer = startProducer();
		// a bound far below the round trip: every pull repeats its done message at once
		Consumer consumer = startConsumer(Duration.ofNanos(1000));
		warmUp(producer, consumer);
		long resends = consumer.consumer.confirmationResends();
		long received = consumer.cache.agent().statistics().notificationsReceived();
		int free = producer.cache.allocator().freeCount();
		List<KvLease> leases = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			KvLease lease = lease(producer, "req-" + i, 2, 10 + i);
			leases.add(lease);
			// each pull repeats its done message, soon several times
			producer.driver.dropNotifications(KvMessages.donePrefix(PREFIX), 1);
			pullAndCheck(consumer, lease, 10 + i);
		}

		// most pulls repeat; the one dropped done message may be a late repeat of the
		// pull
		// before, so a pull can go without
		assertThat(consumer.consumer.confirmationResends() - resends).isPositive();
		for (KvLease lease : leases) {
			assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		}
		assertThat(producer.producer.awaitLeasesEnded(WAIT)).isTrue();
		assertThat(producer.cache.allocator().freeCount()).isEqualTo(free);
		NixlAgent agent = consumer.cache.agent();
		Eventually.until(WAIT, "every answer the producer sent received", () -> agent.statistics()
			.notificationsReceived() == producer.cache.agent().statistics().notificationsSent());
		System.out.printf("%s engine: %d pulls repeated their done messages %d times; answers received %d%n", engine(),
				leases.size(), consumer.consumer.confirmationResends() - resends,
				agent.statistics().notificationsReceived() - received);
		assertThat(agent.pollNotification(NotificationMatcher.prefix(null, PREFIX + "ack:")))
			.as("no answer left in the mailbox")
			.isEmpty();
	}

	@Test
	void aRepeatedDoneOfACompletedLeaseIsAnsweredHeldOnlyForTheSameReadAgentAndGeneration() throws Exception {
		Producer producer = startProducer();
		Consumer consumer = startConsumer(BOUND);
		Consumer other = startConsumer(BOUND);
		warmUp(producer, consumer);
		warmUp(producer, other);
		KvLease lease = lease(producer, "req-1", 2, 3);
		// the READ's own done message is lost, and kept: the pull completes the lease
		// with its repeat
		producer.driver.dropNotifications(KvMessages.donePrefix(PREFIX), 1);
		pullAndCheck(consumer, lease, 3);
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		assertThat(producer.producer.awaitLeasesEnded(WAIT)).isTrue();
		int free = producer.cache.allocator().freeCount();
		String lost = new String(producer.driver.droppedNotifications().get(0), StandardCharsets.UTF_8);
		KvMessages.Done done = KvMessages.parseDone(PREFIX, lost);
		assertThat(done).isNotNull();
		assertThat(done.read()).as("the done message names its READ").isNotEqualTo(KvMessages.NO_READ);
		long generation = lease.params().generation();
		// the pull waits for an answer to its lost done message, to drop it: this one
		NixlAgent agent = consumer.cache.agent();
		long received = agent.statistics().notificationsReceived();
		agent.sendNotification(producer.cache.agent().name(),
				KvMessages.done(PREFIX, lease.requestId(), lease.id(), 0, generation, done.read()));
		Eventually.until(WAIT, "the answer received", () -> agent.statistics().notificationsReceived() == received + 1);
		assertThat(agent.pollNotification(NotificationMatcher.prefix(null, PREFIX + "ack:")))
			.as("the answer taken by the pull's wait, not left in the mailbox")
			.isEmpty();

		assertThat(repeat(consumer, producer, lease, generation, done.read())).as("a repeat")
			.isEqualTo(LeaseConfirmation.HELD);
		assertThat(repeat(consumer, producer, lease, generation ^ 1, done.read())).as("under another generation")
			.isEqualTo(LeaseConfirmation.STALE);
		assertThat(repeatUnanswered(other, producer, lease, generation, done.read())).as("from another agent")
			.isEqualTo(1);
		assertThat(repeat(consumer, producer, lease, generation, done.read() + 1))
			.as("another READ of the lease, after it completed")
			.isEqualTo(LeaseConfirmation.UNKNOWN);
		assertThat(repeat(consumer, producer, lease, generation, KvMessages.NO_READ)).as("a READ that names none")
			.isEqualTo(LeaseConfirmation.UNKNOWN);

		assertThat(producer.cache.allocator().freeCount()).as("nothing released again").isEqualTo(free);
		assertThat(producer.producer.activeLeases()).isZero();
		assertThat(producer.producer.internalErrors()).isZero();
	}

	@Test
	void resendsCanBeTurnedOff() {
		Producer producer = startProducer();
		Consumer consumer = startConsumer(Duration.ZERO);
		warmUp(producer, consumer);
		KvLease lease = lease(producer, "req-1", 2, 3);
		producer.driver.dropNotifications(KvMessages.donePrefix(PREFIX), 1);
		int[] local = consumer.cache.allocator().allocate(2);

		org.assertj.core.api.Assertions
			.assertThatThrownBy(() -> consumer.consumer.pull(lease.params(), local, Duration.ofMillis(500)))
			.isInstanceOf(KvLeaseLostException.class);
		consumer.cache.allocator().release(local);

		assertThat(consumer.consumer.confirmationResends()).isZero();
		assertThat(lease.outcome()).as("given back by the failed pull")
			.succeedsWithin(WAIT)
			.isEqualTo(LeaseOutcome.RELEASED);
	}

	/** Sends a lease's done message again from a consumer and returns the answer. */
	private static LeaseConfirmation repeat(Consumer consumer, Producer producer, KvLease lease, long generation,
			long read) {
		NixlAgent agent = consumer.cache.agent();
		String producerName = producer.cache.agent().name();
		String ackPrefix = KvMessages.ackPrefix(PREFIX, lease.requestId(), lease.id(), 0);
		CompletableFuture<Notification> ack = agent
			.expectNotification(NotificationMatcher.prefix(producerName, ackPrefix), WAIT);
		agent.sendNotification(producerName,
				KvMessages.done(PREFIX, lease.requestId(), lease.id(), 0, generation, read));
		LeaseConfirmation answer = KvMessages.parseAck(ackPrefix, ack.join().text());
		assertThat(answer).isNotNull();
		return answer;
	}

	/**
	 * Sends a lease's done message from a consumer that is not the lease's, checks that
	 * it is not answered, and returns how many messages the producer counted as ignored.
	 */
	private static long repeatUnanswered(Consumer consumer, Producer producer, KvLease lease, long generation,
			long read) throws Exception {
		NixlAgent agent = consumer.cache.agent();
		String producerName = producer.cache.agent().name();
		long ignored = producer.producer.ignoredMessages();
		CompletableFuture<Notification> ack = agent.expectNotification(NotificationMatcher.prefix(producerName,
				KvMessages.ackPrefix(PREFIX, lease.requestId(), lease.id(), 0)), Duration.ofMillis(500));
		agent.sendNotification(producerName,
				KvMessages.done(PREFIX, lease.requestId(), lease.id(), 0, generation, read));
		Eventually.until(WAIT, "the message counted as ignored", () -> producer.producer.ignoredMessages() > ignored);
		assertThat(ack).as("no answer").failsWithin(Duration.ofSeconds(5));
		return producer.producer.ignoredMessages() - ignored;
	}

	private record Producer(FaultInjectingDriver driver, PagedKvCache cache, KvProducer producer) {
	}

	private record Consumer(FaultInjectingDriver driver, PagedKvCache cache, KvConsumer consumer) {
	}

}
