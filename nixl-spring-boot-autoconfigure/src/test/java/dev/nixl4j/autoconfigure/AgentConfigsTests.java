package dev.nixl4j.autoconfigure;

import java.util.Map;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.BackendCreationException;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The failing backend is found by the facts of the failure, not by its words: a failure
 * whose message names no backend, or names another one, still points at the right
 * property.
 */
class AgentConfigsTests {

	private static final AgentConfig TWO_UCX = AgentConfig.builder("two-ucx")
		.backends(BackendConfig.of("UCX"), new BackendConfig("UCX", Map.of("num_workers", "2")))
		.build();

	@Test
	void aFailureWithoutWordsNamesThePropertyAtItsPosition() {
		BackendCreationException failure = new BackendCreationException(NixlStatus.ERROR_BACKEND, "two-ucx", "UCX",
				Map.of("num_workers", "2"), 1, "", null);
		assertThat(AgentConfigs.reported(failure, TWO_UCX))
			.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class, ex -> {
				assertThat(ex.getName()).isEqualTo("nixl.agent.backends[1].plugin");
				assertThat(ex.getValue()).isEqualTo("UCX");
			});
	}

	@Test
	void aFailureWhoseWordsNameAnotherBackendStillNamesItsOwn() {
		AgentConfig config = AgentConfig.builder("words")
			.backends(BackendConfig.of("POSIX"), BackendConfig.of("GDS"))
			.build();
		BackendCreationException failure = new BackendCreationException(NixlStatus.ERROR_BACKEND, "words", "GDS",
				Map.of(), 1, "reworded: the 'POSIX' plugin was fine", null);
		assertThat(AgentConfigs.reported(failure, config)).isInstanceOfSatisfying(
				InvalidConfigurationPropertyValueException.class,
				ex -> assertThat(ex.getName()).isEqualTo("nixl.agent.backends[1].plugin"));
	}

	@Test
	void aBackendOutsideTheConfigurationIsReportedAsItIs() {
		BackendCreationException later = new BackendCreationException(NixlStatus.ERROR_BACKEND, "two-ucx", "UCX",
				Map.of(), -1, "", null);
		assertThat(AgentConfigs.reported(later, TWO_UCX)).isSameAs(later);
		BackendCreationException other = new BackendCreationException(NixlStatus.ERROR_BACKEND, "two-ucx", "GDS",
				Map.of(), 0, "", null);
		assertThat(AgentConfigs.reported(other, TWO_UCX)).isSameAs(other);
	}

	@Test
	void anEngineThatCannotCreateAConfiguredBackendFailsNamingItsProperty() {
		AgentConfig config = AgentConfig.builder("embedded-two")
			.engine(Engine.EMBEDDED)
			.backends(BackendConfig.of("UCX"), BackendConfig.of("NO_SUCH_PLUGIN"))
			.build();
		assertThat(catchThrowable(() -> AgentConfigs.create(config).close()))
			.isInstanceOfSatisfying(InvalidConfigurationPropertyValueException.class, ex -> {
				assertThat(ex.getName()).isEqualTo("nixl.agent.backends[1].plugin");
				assertThat(ex.getValue()).isEqualTo("NO_SUCH_PLUGIN");
			});
	}

}
