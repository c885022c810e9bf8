package dev.nixl4j.kv;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * A pull that could not start because its producer is gone: its handle or metadata is no
 * longer published, or the producer restarted since it took the lease (the lease went
 * with the old process). Nothing was read and the lease is given back where it can be;
 * the caller asks a producer for the request again. Status
 * {@link NixlStatus#UNAVAILABLE}; {@link #retryable()}.
 */
public class KvProducerUnavailableException extends NixlException {

	private static final long serialVersionUID = 1L;

	private final KvSessionState state;

	/**
	 * Creates the exception.
	 * @param agent the consumer's agent
	 * @param producer the producer's agent
	 * @param state the session's state now
	 * @param detail what happened
	 * @param cause the failure behind it, if any
	 */
	public KvProducerUnavailableException(String agent, String producer, KvSessionState state, String detail,
			@Nullable Throwable cause) {
		super(NixlStatus.ERROR_NOT_FOUND, "kv_pull", agent, producer, detail, cause, true);
		this.state = state;
	}

	/**
	 * Returns the session's state when the pull failed.
	 * @return the state
	 */
	public KvSessionState state() {
		return this.state;
	}

}
