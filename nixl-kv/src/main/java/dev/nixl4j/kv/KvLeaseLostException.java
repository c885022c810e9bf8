package dev.nixl4j.kv;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * A pull whose data must not be used: the producer did not confirm that it held the
 * request's blocks while they were read, either because it answered
 * {@link LeaseConfirmation#EXPIRED}, {@link LeaseConfirmation#UNKNOWN} or
 * {@link LeaseConfirmation#STALE}, or because no answer came before the deadline, or (a
 * {@link KvIntegrityException}) because the data that landed does not match the
 * producer's checksums. The caller recomputes the request (or pulls it again under a new
 * lease).
 *
 * <p>
 * The status is {@link NixlStatus#ERROR_INVALID_STATE} for a refusal and
 * {@link NixlStatus#TIMEOUT} when no answer came.
 */
public class KvLeaseLostException extends NixlException {

	private static final long serialVersionUID = 1L;

	/** The request whose pull failed. */
	private final String requestId;

	/** The producer's answer, {@code null} when none came. */
	private final @Nullable LeaseConfirmation confirmation;

	/**
	 * Creates the exception.
	 * @param agent the consumer's agent
	 * @param producer the producer's agent
	 * @param requestId the request
	 * @param confirmation the producer's answer, {@code null} when none came
	 * @param detail what happened
	 * @param cause the failure behind it, if any
	 */
	public KvLeaseLostException(String agent, String producer, String requestId,
			@Nullable LeaseConfirmation confirmation, String detail, @Nullable Throwable cause) {
		super((confirmation != null) ? NixlStatus.ERROR_INVALID_STATE : NixlStatus.TIMEOUT, "kv_pull", agent, producer,
				detail, cause);
		this.requestId = requestId;
		this.confirmation = confirmation;
	}

	/**
	 * Returns the request.
	 * @return the request id
	 */
	public String requestId() {
		return this.requestId;
	}

	/**
	 * Returns the producer's answer.
	 * @return {@link LeaseConfirmation#EXPIRED}, {@link LeaseConfirmation#RELEASED},
	 * {@link LeaseConfirmation#UNKNOWN} or {@link LeaseConfirmation#STALE} ({@code HELD}
	 * for a {@link KvIntegrityException}), or {@code null} when no answer came in time
	 */
	public @Nullable LeaseConfirmation confirmation() {
		return this.confirmation;
	}

}
