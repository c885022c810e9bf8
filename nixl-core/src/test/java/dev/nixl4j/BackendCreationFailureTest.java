package dev.nixl4j;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A backend the engine cannot create is reported by type, with its plugin name,
 * parameters and position in the configuration, so that callers need not read the
 * message.
 */
class BackendCreationFailureTest {

	@Test
	void aConfiguredBackendThatCannotBeCreatedIsNamedWithItsPosition() {
		AgentConfig config = AgentConfig.builder("embedded-broken-backend")
			.engine(Engine.EMBEDDED)
			.backends(BackendConfig.of("UCX"), new BackendConfig("NO_SUCH_PLUGIN", Map.of("devices", "none")))
			.build();
		assertThatThrownBy(() -> NixlAgent.create(config)).isInstanceOfSatisfying(BackendCreationException.class,
				ex -> {
					assertThat(ex.backend()).isEqualTo("NO_SUCH_PLUGIN");
					assertThat(ex.parameters()).isEqualTo(Map.of("devices", "none"));
					assertThat(ex.index()).hasValue(1);
					assertThat(ex.operation()).isEqualTo(NixlException.CREATE_BACKEND);
					assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_BACKEND);
					assertThat(ex.agent()).isEqualTo("embedded-broken-backend");
					assertThat(ex.retryable()).isFalse();
				});
	}

	@Test
	void aBackendAskedForLaterHasNoPosition() {
		try (NixlAgent agent = NixlAgent
			.create(AgentConfig.builder("embedded-later-backend").engine(Engine.EMBEDDED).build())) {
			assertThatThrownBy(() -> agent.createBackend("NO_SUCH_PLUGIN", Map.of()))
				.isInstanceOfSatisfying(BackendCreationException.class, ex -> {
					assertThat(ex.backend()).isEqualTo("NO_SUCH_PLUGIN");
					assertThat(ex.index()).isEmpty();
				});
			assertThat(agent.isOpen()).isTrue();
		}
	}

	@Test
	void theFactsDoNotDependOnTheWords() {
		BackendCreationException ex = new BackendCreationException(NixlStatus.ERROR_BACKEND, null, "GDS",
				Map.of("batch", "4"), 2, "", null);
		assertThat(ex.getMessage()).doesNotContain("GDS");
		assertThat(ex.backend()).isEqualTo("GDS");
		assertThat(ex.index()).hasValue(2);
		assertThat(ex.detail()).isEmpty();
		assertThatThrownBy(
				() -> new BackendCreationException(NixlStatus.ERROR_BACKEND, null, "GDS", Map.of(), -2, "", null))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("-2");
	}

}
