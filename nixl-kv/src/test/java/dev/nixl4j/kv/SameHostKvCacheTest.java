package dev.nixl4j.kv;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A KV cache of an embedded agent with the same-host path lives in memory a peer process
 * can map (a memfd, as {@code /proc/self/maps} shows), and a plain agent's does not.
 */
class SameHostKvCacheTest {

	private static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(2)
		.blocks(4)
		.blockSize(16)
		.kvHeads(2)
		.headDim(64)
		.dtypeSize(2)
		.build();

	@Test
	void aKvCacheOfAnAgentWithTheSameHostPathLivesInAMemfd() throws IOException {
		AgentConfig.Builder sameHost = AgentConfig.builder("kv-same-host-" + System.nanoTime())
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.builder().sameHost(true).build());
		AgentConfig.Builder parameter = AgentConfig.builder("kv-same-host-parameter-" + System.nanoTime())
			.engine(Engine.EMBEDDED)
			.backends(new BackendConfig("EMBEDDED", Map.of("same_host", "true")));
		for (AgentConfig.Builder shareable : List.of(sameHost, parameter)) {
			try (NixlAgent agent = NixlAgent.create(shareable.build());
					PagedKvCache cache = PagedKvCache.allocate(agent, LAYOUT)) {
				for (int region = 0; region < LAYOUT.regionCount(); region++) {
					assertThat(mapping(cache.region(region))).as("region %d", region).contains("/memfd:");
				}
			}
		}
		try (NixlAgent agent = NixlAgent
			.create(AgentConfig.builder("kv-plain-" + System.nanoTime()).engine(Engine.EMBEDDED).build());
				PagedKvCache cache = PagedKvCache.allocate(agent, LAYOUT)) {
			assertThat(mapping(cache.region(0))).doesNotContain("/memfd:");
		}
	}

	/** The line of {@code /proc/self/maps} that holds the memory's first byte. */
	private static String mapping(MemorySegment memory) throws IOException {
		long address = memory.address();
		for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
			String[] range = line.substring(0, line.indexOf(' ')).split("-");
			long start = Long.parseUnsignedLong(range[0], 16);
			long end = Long.parseUnsignedLong(range[1], 16);
			if (Long.compareUnsigned(address, start) >= 0 && Long.compareUnsigned(address, end) < 0) {
				return line;
			}
		}
		throw new AssertionError("no mapping holds address 0x" + Long.toHexString(address));
	}

}
