package dev.nixl4j.kv;

import java.util.function.Consumer;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import org.junit.jupiter.api.BeforeAll;

/**
 * KV block transfers on native NIXL (UCX backend, DRAM).
 */
class NativeKvTransferTest extends KvTransferTests {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Override
	protected NixlAgent newAgent(String name, Consumer<AgentConfig.Builder> customizer) {
		AgentConfig.Builder builder = AgentConfig.builder(name).engine(Engine.NATIVE);
		customizer.accept(builder);
		return NixlAgent.create(builder.build());
	}

}
