package dev.nixl4j.kv;

import java.util.function.Consumer;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;

/**
 * KV block transfers on the embedded engine.
 */
class EmbeddedKvTransferTest extends KvTransferTests {

	@Override
	protected NixlAgent newAgent(String name, Consumer<AgentConfig.Builder> customizer) {
		AgentConfig.Builder builder = AgentConfig.builder(name).engine(Engine.EMBEDDED);
		customizer.accept(builder);
		return NixlAgent.create(builder.build());
	}

}
