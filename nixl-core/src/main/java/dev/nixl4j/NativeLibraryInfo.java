package dev.nixl4j;

import java.nio.file.Path;
import java.util.Objects;

/**
 * The NIXL library a native agent runs on: which one, and where it was found.
 *
 * @param version NIXL's version, as recorded beside the library, or {@code "unknown"}
 * @param path the path of {@code libnixl_capi.so}
 * @param source where the locator found it, for example
 * {@code "class path (nixl-native-linux-x86_64 1.5.1), chosen: the only artifact for x86_64 on the class path"}
 * (a native artifact's source says which was chosen and why), {@code "NIXL_LIB_DIR"} or
 * {@code "Python environment /venv/lib/python3.12/site-packages (nixl-cu12 1.5.1)"}
 * @param pluginDirectory the directory NIXL loads its plugins from
 * ({@code NIXL_PLUGIN_DIR}, else {@code plugins/} beside the library)
 */
public record NativeLibraryInfo(String version, Path path, String source, Path pluginDirectory) {

	/**
	 * Checks the components.
	 * @param version the version
	 * @param path the library's path
	 * @param source where it was found
	 * @param pluginDirectory the plugin directory
	 */
	public NativeLibraryInfo {
		Objects.requireNonNull(version, "version");
		Objects.requireNonNull(path, "path");
		Objects.requireNonNull(source, "source");
		Objects.requireNonNull(pluginDirectory, "pluginDirectory");
	}

}
