package dev.nixl4j.cli;

import dev.nixl4j.metadata.MetadataValues;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The metadata {@code registry-bench} publishes passes the registries' check as its
 * agent's, has the size asked for, and differs from agent to agent, so that a fetch
 * answered with another agent's value is caught.
 */
class RegistryBenchMetadataTest {

	@Test
	void aBlobHasTheSizeAskedForAndPassesTheCheckAsItsAgentsMetadata() {
		byte[] blob = RegistryBenchMetadata.of("registry-bench-agent-7", 4096);

		assertThat(blob).hasSize(4096);
		assertThat(MetadataValues.check("fetch_remote_md", "registry-bench-agent-7", blob, 1 << 20).toByteArray())
			.isEqualTo(blob);
	}

	@Test
	void agentsOfTheSameSizeHaveDifferentBlobs() {
		assertThat(RegistryBenchMetadata.of("registry-bench-agent-1", 512))
			.isNotEqualTo(RegistryBenchMetadata.of("registry-bench-agent-2", 512))
			.isEqualTo(RegistryBenchMetadata.of("registry-bench-agent-1", 512));
	}

	@Test
	void aSizeWithoutRoomForTheFramingAndNameIsRefused() {
		String agent = "registry-bench-agent-1";
		int overhead = RegistryBenchMetadata.overhead(agent);

		assertThat(RegistryBenchMetadata.of(agent, overhead + 1)).hasSize(overhead + 1);
		assertThatIllegalArgumentException().isThrownBy(() -> RegistryBenchMetadata.of(agent, overhead))
			.withMessageContaining("'" + agent + "'");
	}

}
