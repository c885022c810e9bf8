package dev.nixl4j;

import org.jspecify.annotations.Nullable;

/**
 * Hears every post of an agent's transfers: metrics, tracing, admission control (a
 * bulkhead, a circuit breaker, a shutdown {@link Drain}). Add one with
 * {@link NixlAgent#addTransferListener}; an agent's listeners are asked in the order they
 * were added (the Spring Boot starter adds its listener beans in {@code @Order} order).
 *
 * <p>
 * For each post, {@link #beforePost} runs on the posting thread before the engine sees
 * the request; an exception it throws refuses the post and reaches the caller of
 * {@link Transfer#post()} unchanged. Every listener whose {@code beforePost} returned
 * normally then hears exactly one of {@link #postRefused} (the post never started: a
 * later listener or the agent refused it) or {@link #afterPost} (the post ended).
 * {@code afterPost} runs before the transfer's future completes, so whoever waits on the
 * transfer sees the listener's effects.
 *
 * <p>
 * {@code postRefused} and {@code afterPost} may run on the progress loop's thread: they
 * must be quick, must not block and must not throw (what they throw is logged and
 * dropped; an {@link Error} from {@code afterPost} is thrown on once every listener and
 * the transfer's future heard the end, and the progress loop counts it in
 * {@link AgentStatistics#internalErrors()}).
 */
public interface TransferListener {

	/**
	 * Called before a transfer is posted.
	 * @param transfer the transfer, not yet posted
	 * @throws RuntimeException to refuse the post
	 */
	default void beforePost(Transfer transfer) {
	}

	/**
	 * Called when a post accepted by this listener did not start.
	 * @param transfer the transfer
	 * @param reason what the caller of {@code post} receives
	 */
	default void postRefused(Transfer transfer, RuntimeException reason) {
	}

	/**
	 * Called when a post ended.
	 * @param transfer the transfer
	 * @param outcome {@link TransferState#COMPLETED}, {@link TransferState#FAILED},
	 * {@link TransferState#STALLED} or {@link TransferState#CANCELLED}
	 * @param durationNanos time from post to end
	 * @param failure why it did not complete, or {@code null} when it completed
	 */
	default void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
			@Nullable NixlException failure) {
	}

}
