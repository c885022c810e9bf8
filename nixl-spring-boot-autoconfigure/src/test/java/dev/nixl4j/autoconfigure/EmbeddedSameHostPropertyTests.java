package dev.nixl4j.autoconfigure;

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code nixl.embedded.same-host} reaches the agent's
 * {@link dev.nixl4j.EmbeddedOptions#sameHost()}.
 */
class EmbeddedSameHostPropertyTests {

	private static boolean sameHost(Map<String, String> properties) {
		NixlProperties bound = new Binder(new MapConfigurationPropertySource(properties)).bindOrCreate("nixl",
				NixlProperties.class);
		return AgentConfigs.builder(bound, new MockEnvironment(), null).build().embedded().sameHost();
	}

	@Test
	void theSameHostPathIsOffUnlessTheProperty() {
		assertThat(sameHost(Map.of())).isFalse();
	}

	@Test
	void thePropertyTurnsTheSameHostPathOn() {
		assertThat(sameHost(Map.of("nixl.embedded.same-host", "true"))).isTrue();
	}

}
