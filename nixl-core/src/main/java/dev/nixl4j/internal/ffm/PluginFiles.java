package dev.nixl4j.internal.ffm;

import java.nio.file.Files;
import java.nio.file.Path;

import dev.nixl4j.AgentConfig;

/**
 * Where NIXL looks for its plugins: {@code $NIXL_PLUGIN_DIR}, else {@code plugins/}
 * beside the library, and one plugin's shared object there. Used by the readiness report
 * and the native driver's errors.
 */
public final class PluginFiles {

	private PluginFiles() {
	}

	/**
	 * Returns the plugin directory NIXL uses.
	 * @param config the configuration, whose native environment may set
	 * {@code NIXL_PLUGIN_DIR}
	 * @param library the loaded library
	 * @return the directory
	 */
	public static Path directory(AgentConfig config, NativeLibrary library) {
		return library.pluginDirectory(config.nativeEnvironment());
	}

	/**
	 * Returns a plugin's shared object.
	 * @param directory the plugin directory
	 * @param plugin the plugin name
	 * @return the file (which may not exist)
	 */
	public static Path file(Path directory, String plugin) {
		return directory.resolve("libplugin_" + plugin + ".so");
	}

	/**
	 * Explains why NIXL could not load a plugin.
	 * @param directory the plugin directory
	 * @param plugin the plugin name
	 * @return the dynamic loader's message, or that the file is missing
	 */
	public static String loadError(Path directory, String plugin) {
		Path file = file(directory, plugin);
		return Files.exists(file) ? SharedObjects.loadError(file) : "there is no " + file;
	}

}
