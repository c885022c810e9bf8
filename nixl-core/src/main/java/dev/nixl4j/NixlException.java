package dev.nixl4j;

import org.jspecify.annotations.Nullable;

/**
 * A failed NIXL operation. Carries the {@link NixlStatus}, the operation that failed, the local
 * agent and, where one is involved, the remote agent; all four appear in the message.
 *
 * <p>Control-path failures (creating agents and backends, registering memory, loading metadata,
 * creating transfers) throw this exception. The data path reports state instead: a failed
 * transfer moves to {@link TransferState#FAILED} and completes its future exceptionally with this
 * exception.
 */
public class NixlException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final NixlStatus status;

	private final String operation;

	private final @Nullable String agent;

	private final @Nullable String remoteAgent;

	/**
	 * Creates an exception.
	 * @param status the status that describes the failure
	 * @param operation the operation that failed, in NIXL's words (for example {@code register_mem})
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
		super(message(status, operation, agent, remoteAgent, detail), cause);
		this.status = status;
		this.operation = operation;
		this.agent = agent;
		this.remoteAgent = remoteAgent;
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

}
