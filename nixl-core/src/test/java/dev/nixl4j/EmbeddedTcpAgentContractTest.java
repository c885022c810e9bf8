package dev.nixl4j;

import java.io.IOException;
import java.util.Map;
import java.util.function.Consumer;
import dev.nixl4j.testsupport.PeerProcess;

/**
 * The contract suite against the embedded engine with every transfer over TCP, also
 * between agents of one JVM (in-process copies off).
 */
class EmbeddedTcpAgentContractTest extends AgentContractTests {

	@Override
	protected NixlAgent newAgent(String name, Consumer<AgentConfig.Builder> customizer) {
		AgentConfig.Builder builder = AgentConfig.builder(name)
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.builder().inProcessCopies(false).build());
		customizer.accept(builder);
		return NixlAgent.create(builder.build());
	}

	@Override
	protected PeerProcess startPeer(String name, long size, long seed) throws IOException {
		return PeerProcess.start(name, size, seed, Map.of(), Engine.EMBEDDED);
	}

}
