package dev.nixl4j;

import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import dev.nixl4j.testsupport.NativeNixl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What only the native engine has: NIXL's plugins, their parameters and backends.
 */
class NativeAgentTest {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	private static NixlAgent agent(String name, BackendConfig... backends) {
		return NixlAgent.create(AgentConfig.builder(name).engine(Engine.NATIVE).backends(backends).build());
	}

	@Test
	void autoUsesNativeNixlWhenItLoads() {
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("auto-agent").build())) {
			assertThat(agent.engine()).isEqualTo(Engine.NATIVE);
			assertThat(agent.backends()).extracting(Backend::plugin).containsExactly("UCX");
		}
	}

	@Test
	void listsPluginsWithTheirParametersAndMemoryTypes() {
		try (NixlAgent agent = agent("plugin-lister")) {
			assertThat(agent.availablePlugins()).contains("UCX", "POSIX");
			PluginInfo ucx = agent.pluginInfo("UCX");
			assertThat(ucx.memoryTypes()).contains(MemoryType.DRAM);
			assertThat(ucx.parameters()).isNotEmpty();
		}
	}

	@Test
	void createsABackendWithParameters() {
		try (NixlAgent agent = agent("backend-maker")) {
			Backend ucx = agent.createBackend("UCX", Map.of("num_workers", "2"));
			assertThat(ucx.plugin()).isEqualTo("UCX");
			assertThat(ucx.memoryTypes()).contains(MemoryType.DRAM);
			assertThat(agent.backends()).containsExactly(ucx);
		}
	}

	@Test
	void theDefaultUcxBackendRunsUcxsThreadPool() {
		int threads = Math.min(Runtime.getRuntime().availableProcessors(), 4);
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder("pool-default").engine(Engine.NATIVE).build())) {
			Map<String, String> reported = agent.backends().get(0).parameters();
			if (threads < 2) {
				assertThat(reported).doesNotContainKeys("num_threads", "split_batch_size");
			}
			else {
				assertThat(reported).containsEntry("num_threads", Integer.toString(threads))
					.containsEntry("split_batch_size", "32");
			}
		}
	}

	@Test
	void withoutNixlsProgressThreadTheUcxBackendGetsNoPool() {
		try (NixlAgent agent = NixlAgent
			.create(AgentConfig.builder("pool-no-thread").engine(Engine.NATIVE).nativeProgressThread(false).build())) {
			assertThat(agent.backends().get(0).parameters()).doesNotContainKeys("num_threads", "split_batch_size");
		}
	}

	@Test
	void aUcxBackendWithItsOwnPoolSettingsKeepsThem() {
		try (NixlAgent agent = agent("pool-off", new BackendConfig("UCX", Map.of("num_threads", "0")));
				NixlAgent other = agent("pool-big-split",
						new BackendConfig("UCX", Map.of("num_threads", "1", "split_batch_size", "1024")))) {
			assertThat(agent.backends().get(0).parameters()).containsEntry("num_threads", "0")
				.doesNotContainKey("split_batch_size");
			assertThat(other.backends().get(0).parameters()).containsEntry("num_threads", "1")
				.containsEntry("split_batch_size", "1024");
		}
	}

	@Test
	void anUnknownPluginFailsWithAClearError() {
		try (NixlAgent agent = agent("unknown-plugin")) {
			assertThatThrownBy(() -> agent.pluginInfo("NO_SUCH_PLUGIN")).isInstanceOfSatisfying(NixlException.class,
					ex -> assertThat(ex.getMessage()).contains("NO_SUCH_PLUGIN").contains("available: ["));
			assertThatThrownBy(() -> agent.createBackend("NO_SUCH_PLUGIN", Map.of()))
				.isInstanceOfSatisfying(NixlException.class, ex -> {
					assertThat(ex.operation()).isEqualTo("create_backend");
					assertThat(ex.getMessage()).contains("NO_SUCH_PLUGIN");
				});
		}
	}

	@Test
	void anAgentWhoseConfiguredBackendFailsIsNotCreated() {
		assertThatThrownBy(() -> agent("broken-backend", BackendConfig.of("NO_SUCH_PLUGIN"))).isInstanceOfSatisfying(
				NixlException.class,
				ex -> assertThat(ex.getMessage()).contains("create_backend").contains("broken-backend"));
	}

	@Test
	void aConfiguredNativeBackendThatCannotBeCreatedIsNamedByType() {
		assertThatThrownBy(
				() -> agent("named-broken-backend", BackendConfig.of("UCX"), BackendConfig.of("NO_SUCH_PLUGIN")))
			.isInstanceOfSatisfying(BackendCreationException.class, ex -> {
				assertThat(ex.backend()).isEqualTo("NO_SUCH_PLUGIN");
				assertThat(ex.index()).hasValue(1);
				assertThat(ex.operation()).isEqualTo(NixlException.CREATE_BACKEND);
				assertThat(ex.agent()).isEqualTo("named-broken-backend");
			});
	}

	@Test
	void registeringMemoryNoBackendSupportsFailsClearly() {
		try (NixlAgent agent = agent("no-backends", new BackendConfig[0]);
				java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
			assertThatThrownBy(() -> agent.register(arena.allocate(4096))).isInstanceOfSatisfying(NixlException.class,
					ex -> {
						assertThat(ex.operation()).isEqualTo("register_mem");
						assertThat(ex.getMessage()).contains("DRAM");
					});
			assertThat(agent.registrations()).isEmpty();
		}
	}

}
