package dev.nixl4j.engine;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.ffm.NativeDriver;

/**
 * Creates agents for {@link NixlAgent#create(AgentConfig)}, choosing the engine.
 */
public final class Agents {

	private Agents() {
	}

	/**
	 * Creates an agent. {@link dev.nixl4j.Engine#AUTO} and {@link dev.nixl4j.Engine#NATIVE} both
	 * use native NIXL, the only engine of this build; when it cannot load, the error names every
	 * place tried and how to install it.
	 * @param config the configuration
	 * @return the agent
	 */
	public static NixlAgent create(AgentConfig config) {
		return new AgentCore(config, NativeDriver.open(config));
	}

}
