package dev.nixl4j.kv;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Bytes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The steps of the KV protocol as a {@link KvObserver} sees them, on a real hand-off
 * (embedded engine, every byte checked): the lease's trace context reaches the consumer's
 * pull with the parameters, the pull's reaches the producer's answer with the done
 * message, and the consumer's steps nest and end in order.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EmbeddedKvObserverTest {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final KvTraceContext LEASE = new KvTraceContext(
			"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=lease");

	private static final KvTraceContext PULL = new KvTraceContext(
			"00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01", "");

	private static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(2)
		.blocks(16)
		.blockSize(16)
		.kvHeads(4)
		.headDim(8)
		.build();

	@RegisterExtension
	final KvFixture kv = new KvFixture(() -> Engine.EMBEDDED);

	private final Queue<String> steps = new ConcurrentLinkedQueue<>();

	@Test
	void theLeasesContextReachesThePullAndThePullsReachesTheProducersAnswer() {
		NixlAgent prefill = this.kv.track(NixlAgent.create(this.kv.config("prefill-obs").build()));
		PagedKvCache producerCache = this.kv.track(PagedKvCache.builder(prefill, LAYOUT).modelFingerprint("m").build());
		this.kv
			.track(MetadataPublication.builder(this.kv.exchange(), prefill)
				.document(KvDirectory.HANDLE_DOCUMENT, producerCache.handle().toJson())
				.build())
			.publish();
		KvProducer producer = this.kv.track(KvProducer.builder(producerCache)
			.peers(PeerLoader.of(this.kv.exchange()))
			.observer(new ProducerSteps())
			.build());
		NixlAgent decode = this.kv.track(NixlAgent.create(this.kv.config("decode-obs").build()));
		PagedKvCache consumerCache = this.kv.track(PagedKvCache.builder(decode, LAYOUT).modelFingerprint("m").build());
		MetadataPublication publication = this.kv
			.track(MetadataPublication.builder(this.kv.exchange(), decode).build());
		KvConsumer consumer = KvConsumer.builder(consumerCache)
			.exchange(this.kv.exchange())
			.publication(publication)
			.observer(new ConsumerSteps())
			.build();

		int[] ids = producerCache.allocator().allocate(3);
		for (int r = 0; r < LAYOUT.regionCount(); r++) {
			for (int id : ids) {
				Bytes.fill(producerCache.block(r, id), r * 100 + id);
			}
		}
		KvLease lease = KvFixture.leaseKeeping(producer, "req-obs", ids, 1, Duration.ofMinutes(5));
		producerCache.allocator().release(ids);
		assertThat(lease.params().traceContext()).as("the lease's parameters carry the observer's context")
			.isEqualTo(LEASE);
		int[] local = consumerCache.allocator().allocate(3);
		consumer.pull(lease.params(), local, WAIT);
		for (int r = 0; r < LAYOUT.regionCount(); r++) {
			for (int i = 0; i < local.length; i++) {
				assertThat(Bytes.hasPattern(consumerCache.block(r, local[i]), r * 100 + ids[i])).isTrue();
			}
		}
		assertThat(lease.outcome()).succeedsWithin(WAIT).isEqualTo(LeaseOutcome.COMPLETED);

		assertThat(this.steps).filteredOn((step) -> step.startsWith("consumer"))
			.containsExactly("consumer pull " + LEASE.traceparent() + " vendor=lease", "consumer read",
					"consumer read end null null", "consumer confirmation", "consumer confirmation end HELD null",
					"consumer pull end HELD null");
		assertThat(this.steps).filteredOn((step) -> step.startsWith("producer"))
			.containsExactly("producer lease req-obs", "producer confirming decode-obs req-obs " + PULL.traceparent(),
					"producer confirming end HELD null");
	}

	@Test
	void withoutObserversTheParametersAndTheDoneMessageCarryNoTraceContext() {
		KvTransferParams params = KvTransferParams.builder()
			.producerAgent("p")
			.requestId("req")
			.blockIds(1)
			.layoutFingerprint("f")
			.leaseId(1)
			.build();

		assertThat(params.traceContext()).isNull();
		assertThat(params.traceparent()).isEmpty();
		assertThat(KvObserver.NONE.pullStarted(params)).isSameAs(KvObserver.Pull.NONE);
		assertThat(KvObserver.Pull.NONE.traceContext()).isNull();
		assertThat(KvObserver.Pull.NONE.read()).isSameAs(KvObserver.Step.NONE);
		assertThat(KvObserver.NONE.confirming("c", "req", 1, null)).isSameAs(KvObserver.Step.NONE);
	}

	private static String describe(@Nullable Object value) {
		return String.valueOf(value);
	}

	private final class ProducerSteps implements KvObserver {

		@Override
		public KvTraceContext leaseTaken(KvLease lease) {
			EmbeddedKvObserverTest.this.steps.add("producer lease " + lease.requestId());
			return LEASE;
		}

		@Override
		public Step confirming(String consumer, String requestId, long leaseId, @Nullable KvTraceContext pull) {
			EmbeddedKvObserverTest.this.steps.add("producer confirming " + consumer + " " + requestId + " "
					+ ((pull != null) ? pull.traceparent() : "none"));
			return new Recorded("producer confirming");
		}

	}

	private final class ConsumerSteps implements KvObserver {

		@Override
		public Pull pullStarted(KvTransferParams params) {
			EmbeddedKvObserverTest.this.steps.add("consumer pull " + params.traceparent() + " " + params.tracestate());
			return new RecordedPull();
		}

	}

	private class Recorded implements KvObserver.Step {

		private final String name;

		Recorded(String name) {
			this.name = name;
		}

		@Override
		public void end(@Nullable LeaseConfirmation confirmation, @Nullable Throwable failure) {
			EmbeddedKvObserverTest.this.steps
				.add(this.name + " end " + describe(confirmation) + " " + describe(failure));
		}

	}

	private final class RecordedPull extends Recorded implements KvObserver.Pull {

		RecordedPull() {
			super("consumer pull");
		}

		@Override
		public KvTraceContext traceContext() {
			return PULL;
		}

		@Override
		public KvObserver.Step read() {
			EmbeddedKvObserverTest.this.steps.add("consumer read");
			return new Recorded("consumer read");
		}

		@Override
		public KvObserver.Step confirmation() {
			EmbeddedKvObserverTest.this.steps.add("consumer confirmation");
			return new Recorded("consumer confirmation");
		}

	}

}
