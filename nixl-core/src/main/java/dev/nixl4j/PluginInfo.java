package dev.nixl4j;

import java.util.Map;
import java.util.Set;

/**
 * What a NIXL plugin offers: its default parameters and the memory types it can register.
 *
 * @param name the plugin name
 * @param parameters default parameters
 * @param memoryTypes memory types it supports
 */
public record PluginInfo(String name, Map<String, String> parameters, Set<MemoryType> memoryTypes) {

	/**
	 * Copies the collections.
	 * @param name the plugin name
	 * @param parameters default parameters
	 * @param memoryTypes memory types
	 */
	public PluginInfo {
		parameters = Map.copyOf(parameters);
		memoryTypes = Set.copyOf(memoryTypes);
	}

}
