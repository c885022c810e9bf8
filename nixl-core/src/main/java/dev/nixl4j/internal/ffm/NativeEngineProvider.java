package dev.nixl4j.internal.ffm;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.EngineProvider;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.internal.engine.AgentCore;

/**
 * Provides the native engine: agents over NIXL's C API. Registered in
 * {@code META-INF/services/dev.nixl4j.EngineProvider}.
 */
public final class NativeEngineProvider implements EngineProvider {

	/** Creates the provider; {@link java.util.ServiceLoader} calls it. */
	public NativeEngineProvider() {
	}

	@Override
	public Engine engine() {
		return Engine.NATIVE;
	}

	@Override
	public NixlAgent create(AgentConfig config) {
		return new AgentCore(config, NativeDriver.open(config));
	}

}
