package dev.nixl4j.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.Engine;

/**
 * The options every command that creates agents shares, turned into an {@link AgentConfig}.
 */
final class AgentOptions {

	static final String BACKEND = "--backend";

	static final String BACKEND_PARAM = "--backend-param";

	static final String ENV = "--env";

	static final String PROGRESS_DELAY = "--progress-delay-us";

	static final String NATIVE_DIR = "--native-dir";

	static final String ENGINE = "--engine";

	/** The option names. */
	static final Set<String> NAMES = Set.of(ENGINE, BACKEND, BACKEND_PARAM, ENV, PROGRESS_DELAY, NATIVE_DIR);

	/** Help text of the options. */
	static final String HELP = """
			Agent options:
			  --engine native|embedded|auto
			                            engine of the agents (default native; embedded is nixl4j's
			                            pure-Java engine: in-process copies, TCP between processes)
			  --backend NAME            backend to create (repeatable; default UCX)
			  --backend-param KEY=VALUE parameter of the backend named before it (repeatable), for
			                            example ucx_error_handling_mode=none
			  --env NAME=VALUE          environment for NIXL and UCX, set before the library loads
			                            (repeatable), for example UCX_TLS=tcp
			  --progress-delay-us N     delay of NIXL's progress thread (default 1000: it sleeps in
			                            poll() until UCX signals; 0 makes it spin)
			  --native-dir DIR          directory holding libnixl_capi.so, tried first
			""";

	private AgentOptions() {
	}

	/**
	 * Builds an agent configuration from the options.
	 * @param arguments the parsed command line
	 * @param name the agent name
	 * @return the configuration
	 */
	static AgentConfig config(Arguments arguments, String name) {
		AgentConfig.Builder builder = AgentConfig.builder(name).engine(Engine.NATIVE);
		List<String> plugins = new ArrayList<>();
		List<Map<String, String>> parameters = new ArrayList<>();
		for (Arguments.Option option : arguments.options()) {
			switch (option.name()) {
				case BACKEND -> {
					plugins.add(option.text());
					parameters.add(new LinkedHashMap<>());
				}
				case BACKEND_PARAM -> {
					if (plugins.isEmpty()) {
						plugins.add("UCX");
						parameters.add(new LinkedHashMap<>());
					}
					String[] pair = pair(option);
					parameters.getLast().put(pair[0], pair[1]);
				}
				case ENV -> {
					String[] pair = pair(option);
					builder.nativeEnvironment(pair[0], pair[1]);
				}
				case PROGRESS_DELAY -> builder
					.nativeProgressDelay(Duration.ofNanos(arguments.count(PROGRESS_DELAY, 0) * 1000L));
				case NATIVE_DIR -> builder.nativeLibraryDirectory(Path.of(option.text()));
				case ENGINE -> builder.engine(engine(option));
				default -> {
				}
			}
		}
		if (!plugins.isEmpty()) {
			BackendConfig[] backends = new BackendConfig[plugins.size()];
			for (int i = 0; i < backends.length; i++) {
				backends[i] = new BackendConfig(plugins.get(i), parameters.get(i));
			}
			builder.backends(backends);
		}
		return builder.build();
	}

	/**
	 * Returns the agent options as tokens, to hand them to a child process.
	 * @param arguments the parsed command line
	 * @return the tokens, in order
	 */
	static List<String> tokens(Arguments arguments) {
		List<String> tokens = new ArrayList<>();
		for (Arguments.Option option : arguments.options()) {
			if (NAMES.contains(option.name())) {
				tokens.add(option.name());
				tokens.add(option.text());
			}
		}
		return tokens;
	}

	private static Engine engine(Arguments.Option option) {
		try {
			return Engine.valueOf(option.text().toUpperCase(java.util.Locale.ROOT));
		}
		catch (IllegalArgumentException ex) {
			throw new UsageException(option.name() + " must be native, embedded or auto, got '" + option.text() + "'");
		}
	}

	private static String[] pair(Arguments.Option option) {
		String text = option.text();
		int equals = text.indexOf('=');
		if (equals <= 0) {
			throw new UsageException(option.name() + " needs NAME=VALUE, got '" + text + "'");
		}
		return new String[] { text.substring(0, equals), text.substring(equals + 1) };
	}

}
