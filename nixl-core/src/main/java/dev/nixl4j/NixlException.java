package dev.nixl4j;

import org.jspecify.annotations.Nullable;

/**
 * A failed NIXL operation. Carries the {@link NixlStatus}, the operation that failed, the
 * local agent and, where one is involved, the remote agent; all four appear in the
 * message.
 *
 * <p>
 * Control-path failures (creating agents and backends, registering memory, loading
 * metadata, creating transfers) throw this exception. The data path reports state
 * instead: a failed transfer moves to {@link TransferState#FAILED} and completes its
 * future exceptionally with this exception.
 *
 * <p>
 * Code decides on the typed facts, never on the message: {@link #status()}, the subclass
 * ({@link BackendCreationException} names the backend that could not be created) and
 * {@link #retryable()}, which says whether the failure may pass by itself.
 */
public class NixlException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * The operation of creating a backend. A failure of it is a
	 * {@link BackendCreationException}, which names the backend.
	 */
	public static final String CREATE_BACKEND = "create_backend";

	/**
	 * The operation of asking NIXL about a plugin ({@link NixlAgent#pluginInfo(String)}).
	 */
	public static final String GET_PLUGIN_PARAMS = "get_plugin_params";

	private final NixlStatus status;

	private final String operation;

	private final @Nullable String agent;

	private final @Nullable String remoteAgent;

	private final String detail;

	private final boolean retryable;

	/**
	 * Creates an exception.
	 * @param status the status that describes the failure
	 * @param operation the operation that failed, in NIXL's words (for example
	 * {@code register_mem})
	 * @param agent the local agent, if known
	 * @param remoteAgent the remote agent, if one was involved
	 * @param detail what went wrong, in words
	 */
	public NixlException(NixlStatus status, String operation, @Nullable String agent, @Nullable String remoteAgent,
			String detail) {
		this(status, operation, agent, remoteAgent, detail, null);
	}

	/**
	 * Creates an exception with a cause.
	 * @param status the status that describes the failure
	 * @param operation the operation that failed
	 * @param agent the local agent, if known
	 * @param remoteAgent the remote agent, if one was involved
	 * @param detail what went wrong, in words
	 * @param cause the underlying cause
	 */
	public NixlException(NixlStatus status, String operation, @Nullable String agent, @Nullable String remoteAgent,
			String detail, @Nullable Throwable cause) {
		this(status, operation, agent, remoteAgent, detail, cause, false);
	}

	/**
	 * Creates an exception that says whether the failure may pass by itself.
	 * @param status the status that describes the failure
	 * @param operation the operation that failed
	 * @param agent the local agent, if known
	 * @param remoteAgent the remote agent, if one was involved
	 * @param detail what went wrong, in words
	 * @param cause the underlying cause
	 * @param retryable whether the same call may succeed later without any change of
	 * configuration (see {@link #retryable()})
	 */
	public NixlException(NixlStatus status, String operation, @Nullable String agent, @Nullable String remoteAgent,
			String detail, @Nullable Throwable cause, boolean retryable) {
		super(message(status, operation, agent, remoteAgent, detail), cause);
		this.status = status;
		this.operation = operation;
		this.agent = agent;
		this.remoteAgent = remoteAgent;
		this.detail = detail;
		this.retryable = retryable;
	}

	private static String message(NixlStatus status, String operation, @Nullable String agent,
			@Nullable String remoteAgent, String detail) {
		StringBuilder message = new StringBuilder(operation).append(" failed with ").append(status);
		if (agent != null) {
			message.append(" [agent '").append(agent).append('\'');
			if (remoteAgent != null) {
				message.append(", remote '").append(remoteAgent).append('\'');
			}
			message.append(']');
		}
		else if (remoteAgent != null) {
			message.append(" [remote '").append(remoteAgent).append("']");
		}
		return message.append(": ").append(detail).toString();
	}

	/**
	 * Returns the status that describes the failure.
	 * @return the status
	 */
	public NixlStatus status() {
		return this.status;
	}

	/**
	 * Returns the operation that failed.
	 * @return the operation name
	 */
	public String operation() {
		return this.operation;
	}

	/**
	 * Returns the local agent's name, if known.
	 * @return the agent name or {@code null}
	 */
	public @Nullable String agent() {
		return this.agent;
	}

	/**
	 * Returns the remote agent's name, if one was involved.
	 * @return the remote agent name or {@code null}
	 */
	public @Nullable String remoteAgent() {
		return this.remoteAgent;
	}

	/**
	 * Returns what went wrong, in words: the message without the status, operation and
	 * agents. For people to read; code decides on {@link #status()} and the typed
	 * accessors.
	 * @return the detail
	 */
	public String detail() {
		return this.detail;
	}

	/**
	 * Whether the failure may pass by itself, so that the same call may succeed later
	 * without any change of configuration: a service that is not listening yet, a
	 * timeout, a server error. {@code false} for a failure that needs a change (a TLS
	 * certificate that is not trusted, a token that is refused) and for one not known to
	 * pass.
	 * @return {@code true} when trying again later may succeed
	 */
	public boolean retryable() {
		return this.retryable;
	}

}
