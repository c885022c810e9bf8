package dev.nixl4j.autoconfigure.health;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.testsupport.Eventually;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

/**
 * The {@code kvProducer} detail of the {@code nixl} health indicator: the producer's
 * leases and answers, and answers that back up while an agent whose metadata cannot be
 * found sends the protocol's messages, which leave the status {@code UP}.
 */
class NixlHealthKvProducerTests {

	private static final AtomicInteger ids = new AtomicInteger();

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static NixlAgent agent(String role) {
		return NixlAgent.create(AgentConfig
			.builder("health-kv-" + role + "-" + ProcessHandle.current().pid() + "-" + ids.incrementAndGet())
			.engine(Engine.EMBEDDED)
			.build());
	}

	@Test
	void answersThatWaitForAnUnknownAgentShowAsBackedUpAndTheStatusStaysUp() {
		KvCacheLayout layout = KvCacheLayout.builder().layers(1).blocks(8).blockSize(4).kvHeads(1).headDim(8).build();
		try (NixlAgent agent = agent("prefill");
				PagedKvCache cache = PagedKvCache.allocate(agent, layout);
				KvProducer producer = KvProducer.builder(cache).peers(PeerLoader.preloaded()).peerTimeout(WAIT).build();
				NixlAgent stranger = agent("stranger")) {
			NixlHealthIndicator indicator = new NixlHealthIndicator(agent).withKvProducer(producer);
			assertThat(indicator.health().getDetails().get("kvProducer")).asInstanceOf(MAP)
				.containsEntry("activeLeases", 0)
				.containsEntry("pendingAnswers", 0)
				.containsEntry("droppedAnswers", 0L)
				.containsEntry("ignoredMessages", 0L)
				.doesNotContainKey("answers");
			int[] blocks = cache.allocator().allocate(1);
			KvLease lease = producer.lease("guarded", blocks, KvLease.options().consumer("the-decode-worker"));
			stranger.loadRemoteMetadata(agent.localMetadata());

			// a done for a lease nobody made (answered UNKNOWN once the stranger is
			// found, which it never is) and a release of a lease that is not its own
			stranger.sendNotification(agent.name(), text("nixl4j.kv/done:guess:12345:0"));
			stranger.sendNotification(agent.name(), text("nixl4j.kv/release:guarded:" + lease.id() + ":0"));
			Eventually.until(WAIT, "answers backed up", producer::answersBackedUp);

			Health health = indicator.health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails().get("kvProducer")).asInstanceOf(MAP)
				.containsEntry("activeLeases", 1)
				.containsEntry("pendingAnswers", 1)
				.containsEntry("droppedAnswers", 0L)
				.containsEntry("ignoredMessages", 1L)
				.hasEntrySatisfying("answers",
						(answers) -> assertThat((String) answers).startsWith("backed up: 1 answers wait")
							.doesNotContain(stranger.name()));
		}
	}

	private static byte[] text(String message) {
		return message.getBytes(StandardCharsets.UTF_8);
	}

}
