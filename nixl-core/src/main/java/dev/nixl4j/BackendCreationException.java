package dev.nixl4j;

import java.util.Map;
import java.util.OptionalInt;

import org.jspecify.annotations.Nullable;

/**
 * A backend could not be created: the plugin is not offered by the engine, could not be
 * loaded, or refused its parameters. Names the backend, so that a caller can point at the
 * configuration that asked for it without reading the message. Its operation is
 * {@link NixlException#CREATE_BACKEND}.
 */
public class BackendCreationException extends NixlException {

	private static final long serialVersionUID = 1L;

	private final String backend;

	private final Map<String, String> parameters;

	private final int index;

	/**
	 * Creates an exception.
	 * @param status the status that describes the failure
	 * @param agent the local agent, if known
	 * @param backend the plugin name of the backend, as asked for
	 * @param parameters the parameters it was asked with
	 * @param index the position of the backend in {@link AgentConfig#backends()}, or
	 * {@code -1} when it was not created from the configuration
	 * ({@link NixlAgent#createBackend})
	 * @param detail what went wrong, in words
	 * @param cause the underlying cause
	 */
	public BackendCreationException(NixlStatus status, @Nullable String agent, String backend,
			Map<String, String> parameters, int index, String detail, @Nullable Throwable cause) {
		super(status, CREATE_BACKEND, agent, null, detail, cause);
		if (index < -1) {
			throw new IllegalArgumentException("index must be -1 or a position, not " + index);
		}
		this.backend = backend;
		this.parameters = Map.copyOf(parameters);
		this.index = index;
	}

	/**
	 * Returns the plugin name of the backend that could not be created, as it was asked
	 * for.
	 * @return the plugin name
	 */
	public String backend() {
		return this.backend;
	}

	/**
	 * Returns the parameters the backend was asked with.
	 * @return the parameters, unmodifiable
	 */
	public Map<String, String> parameters() {
		return this.parameters;
	}

	/**
	 * Returns the position of the backend in the agent's {@link AgentConfig#backends()},
	 * when the agent created it from its configuration.
	 * @return the position, empty for a backend created with
	 * {@link NixlAgent#createBackend}
	 */
	public OptionalInt index() {
		return (this.index >= 0) ? OptionalInt.of(this.index) : OptionalInt.empty();
	}

}
