package dev.nixl4j.internal.embedded;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.EngineProvider;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.internal.engine.AgentCore;
import dev.nixl4j.internal.engine.DriverProvider;
import dev.nixl4j.internal.engine.EngineDriver;

/**
 * Provides the embedded engine: pure-Java agents, DRAM only. Registered in
 * {@code META-INF/services/dev.nixl4j.EngineProvider} and
 * {@code META-INF/services/dev.nixl4j.internal.engine.DriverProvider} (class path), and
 * in nixl-core's {@code module-info} (module path).
 */
public final class EmbeddedEngineProvider implements EngineProvider, DriverProvider {

	/** Creates the provider; {@link java.util.ServiceLoader} calls it. */
	public EmbeddedEngineProvider() {
	}

	@Override
	public Engine engine() {
		return Engine.EMBEDDED;
	}

	@Override
	public NixlAgent create(AgentConfig config) {
		return new AgentCore(config, openDriver(config));
	}

	@Override
	public EngineDriver openDriver(AgentConfig config) {
		return EmbeddedDriver.open(config);
	}

	@Override
	public void requireLoadable(AgentConfig config) {
		// Pure Java: nothing to load.
	}

}
