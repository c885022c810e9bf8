package dev.nixl4j.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.nixl4j.AgentConfig;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * Where NIXL's native library comes from and the environment it loads with: the options
 * of every command that loads it.
 */
final class NativeOptions {

	private final Map<String, String> environment = new LinkedHashMap<>();

	@Option(names = "--native-dir", paramLabel = "DIR", description = "directory holding libnixl_capi.so, tried first")
	private @Nullable Path directory;

	@Option(names = "--env", paramLabel = "NAME=VALUE", converter = AgentOptions.Pair.Converter.class,
			description = "environment for NIXL and UCX, set before the library loads (repeatable), for example UCX_TLS=tcp")
	private void environment(AgentOptions.Pair variable) {
		this.environment.put(variable.key(), variable.value());
	}

	/**
	 * Applies the options to a configuration.
	 * @param builder the configuration
	 * @return the builder
	 */
	AgentConfig.Builder apply(AgentConfig.Builder builder) {
		this.environment.forEach(builder::nativeEnvironment);
		return builder.nativeLibraryDirectory(this.directory);
	}

	/**
	 * Returns the options as given, to hand them to a child process.
	 * @return the tokens
	 */
	List<String> tokens() {
		List<String> tokens = new ArrayList<>();
		this.environment.forEach((name, value) -> tokens.addAll(List.of("--env", name + "=" + value)));
		if (this.directory != null) {
			tokens.addAll(List.of("--native-dir", this.directory.toString()));
		}
		return tokens;
	}

}
