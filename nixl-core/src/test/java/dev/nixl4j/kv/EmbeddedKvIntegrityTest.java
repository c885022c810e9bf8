package dev.nixl4j.kv;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;

/**
 * KV lease integrity on the embedded engine.
 */
class EmbeddedKvIntegrityTest extends KvIntegrityTests {

	@Override
	protected NixlAgent newAgent(String name) {
		return NixlAgent.create(AgentConfig.builder(name).engine(Engine.EMBEDDED).build());
	}

}
