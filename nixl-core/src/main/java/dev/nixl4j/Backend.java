package dev.nixl4j;

import java.util.Map;
import java.util.Set;

/**
 * A backend instance of an agent. Backends live as long as their agent: NIXL offers no
 * way to destroy one on its own.
 *
 * @param plugin the plugin it was created from
 * @param parameters the parameters in effect after initialisation
 * @param memoryTypes the memory types it can register
 */
public record Backend(String plugin, Map<String, String> parameters, Set<MemoryType> memoryTypes) {

	/**
	 * Copies the collections.
	 * @param plugin the plugin name
	 * @param parameters the parameters
	 * @param memoryTypes the memory types
	 */
	public Backend {
		parameters = Map.copyOf(parameters);
		memoryTypes = Set.copyOf(memoryTypes);
	}

}
