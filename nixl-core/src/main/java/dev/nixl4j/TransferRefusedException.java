package dev.nixl4j;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A post that admission control refused before the engine saw it: a
 * {@link TransferListener} (a bulkhead, a circuit breaker) would not let it start.
 * Nothing moved and no notification was sent; the failure is {@link #retryable()}, and
 * {@link #reason()} says what refused it. Its status is {@link NixlStatus#REFUSED}, its
 * operation {@value #OPERATION}, and its cause, when there is one, the refusal of the
 * library that enforces the limit.
 */
public class TransferRefusedException extends NixlException {

	private static final long serialVersionUID = 1L;

	/** The operation a refusal fails: posting a transfer. */
	public static final String OPERATION = "post_xfer_req";

	private final Reason reason;

	private final String limiter;

	/**
	 * Creates a refusal.
	 * @param reason what refused the post
	 * @param limiter the name of the limit that refused it (a bulkhead's or a circuit
	 * breaker's name)
	 * @param agent the local agent, if known
	 * @param remoteAgent the peer of the refused transfer
	 * @param detail what refused it, in words
	 * @param cause the refusal of the library that enforces the limit, if any
	 */
	public TransferRefusedException(Reason reason, String limiter, @Nullable String agent, @Nullable String remoteAgent,
			String detail, @Nullable Throwable cause) {
		super(NixlStatus.REFUSED, OPERATION, agent, remoteAgent, detail, cause, true);
		this.reason = Objects.requireNonNull(reason, "reason");
		this.limiter = Objects.requireNonNull(limiter, "limiter");
	}

	/**
	 * Returns what refused the post.
	 * @return the reason
	 */
	public Reason reason() {
		return this.reason;
	}

	/**
	 * Returns the name of the limit that refused the post, such as a bulkhead's or a
	 * circuit breaker's name.
	 * @return the name
	 */
	public String limiter() {
		return this.limiter;
	}

	/**
	 * What refused a post.
	 */
	public enum Reason {

		/**
		 * As many transfers are in flight as allowed (a bulkhead is full): retry once
		 * some ended.
		 */
		TOO_MANY_IN_FLIGHT,

		/**
		 * Transfers to the peer are suspended after repeated failures (its circuit
		 * breaker is open): retry after the breaker's wait.
		 */
		PEER_SUSPENDED

	}

}
