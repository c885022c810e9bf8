package dev.nixl4j;

import java.io.IOException;
import java.util.Map;
import java.util.function.Consumer;

import dev.nixl4j.testsupport.PeerMain;
import dev.nixl4j.testsupport.PeerProcess;

/**
 * The contract suite against the embedded engine with the same-host path on
 * ({@link EmbeddedOptions#sameHost()}) and in-process copies off. Peer processes register
 * {@link ShareableMemory}, so transfers to them map it; agents of this JVM register
 * ordinary memory, so their transfers are refused the path and go over TCP.
 */
class EmbeddedSameHostAgentContractTest extends AgentContractTests {

	@Override
	protected NixlAgent newAgent(String name, Consumer<AgentConfig.Builder> customizer) {
		AgentConfig.Builder builder = AgentConfig.builder(name)
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.builder().inProcessCopies(false).sameHost(true).build());
		customizer.accept(builder);
		return NixlAgent.create(builder.build());
	}

	@Override
	protected PeerProcess startPeer(String name, long size, long seed) throws IOException {
		return PeerProcess.start(name, size, seed, Map.of(PeerMain.SAME_HOST, "true"), Engine.EMBEDDED);
	}

}
