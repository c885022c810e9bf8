package dev.nixl4j.autoconfigure.health;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.internal.ffm.NativeLibrary;
import dev.nixl4j.readiness.ReadinessReport;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.LIST;
import static org.assertj.core.api.InstanceOfAssertFactories.MAP;

class NixlHealthIndicatorTests {

	private static final AtomicInteger ids = new AtomicInteger();

	private static AgentConfig.Builder config(String role, Engine engine) {
		return AgentConfig.builder("health-" + role + "-" + ProcessHandle.current().pid() + "-" + ids.incrementAndGet())
			.engine(engine);
	}

	/** The real readiness check, counting how often it runs. */
	private static Function<AgentConfig, ReadinessReport> counting(AtomicInteger runs) {
		return (config) -> {
			runs.incrementAndGet();
			return ReadinessReport.check(config);
		};
	}

	@Test
	void anEmbeddedAgentIsUpWithItsPeersAndTheReadinessReportIsNotRun() {
		AtomicInteger runs = new AtomicInteger();
		try (NixlAgent agent = NixlAgent.create(config("app", Engine.EMBEDDED).build());
				NixlAgent peer = NixlAgent.create(config("peer", Engine.EMBEDDED).build())) {
			agent.loadRemoteMetadata(peer.localMetadata());
			Health health = new NixlHealthIndicator(agent, counting(runs)).health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsOnlyKeys("agent", "engine", "engineDescription", "backends",
					"peers", "inFlightTransfers", "stalledTransfers", "readiness");
			assertThat(health.getDetails()).containsEntry("agent", agent.name())
				.containsEntry("engine", Engine.EMBEDDED)
				.containsEntry("engineDescription", agent.engineDescription())
				.containsEntry("inFlightTransfers", 0)
				.containsEntry("stalledTransfers", 0L);
			assertThat(health.getDetails().get("backends")).asInstanceOf(LIST)
				.containsExactly(agent.backends().getFirst().plugin());
			assertThat(health.getDetails().get("peers")).isEqualTo(Map.of("count", 1, "names", List.of(peer.name())));
			assertThat(health.getDetails().get("readiness")).asInstanceOf(MAP)
				.containsEntry("status", "not checked")
				.hasEntrySatisfying("summary", (summary) -> assertThat((String) summary).contains("embedded engine"));
			assertThat(runs).hasValue(0);
		}
	}

	@Test
	void withoutNamesEveryNameAndPathIsHiddenAndTheRestIsShown() {
		try (NixlAgent agent = NixlAgent.create(config("app", Engine.EMBEDDED).build());
				NixlAgent peer = NixlAgent.create(config("peer", Engine.EMBEDDED).build())) {
			agent.loadRemoteMetadata(peer.localMetadata());
			Health health = new NixlHealthIndicator(agent, counting(new AtomicInteger())).withNames(() -> false)
				.health();
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("agent", NixlHealthIndicator.HIDDEN)
				.containsEntry("engine", Engine.EMBEDDED)
				.containsEntry("inFlightTransfers", 0);
			assertThat(health.getDetails().get("peers"))
				.isEqualTo(Map.of("count", 1, "names", List.of(NixlHealthIndicator.HIDDEN)));
			assertThat(health.getDetails().toString()).doesNotContain(agent.name()).doesNotContain(peer.name());

			Health named = new NixlHealthIndicator(agent, counting(new AtomicInteger())).withNames(() -> true).health();
			assertThat(named.getDetails()).containsEntry("agent", agent.name());
		}
	}

	@Test
	void withoutNamesTheReasonOfAFailedCheckHidesThemToo() {
		NixlAgent agent = NixlAgent.create(config("closed-hidden", Engine.EMBEDDED).build());
		agent.close();
		Health health = new NixlHealthIndicator(agent).withNames(() -> false).health();
		assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		assertThat(health.getDetails()).containsEntry("agent", NixlHealthIndicator.HIDDEN)
			.containsEntry("reason", "the agent is closed");
	}

	@Test
	void aClosedAgentIsDown() {
		NixlAgent agent = NixlAgent.create(config("closed", Engine.EMBEDDED).build());
		agent.close();
		Health health = new NixlHealthIndicator(agent).health();
		assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		assertThat(health.getDetails()).containsEntry("agent", agent.name())
			.containsEntry("reason", "the agent is closed");
	}

	@Test
	void aNativeAgentWhoseConfigurationMovesDataIsUpAndTheReportRunsOnce() {
		NativeNixl.require();
		AtomicInteger runs = new AtomicInteger();
		try (NixlAgent agent = NixlAgent.create(config("native", Engine.NATIVE).build())) {
			NixlHealthIndicator indicator = new NixlHealthIndicator(agent, counting(runs));
			for (int i = 0; i < 3; i++) {
				Health health = indicator.health();
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(health.getDetails()).containsEntry("engine", Engine.NATIVE);
				NativeLibrary library = NativeLibrary.loadedLibrary();
				assertThat(library).isNotNull();
				assertThat(health.getDetails().get("library")).isEqualTo(Map.of("source", library.source(), "path",
						library.path().toString(), "version", library.version()));
				assertThat(library.path()).isRegularFile();
				assertThat(library.source()).isNotBlank();
				assertThat(health.getDetails().get("readiness")).asInstanceOf(MAP).containsEntry("status", "READY");
				CudaReport cuda = Cuda.report();
				assertThat(health.getDetails().get("cuda")).asInstanceOf(MAP)
					.containsEntry("usable", cuda.usable())
					.containsEntry("summary", cuda.summary())
					.containsEntry("runtimeVersion", CudaReport.formatVersion(cuda.runtimeVersion()))
					.containsEntry("ucxCudaTransports", Cuda.ucxCudaSupport().summary());
			}
			assertThat(runs).hasValue(1);
		}
	}

	@Test
	void aNativeAgentWithoutBackendsIsOutOfService() {
		NativeNixl.require();
		try (NixlAgent agent = NixlAgent.create(config("bare", Engine.NATIVE).backends().build())) {
			Health health = new NixlHealthIndicator(agent).health();
			assertThat(health.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
			assertThat(health.getDetails().get("readiness")).asInstanceOf(MAP)
				.containsEntry("status", "BACKEND_NOT_READY")
				.hasEntrySatisfying("summary", (summary) -> assertThat((String) summary).contains("names no backend"));
		}
	}

}
