package dev.nixl4j.autoconfigure.actuator;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryType;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpoint.NixlDescriptor;
import dev.nixl4j.autoconfigure.endpoint.NixlEndpointAutoConfiguration;
import dev.nixl4j.autoconfigure.health.NixlHealthContributorAutoConfiguration;
import dev.nixl4j.autoconfigure.health.NixlHealthIndicator;
import dev.nixl4j.autoconfigure.metrics.NixlMetricsAutoConfiguration;
import dev.nixl4j.testsupport.TestPeer;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

/**
 * Health, meters and the endpoint of an application whose agent runs on native NIXL,
 * after a WRITE and a READ with a native peer in the same JVM.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NativeActuatorTests {

	private static final int SIZE = 1 << 20;

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class,
				NixlHealthContributorAutoConfiguration.class, NixlMetricsAutoConfiguration.class,
				NixlEndpointAutoConfiguration.class, MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
		.withPropertyValues("nixl.agent.engine=native", "management.endpoints.web.exposure.include=nixl");

	@BeforeEach
	void nativeNixl() {
		NativeNixl.require();
	}

	@Test
	void aNativeAgentIsReadyAndCountsWhatItMoved() {
		this.runner.run((context) -> {
			assertThat(context).hasNotFailed();
			NixlAgent agent = context.getBean(NixlAgent.class);
			try (TestPeer peer = TestPeer.start("native", SIZE, 1, Engine.NATIVE); Arena arena = Arena.ofShared()) {
				MemorySegment local = Bytes.pattern(arena, SIZE, 5);
				try (Registration _ = agent.register(local)) {
					agent.loadRemoteMetadata(peer.agent().localMetadata());
					peer.transfer(agent, XferOp.WRITE, local, "written");
					Bytes.fill(peer.memory(), 6);
					peer.transfer(agent, XferOp.READ, local, null);

					Health health = context.getBean(NixlHealthIndicator.class).health();
					assertThat(health.getStatus()).isEqualTo(Status.UP);
					assertThat(health.getDetails()).containsEntry("engine", Engine.NATIVE);
					assertThat(health.getDetails().get("readiness")).asInstanceOf(MAP).containsEntry("status", "READY");

					NixlDescriptor nixl = context.getBean(NixlEndpoint.class).nixl();
					assertThat(nixl.engine()).isEqualTo(Engine.NATIVE);
					assertThat(nixl.availablePlugins()).contains("UCX");
					assertThat(nixl.backends()).singleElement().satisfies((backend) -> {
						assertThat(backend.plugin()).isEqualTo("UCX");
						assertThat(backend.memoryTypes()).contains(MemoryType.DRAM);
					});
					assertThat(nixl.registrations().bytes()).isEqualTo(SIZE);
					assertThat(nixl.peers()).containsExactly(peer.agent().name());
					assertThat(nixl.statistics().transfers().get(XferOp.WRITE)).containsEntry(TransferState.COMPLETED,
							1L);
					assertThat(nixl.statistics().bytes().get(XferOp.READ)).containsEntry(TransferState.COMPLETED,
							(long) SIZE);

					MeterRegistry registry = context.getBean(MeterRegistry.class);
					assertThat(registry.get("nixl.transfers")
						.tags("op", "read", "outcome", "completed")
						.functionCounter()
						.count()).isOne();
					assertThat(registry.get("nixl.transfer.duration")
						.tags("op", "write", "outcome", "completed")
						.timer()
						.count()).isOne();
					assertThat(registry.get("nixl.registered.bytes").gauge().value()).isEqualTo(SIZE);
				}
			}
		});
	}

}
