package dev.nixl4j.micrometer;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The builders of the meters refuse what cannot be built, naming why, and give the meters
 * the tags they were built with.
 */
class MeterBuildersTests {

	@Test
	void agentMetersWithTheCallersDurationsListenerTakeItsTags() {
		MeterRegistry meters = new SimpleMeterRegistry();
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("built-meters").engine(Engine.EMBEDDED).build())) {
			NixlTransferDurations durations = new NixlTransferDurations(agent.name(), Tags.of("zone", "b"));
			NixlAgentMetrics.builder(agent).durations(durations).build().bindTo(meters);
			assertThat(meters.get("nixl.peers").tags("agent", "built-meters", "zone", "b").gauge().value()).isZero();
		}
	}

	@Test
	void agentMetersRefuseTagsBesideADurationsListener() {
		try (NixlAgent agent = NixlAgent
			.create(AgentConfig.builder("refused-meters").engine(Engine.EMBEDDED).build())) {
			NixlAgentMetrics.Builder builder = NixlAgentMetrics.builder(agent)
				.tags(Tags.of("zone", "a"))
				.durations(new NixlTransferDurations(agent.name(), Tags.empty()));
			assertThatIllegalStateException().isThrownBy(builder::build)
				.withMessageContaining("refused-meters")
				.withMessageContaining("give the tags to the listener");
		}
	}

	@Test
	void kvMetersNeedAProducerOrAConsumer() {
		assertThatIllegalStateException().isThrownBy(() -> NixlKvMetrics.builder().tags(Tags.of("zone", "a")).build())
			.withMessageContaining("KvProducer or a KvConsumer");
	}

}
