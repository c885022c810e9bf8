package dev.nixl4j.micrometer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.TestPeer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A service without Spring binds the agent's meters and observes its transfers and
 * metadata fetches, as docs/operations.md shows.
 */
class PlainJavaMetricsTests {

	private static final int SIZE = 1 << 16;

	@Test
	void aPlainServiceBindsTheAgentsMeters() {
		MeterRegistry meters = new SimpleMeterRegistry();
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("plain-meters").engine(Engine.EMBEDDED).build());
				TestPeer peer = TestPeer.start("meters", SIZE, 3, Engine.EMBEDDED);
				Arena arena = Arena.ofShared()) {
			NixlAgentMetrics.builder(agent).tags(Tags.of("zone", "a")).build().bindTo(meters);
			MemorySegment local = Bytes.pattern(arena, SIZE, 0);
			try (Registration _ = agent.register(local)) {
				agent.loadRemoteMetadata(peer.agent().localMetadata());
				peer.transfer(agent, XferOp.READ, local, null);
			}
			Tags read = Tags.of("agent", "plain-meters", "zone", "a", "op", "read", "outcome", "completed");
			assertThat(meters.get("nixl.transfers").tags(read).functionCounter().count()).isEqualTo(1);
			assertThat(meters.get("nixl.transfer.bytes").tags(read).functionCounter().count()).isEqualTo(SIZE);
			assertThat(meters.get("nixl.transfer.duration").tags(read).timer().count())
				.as("the binder added its own duration listener to the agent")
				.isEqualTo(1);
			assertThat(meters.get("nixl.peers").tags("agent", "plain-meters").gauge().value()).isEqualTo(1);
		}
	}

	@Test
	void aPlainServiceObservesTransfersAndMetadataFetches() {
		MeterRegistry meters = new SimpleMeterRegistry();
		ObservationRegistry observations = ObservationRegistry.create();
		observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("plain-observed").engine(Engine.EMBEDDED).build());
				TestPeer peer = TestPeer.start("observed", SIZE, 4, Engine.EMBEDDED);
				MetadataExchange exchange = new ObservedMetadataExchange(new InMemoryMetadataExchange(), observations,
						null);
				Arena arena = Arena.ofShared()) {
			agent.addTransferListener(new ObservationTransferListener(observations, agent.name(), null));
			exchange.publish(peer.agent());
			MemorySegment local = Bytes.pattern(arena, SIZE, 0);
			try (Registration _ = agent.register(local);
					MetadataExchange.Watch _ = exchange.load(agent, peer.agent().name(), Duration.ofSeconds(5))) {
				peer.transfer(agent, XferOp.READ, local, null);
			}
			assertThat(meters.get(DefaultTransferObservationConvention.NAME)
				.tags("agent", "plain-observed", "op", "read", "outcome", "completed")
				.timer()
				.count()).isEqualTo(1);
			assertThat(meters.get(DefaultMetadataObservationConvention.NAME)
				.tags("operation", "load", "status", "success")
				.timer()
				.count()).isEqualTo(1);
		}
	}

}
