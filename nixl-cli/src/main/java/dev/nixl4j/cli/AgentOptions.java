package dev.nixl4j.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.Engine;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/**
 * The options every command that creates agents shares, turned into an
 * {@link AgentConfig}. Backends and their parameters are kept in the order given: a
 * parameter belongs to the backend named before it.
 */
final class AgentOptions {

	@Mixin
	private NativeOptions nativeOptions = new NativeOptions();

	@Option(names = "--engine", paramLabel = "ENGINE", description = "engine of the agents: native (default), "
			+ "embedded (nixl4j's pure-Java engine: in-process copies, TCP between processes) or auto")
	private Engine engine = Engine.NATIVE;

	@Option(names = "--progress-delay-us", paramLabel = "N", converter = Counts.AtLeastZero.class,
			description = "delay of NIXL's progress thread in microseconds (default 1000: it sleeps in poll() until UCX "
					+ "signals; 0 makes it spin)")
	private @Nullable Integer progressDelayMicros;

	@Option(names = "--progress-thread", paramLabel = "BOOLEAN", arity = "1",
			description = "whether NIXL runs its own progress thread (default true); without it, nixl4j's progress "
					+ "loop progresses UCX when it drains notifications")
	private boolean progressThread = AgentConfig.DEFAULT_NATIVE_PROGRESS_THREAD;

	@Option(names = "--same-host", description = "embedded engine: turn on the same-host path "
			+ "(EmbeddedOptions.sameHost), so agents in processes of this host map each other's shareable memory "
			+ "(the benchmark target registers ShareableMemory) instead of moving bytes over TCP")
	private boolean sameHost;

	private final List<String> plugins = new ArrayList<>();

	private final List<Map<String, String>> parameters = new ArrayList<>();

	@Option(names = "--backend", paramLabel = "NAME", description = "backend to create (repeatable; default UCX)")
	private void backend(String plugin) {
		this.plugins.add(plugin);
		this.parameters.add(new LinkedHashMap<>());
	}

	@Option(names = "--backend-param", paramLabel = "KEY=VALUE", converter = Pair.Converter.class,
			description = "parameter of the backend named before it (repeatable; of UCX when none is), "
					+ "for example ucx_error_handling_mode=none")
	private void backendParameter(Pair pair) {
		if (this.plugins.isEmpty()) {
			backend("UCX");
		}
		this.parameters.getLast().put(pair.key(), pair.value());
	}

	/**
	 * Builds an agent configuration from the options.
	 * @param name the agent name
	 * @return the configuration
	 */
	AgentConfig config(String name) {
		AgentConfig.Builder builder = this.nativeOptions.apply(AgentConfig.builder(name)).engine(this.engine);
		if (this.progressDelayMicros != null) {
			builder.nativeProgressDelay(Duration.ofNanos(this.progressDelayMicros * 1000L));
		}
		builder.nativeProgressThread(this.progressThread);
		if (!this.plugins.isEmpty()) {
			BackendConfig[] backends = new BackendConfig[this.plugins.size()];
			for (int i = 0; i < backends.length; i++) {
				backends[i] = new BackendConfig(this.plugins.get(i), this.parameters.get(i));
			}
			builder.backends(backends);
		}
		if (this.sameHost) {
			builder.embedded(EmbeddedOptions.builder().sameHost(true).build());
		}
		return builder.build();
	}

	/**
	 * Whether the embedded engine's same-host path is on: memory that peers read or write
	 * is then to be allocated as {@link dev.nixl4j.ShareableMemory}.
	 * @return whether {@code --same-host} was given
	 */
	boolean sameHost() {
		return this.sameHost;
	}

	/**
	 * Returns the options as command line tokens, to hand them to a child process.
	 * @return the tokens
	 */
	List<String> tokens() {
		List<String> tokens = new ArrayList<>(this.nativeOptions.tokens());
		tokens.addAll(List.of("--engine", this.engine.name()));
		if (this.progressDelayMicros != null) {
			tokens.addAll(List.of("--progress-delay-us", this.progressDelayMicros.toString()));
		}
		tokens.addAll(List.of("--progress-thread", Boolean.toString(this.progressThread)));
		if (this.sameHost) {
			tokens.add("--same-host");
		}
		for (int i = 0; i < this.plugins.size(); i++) {
			tokens.addAll(List.of("--backend", this.plugins.get(i)));
			this.parameters.get(i)
				.forEach((key, value) -> tokens.addAll(List.of("--backend-param", key + "=" + value)));
		}
		return tokens;
	}

	/**
	 * A {@code KEY=VALUE} option value.
	 *
	 * @param key the text before the first {@code =}, not empty
	 * @param value the text after it
	 */
	record Pair(String key, String value) {

		/** Reads {@code KEY=VALUE}. */
		static final class Converter implements ITypeConverter<Pair> {

			@Override
			public Pair convert(String text) {
				int equals = text.indexOf('=');
				if (equals <= 0) {
					throw new TypeConversionException("'" + text + "' is not KEY=VALUE");
				}
				return new Pair(text.substring(0, equals), text.substring(equals + 1));
			}

		}

	}

}
