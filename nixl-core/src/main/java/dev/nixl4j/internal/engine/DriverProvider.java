package dev.nixl4j.internal.engine;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlException;

/**
 * Service-provider interface of an engine's {@link EngineDriver}, found with
 * {@link java.util.ServiceLoader} by {@link EngineDrivers}: how code outside the engines'
 * packages (nixl4j's test support, which wraps a real driver to inject faults) opens a
 * driver without depending on {@code internal.ffm} or {@code internal.embedded}.
 * nixl-core's engine providers implement it.
 */
public interface DriverProvider {

	/**
	 * Returns the engine whose drivers this provider opens.
	 * @return {@link Engine#NATIVE} or {@link Engine#EMBEDDED}
	 */
	Engine engine();

	/**
	 * Opens a driver of this engine, as creating an agent does.
	 * @param config the agent's configuration
	 * @return the driver, owned by the caller
	 * @throws NixlException when the engine cannot serve the configuration
	 */
	EngineDriver openDriver(AgentConfig config);

	/**
	 * Loads what this engine's drivers need (the native engine: NIXL's library from the
	 * configured places), without opening a driver.
	 * @param config the configuration whose library places and environment are used
	 * @throws NixlException when it cannot be loaded
	 */
	void requireLoadable(AgentConfig config);

}
