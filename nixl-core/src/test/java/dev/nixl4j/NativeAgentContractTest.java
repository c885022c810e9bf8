package dev.nixl4j;

import java.util.function.Consumer;

import org.junit.jupiter.api.BeforeAll;
import dev.nixl4j.testsupport.NativeNixl;

/**
 * The contract suite against native NIXL (UCX backend, DRAM).
 */
class NativeAgentContractTest extends AgentContractTests {

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
