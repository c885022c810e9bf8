package dev.nixl4j.internal.embedded;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.EngineProvider;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.internal.engine.AgentCore;

/**
 * Provides the embedded engine: pure-Java agents, DRAM only. Registered in
 * {@code META-INF/services/dev.nixl4j.EngineProvider}.
 */
public final class EmbeddedEngineProvider implements EngineProvider {

	/** Creates the provider; {@link java.util.ServiceLoader} calls it. */
	public EmbeddedEngineProvider() {
	}

	@Override
	public Engine engine() {
		return Engine.EMBEDDED;
	}

	@Override
	public NixlAgent create(AgentConfig config) {
		return new AgentCore(config, EmbeddedDriver.open(config));
	}

}
