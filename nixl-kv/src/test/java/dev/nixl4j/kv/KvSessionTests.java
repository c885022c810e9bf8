package dev.nixl4j.kv;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.FaultInjectingDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The consumer's session with its producers, on every engine (one subclass per engine):
 * producers found by name through a directory, checked before anything is loaded,
 * restarts and disconnects handled by the consumer itself. Every pulled block is checked
 * byte by byte.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class KvSessionTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration LONG_LEASE = Duration.ofMinutes(5);

	/** The native status code of a failure in the backend ({@code NIXL_ERR_BACKEND}). */
	private static final int ERR_BACKEND = -2;

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

	/** A producer that publishes its metadata and handle, as a worker does at start. */
	private Producer startProducer(String name, String model) {
		return startProducer(name, model, false);
	}

	/**
	 * A producer that publishes its metadata and handle and, when told, watches its
	 * consumers' entries.
	 */
	private Producer startProducer(String name, String model, boolean watchConsumers) {
		NixlAgent agent = NixlAgent.create(this.kv.config(name).build());
		PagedKvCache cache = PagedKvCache.builder(agent, LAYOUT).modelFingerprint(model).build();
		MetadataPublication publication = MetadataPublication.builder(this.kv.exchange(), agent)
			.document(KvDirectory.HANDLE_DOCUMENT, cache.handle().toJson())
			.build();
		publication.publish();
		KvProducer.Builder builder = KvProducer.builder(cache).peers(PeerLoader.of(this.kv.exchange()));
		if (watchConsumers) {
			builder.watchConsumers(this.kv.exchange());
		}
		KvProducer producer = builder.build();
		Producer started = new Producer(agent, cache, publication, producer);
		this.kv.track(started);
		return started;
	}

	private Consumer startConsumer(String model) {
		KvFixture.FaultInjectingAgent decode = this.kv.faultInjectingAgent("decode");
		NixlAgent agent = decode.agent();
		PagedKvCache cache = this.kv.track(PagedKvCache.builder(agent, LAYOUT).modelFingerprint(model).build());
		MetadataPublication publication = this.kv.publication(agent, null);
		KvConsumer consumer = KvConsumer.builder(cache)
			.exchange(this.kv.exchange())
			.publication(publication)
			.peerTimeout(WAIT)
			.build();
		return new Consumer(decode.driver(), cache, publication, consumer);
	}

	/** Leases freshly filled blocks of the producer under a request. */
	private static KvLease lease(Producer producer, String requestId, int blocks, long seed) {
		int[] ids = producer.cache.allocator().allocate(blocks);
		for (int r = 0; r < LAYOUT.regionCount(); r++) {
			for (int id : ids) {
				Bytes.fill(producer.cache.block(r, id), seed * 1000 + r * 100 + id);
			}
		}
		return producer.producer.lease(requestId, ids, KvLease.options().ttl(LONG_LEASE));
	}

	/** Pulls a lease and checks every byte; returns the local blocks, released. */
	private static void pullAndCheck(Consumer consumer, KvLease lease, long seed) {
		int[] remote = lease.params().blockIdArray();
		int[] local = consumer.cache.allocator().allocate(remote.length);
		try {
			consumer.consumer.pull(lease.params(), local, WAIT);
			for (int r = 0; r < LAYOUT.regionCount(); r++) {
				for (int i = 0; i < local.length; i++) {
					assertThat(Bytes.hasPattern(consumer.cache.block(r, local[i]), seed * 1000 + r * 100 + remote[i]))
						.as("region %d, local block %d <- producer block %d", r, local[i], remote[i])
						.isTrue();
				}
			}
		}
		finally {
			consumer.cache.allocator().release(local);
		}
	}

	private static KvProducerSession session(Consumer consumer, String producer) {
		return consumer.consumer.sessions()
			.stream()
			.filter(s -> s.producer().equals(producer))
			.findFirst()
			.orElseThrow();
	}

	@Test
	void aPullNeedsOnlyTheLeaseParameters() {
		Producer producer = startProducer(this.kv.name("prefill"), "model-a");
		Consumer consumer = startConsumer("model-a");
		KvLease lease = lease(producer, "req-1", 3, 1);

		pullAndCheck(consumer, lease, 1);

		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		KvProducerSession session = session(consumer, producer.agent.name());
		assertThat(session.state()).isEqualTo(KvSessionState.CONNECTED);
		assertThat(session.incarnation()).isEqualTo(producer.cache.handle().incarnation());
		assertThat(consumer.publication.state().status()).as("the consumer published itself for the confirmation")
			.isEqualTo(MetadataPublication.Status.PUBLISHED);
		// and again, on the session as it is
		pullAndCheck(consumer, lease(producer, "req-2", 2, 2), 2);
	}

	@Test
	void aProducerOfAnotherModelIsRefusedBeforeAnythingIsReadAndItsLeaseGivenBack() {
		Producer producer = startProducer(this.kv.name("prefill"), "model-a");
		Consumer consumer = startConsumer("model-b");
		KvLease lease = lease(producer, "req-1", 2, 1);
		int[] local = consumer.cache.allocator().allocate(2);

		KvIncompatibleException failure = catchThrowableOfType(KvIncompatibleException.class,
				() -> consumer.consumer.pull(lease.params(), local, WAIT));

		assertThat(failure.getMessage()).contains(producer.cache.handle().compatibility())
			.contains(consumer.cache.handle().compatibility());
		assertThat(session(consumer, producer.agent.name()).state()).isEqualTo(KvSessionState.INCOMPATIBLE);
		assertThat(consumer.cache.agent().statistics().transfers(XferOp.READ, TransferState.COMPLETED))
			.as("nothing was read")
			.isZero();
		assertThat(lease.outcome()).as("the lease given back at once")
			.succeedsWithin(WAIT)
			.isEqualTo(LeaseOutcome.RELEASED);
	}

	@Test
	void aRestartedProducerIsPickedUpAndTheOldIncarnationsLeaseFailsAtOnce() throws Exception {
		String name = this.kv.name("prefill");
		Producer first = startProducer(name, "model-a");
		Consumer consumer = startConsumer("model-a");
		pullAndCheck(consumer, lease(first, "req-1", 2, 1), 1);
		KvLease stale = lease(first, "req-2", 2, 2);
		String oldIncarnation = first.cache.handle().incarnation();
		first.close();
		this.kv.forget(first);

		Producer second = startProducer(name, "model-a");
		int[] local = consumer.cache.allocator().allocate(2);
		long start = System.nanoTime();
		KvProducerUnavailableException gone = catchThrowableOfType(KvProducerUnavailableException.class,
				() -> consumer.consumer.pull(stale.params(), local, Duration.ofSeconds(120)));
		consumer.cache.allocator().release(local);

		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("failed long before its deadline")
			.isLessThan(Duration.ofSeconds(60));
		assertThat(gone.getMessage()).contains(oldIncarnation).contains(second.cache.handle().incarnation());
		pullAndCheck(consumer, lease(second, "req-3", 3, 3), 3);
		assertThat(session(consumer, name).incarnation()).isEqualTo(second.cache.handle().incarnation());
		assertThat(session(consumer, name).reconnects()).as("one restart, one reconnect").isOne();
	}

	@Test
	void aProducerThatIsGoneFailsPullsAtOnceAndIsPickedUpWhenItIsBack() {
		Producer producer = startProducer(this.kv.name("prefill"), "model-a");
		Consumer consumer = startConsumer("model-a");
		pullAndCheck(consumer, lease(producer, "req-1", 2, 1), 1);
		KvLease lease = lease(producer, "req-2", 2, 2);
		producer.publication.withdraw();
		// the consumer's agent forgets the withdrawn producer (its exchange watch)
		dev.nixl4j.testsupport.Eventually.until(WAIT, "the producer forgotten",
				() -> !consumer.cache.agent().hasRemoteMetadata(producer.agent.name()));

		int[] local = consumer.cache.allocator().allocate(2);
		for (int i = 0; i < 3; i++) {
			long start = System.nanoTime();
			assertThatThrownBy(() -> consumer.consumer.pull(lease.params(), local, Duration.ofSeconds(120)))
				.isInstanceOf(KvProducerUnavailableException.class)
				.hasMessageContaining(producer.agent.name());
			assertThat(Duration.ofNanos(System.nanoTime() - start))
				.as("failed without waiting for the deadline or the peer timeout")
				.isLessThan(WAIT.dividedBy(3));
		}
		consumer.cache.allocator().release(local);
		assertThat(session(consumer, producer.agent.name()).state()).isEqualTo(KvSessionState.GONE);

		producer.publication.publish();
		pullAndCheck(consumer, lease(producer, "req-3", 2, 3), 3);
		assertThat(session(consumer, producer.agent.name()).state()).isEqualTo(KvSessionState.CONNECTED);
		assertThat(session(consumer, producer.agent.name()).reconnects()).as("the same cache came back").isZero();
	}

	@Test
	void aPostRefusedByTheBackendResetsTheSessionAndIsTriedAgainWithinThePull() {
		Producer producer = startProducer(this.kv.name("prefill"), "model-a");
		Consumer consumer = startConsumer("model-a");
		pullAndCheck(consumer, lease(producer, "req-1", 2, 1), 1);
		long published = consumer.publication.publications();
		consumer.driver.failPostsWithStatus(ERR_BACKEND, 1);

		KvLease lease = lease(producer, "req-2", 3, 2);
		pullAndCheck(consumer, lease, 2);

		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);
		KvProducerSession session = session(consumer, producer.agent.name());
		assertThat(session.state()).isEqualTo(KvSessionState.CONNECTED);
		assertThat(session.reconnects()).isEqualTo(1);
		assertThat(consumer.publication.publications()).as("published again, so the producer reloads it")
			.isGreaterThan(published);
	}

	@Test
	void aTransferLostInFlightFailsThePullAndTheNextPullConnectsAnew() {
		Producer producer = startProducer(this.kv.name("prefill"), "model-a");
		Consumer consumer = startConsumer("model-a");
		pullAndCheck(consumer, lease(producer, "req-1", 2, 1), 1);
		consumer.driver.loseTransfers(ERR_BACKEND, 1);
		KvLease lost = lease(producer, "req-2", 2, 2);
		int[] local = consumer.cache.allocator().allocate(2);

		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> consumer.consumer.pull(lost.params(), local, WAIT));
		consumer.cache.allocator().release(local);

		assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_BACKEND);
		assertThat(failure.remoteAgent()).isEqualTo(producer.agent.name());
		assertThat(lost.outcome()).as("the lease was given back at once")
			.succeedsWithin(WAIT)
			.isEqualTo(LeaseOutcome.RELEASED);
		assertThat(session(consumer, producer.agent.name()).state()).isEqualTo(KvSessionState.RECONNECTING);
		pullAndCheck(consumer, lease(producer, "req-3", 4, 3), 3);
		assertThat(session(consumer, producer.agent.name()).state()).isEqualTo(KvSessionState.CONNECTED);
	}

	@Test
	void concurrentPullsOfOneProducerShareOneResolution() throws Exception {
		Producer producer = startProducer(this.kv.name("prefill"), "model-a");
		Consumer consumer = startConsumer("model-a");
		List<CompletableFuture<Void>> pulls = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			KvLease lease = lease(producer, "req-" + i, 2, 10 + i);
			long seed = 10 + i;
			pulls.add(CompletableFuture.runAsync(() -> pullAndCheck(consumer, lease, seed)));
		}
		for (CompletableFuture<Void> pull : pulls) {
			assertThat(pull).succeedsWithin(WAIT);
		}
		assertThat(session(consumer, producer.agent.name()).reconnects()).isZero();
	}

	@Test
	void theLeasesOfAConsumerThatIsGoneAreReleasedWithoutWaitingForTheirTimeToLive() {
		Producer producer = startProducer(this.kv.name("prefill"), "model-a", true);
		Consumer consumer = startConsumer("model-a");
		Consumer other = startConsumer("model-a");
		consumer.publication.publish();
		other.publication.publish();
		String name = consumer.cache.agent().name();
		int free = producer.cache.allocator().freeCount();
		int[] ids = producer.cache.allocator().allocate(4);
		KvLease gone = KvFixture.leaseKeeping(producer.producer, "req-gone", ids, 1, LONG_LEASE, name);
		producer.cache.allocator().release(ids);
		KvLease stays = lease(producer, "req-other", 2, 2);
		int[] otherIds = producer.cache.allocator().allocate(2);
		KvLease othersLease = KvFixture.leaseKeeping(producer.producer, "req-others", otherIds, 1, LONG_LEASE,
				other.cache.agent().name());
		producer.cache.allocator().release(otherIds);

		consumer.publication.withdraw();

		assertThat(gone.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.RELEASED);
		assertThat(gone.consumer()).contains(name);
		assertThat(stays.outcome()).isNotDone();
		assertThat(othersLease.outcome()).isNotDone();
		assertThat(producer.cache.allocator().freeCount()).isEqualTo(free - 4);
		pullAndCheck(other, stays, 2);
	}

	private record Producer(NixlAgent agent, PagedKvCache cache, MetadataPublication publication,
			KvProducer producer) implements AutoCloseable {

		@Override
		public void close() {
			this.producer.close();
			this.publication.close();
			this.cache.close();
			this.agent.close();
		}

	}

	private record Consumer(FaultInjectingDriver driver, PagedKvCache cache, MetadataPublication publication,
			KvConsumer consumer) {
	}

}
