package dev.nixl4j;

import java.util.Map;

/**
 * A backend an agent creates at start: a NIXL plugin name and its initialisation
 * parameters.
 *
 * @param plugin the plugin name, for example {@code UCX}
 * @param parameters parameters passed to the plugin; empty for the plugin's defaults (on
 * the native engine, UCX's thread pool is added where these leave it out: see
 * {@link NixlAgent#createBackend(String, Map)})
 */
public record BackendConfig(String plugin, Map<String, String> parameters) {

	/**
	 * Validates and copies the configuration.
	 * @param plugin the plugin name
	 * @param parameters the parameters
	 */
	public BackendConfig {
		if (plugin == null || plugin.isBlank()) {
			throw new IllegalArgumentException("backend plugin name must not be blank");
		}
		parameters = Map.copyOf(parameters);
	}

	/**
	 * A backend with the plugin's default parameters.
	 * @param plugin the plugin name
	 * @return the configuration
	 */
	public static BackendConfig of(String plugin) {
		return new BackendConfig(plugin, Map.of());
	}

}
