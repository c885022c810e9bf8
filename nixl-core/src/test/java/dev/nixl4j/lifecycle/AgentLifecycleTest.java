package dev.nixl4j.lifecycle;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.DrainParticipant;
import dev.nixl4j.DrainResult;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A plain Java worker's lifecycle: start publishes the agent's metadata so that a peer
 * can read its memory; stop waits for participants, then withdraws the entry, closes the
 * users of memory and then the agent, in that order and to its deadline.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgentLifecycleTest {

	private static final int SIZE = 64 * 1024;

	private static final Duration WAIT = Duration.ofSeconds(10);

	@Test
	void startPublishesAndStopDrainsWithdrawsClosesUsersThenTheAgent() {
		List<String> steps = new CopyOnWriteArrayList<>();
		try (Arena arena = Arena.ofShared();
				InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();
				NixlAgent worker = embedded("lifecycle-worker");
				NixlAgent peer = embedded("lifecycle-peer")) {
			MemorySegment served = Bytes.pattern(arena, SIZE, 7);
			MemorySegment read = arena.allocate(SIZE, 4096);
			worker.register(served);
			peer.register(read);
			DrainParticipant leases = new FinishingParticipant(Duration.ofMillis(200), steps);
			AutoCloseable cache = () -> {
				steps.add("cache closed, entry published: " + exchange.isPublished(worker.name()) + ", agent open: "
						+ worker.isOpen());
				try (Transfer late = worker.createTransfer(XferOp.WRITE, DescriptorList.of(served),
						DescriptorList.of(read), peer.name(), null)) {
					late.post();
					steps.add("a late post was accepted");
				}
				catch (NixlException ex) {
					steps.add("a late post: " + ex.status());
				}
			};
			AgentLifecycle lifecycle = AgentLifecycle.builder(worker)
				.exchange(exchange)
				.participants(List.of(leases))
				.shutdownTimeout(WAIT)
				.closeBeforeAgent(List.of(cache))
				.build();

			lifecycle.start();
			assertThat(lifecycle.isRunning()).isTrue();
			assertThat(exchange.isPublished(worker.name())).isTrue();
			assertThat(lifecycle.publication()).isNotNull()
				.extracting((publication) -> publication.state().status())
				.isEqualTo(MetadataPublication.Status.PUBLISHED);
			peer.loadRemoteMetadata(exchange.fetch(worker.name(), WAIT));
			worker.loadRemoteMetadata(peer.localMetadata());
			try (Transfer transfer = peer.transfer(XferOp.READ, DescriptorList.of(read), DescriptorList.of(served),
					worker.name(), null)) {
				transfer.await(WAIT);
			}
			assertThat(Bytes.same(read, served)).as("the bytes a peer read through the published entry").isTrue();

			DrainResult result = lifecycle.stop();

			assertThat(result.isComplete()).as("what the drain left: %s", result).isTrue();
			assertThat(steps).containsExactly("participant drained",
					"cache closed, entry published: false, agent open: true", "a late post: " + NixlStatus.UNAVAILABLE);
			assertThat(worker.isOpen()).isFalse();
			assertThat(lifecycle.isRunning()).isFalse();
			assertThat(lifecycle.isStopping()).isTrue();
		}
	}

	@Test
	void aStopThatCannotFinishReturnsAtItsDeadlineAndRunsOnce() {
		try (NixlAgent worker = embedded("lifecycle-stuck")) {
			DrainParticipant stuck = new FinishingParticipant(Duration.ofDays(1), new CopyOnWriteArrayList<>());
			Duration deadline = Duration.ofMillis(300);
			AgentLifecycle lifecycle = AgentLifecycle.builder(worker)
				.participants(List.of(stuck))
				.shutdownTimeout(deadline)
				.build();
			lifecycle.start();

			DrainResult result = lifecycle.stop();

			assertThat(result.isComplete()).isFalse();
			assertThat(result.participantsLeft()).singleElement()
				.satisfies((pending) -> assertThat(pending.work()).isEqualTo("1 lease"));
			assertThat(result.elapsed()).isGreaterThanOrEqualTo(deadline).isLessThan(WAIT);
			assertThat(worker.isOpen()).isFalse();
			assertThat(lifecycle.stop().isComplete()).as("a second stop does nothing").isTrue();
			assertThatIllegalStateException().isThrownBy(lifecycle::start).withMessageContaining("lifecycle-stuck");
		}
	}

	@Test
	void withPublishingAtStartOffTheApplicationPublishes() {
		try (InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();
				NixlAgent worker = embedded("lifecycle-later");
				NixlAgent alone = embedded("lifecycle-alone")) {
			AgentLifecycle lifecycle = AgentLifecycle.builder(worker).exchange(exchange).publishAtStart(false).build();
			lifecycle.start();
			assertThat(exchange.isPublished(worker.name())).isFalse();
			lifecycle.publish();
			assertThat(exchange.isPublished(worker.name())).isTrue();
			lifecycle.close();
			assertThat(exchange.isPublished(worker.name())).as("withdrawn at stop").isFalse();

			AgentLifecycle withoutExchange = AgentLifecycle.builder(alone).build();
			withoutExchange.start();
			assertThatIllegalStateException().isThrownBy(withoutExchange::publish)
				.withMessageContaining("no metadata exchange");
			assertThat(withoutExchange.publication()).isNull();
			withoutExchange.close();
			assertThat(alone.isOpen()).isFalse();
		}
	}

	private static NixlAgent embedded(String name) {
		return NixlAgent.create(AgentConfig.builder(name).engine(Engine.EMBEDDED).build());
	}

	/** A participant whose work ends after a while, recording when it drained. */
	private static final class FinishingParticipant implements DrainParticipant {

		private final long endsAt;

		private final List<String> steps;

		FinishingParticipant(Duration work, List<String> steps) {
			this.endsAt = System.nanoTime() + Math.min(work.toNanos(), Long.MAX_VALUE / 4);
			this.steps = steps;
		}

		@Override
		public boolean awaitDrained(Duration timeout) {
			long left = this.endsAt - System.nanoTime();
			try {
				if (left > timeout.toNanos()) {
					Thread.sleep(timeout);
					return false;
				}
				if (left > 0) {
					TimeUnit.NANOSECONDS.sleep(left);
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
			this.steps.add("participant drained");
			return true;
		}

		@Override
		public String pendingWork() {
			return "1 lease";
		}

	}

}
