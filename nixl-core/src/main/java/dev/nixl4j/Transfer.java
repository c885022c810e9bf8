package dev.nixl4j;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

/**
 * A transfer request: READ or WRITE between local descriptors and a remote agent's
 * descriptors, with an optional notification that the remote agent receives once the data
 * has landed.
 *
 * <p>
 * A transfer is posted with {@link #post()}; the agent's progress loop polls it and
 * completes the returned future (a caller in {@link #await(Duration)} polls it too, for a
 * few microseconds, and may be the one that completes it). A completed transfer may be
 * posted again (the notification may change). Closing releases the native request;
 * closing one in progress cancels it.
 */
public interface Transfer extends AutoCloseable {

	/**
	 * Returns the direction.
	 * @return READ or WRITE
	 */
	XferOp op();

	/**
	 * Returns the remote agent.
	 * @return the remote agent's name
	 */
	String remoteAgent();

	/**
	 * Returns the bytes moved by one post.
	 * @return the byte count
	 */
	long byteSize();

	/**
	 * Returns the current state.
	 * @return the state
	 */
	TransferState state();

	/**
	 * Returns how long the latest post has taken: from the post until now while it is in
	 * progress, from the post until its end once it ended. Measured with
	 * {@link System#nanoTime()}, so it does not jump with the wall clock.
	 * @return the time, or {@link Duration#ZERO} if the transfer was never posted
	 */
	Duration elapsed();

	/**
	 * Posts the transfer with the notification it was created with.
	 * @return a future completed when the data has landed, or completed exceptionally
	 * with a {@link NixlException} when it fails, stalls or is cancelled
	 * @throws NixlException when it cannot be posted (already in progress, closed, memory
	 * gone)
	 */
	CompletableFuture<Transfer> post();

	/**
	 * Posts the transfer with a different notification message.
	 * @param notification the message the remote agent receives, or {@code null} for none
	 * @return a future as for {@link #post()}
	 */
	CompletableFuture<Transfer> post(byte @Nullable [] notification);

	/**
	 * Returns the future of the latest post.
	 * @return the completion
	 * @throws NixlException if it was never posted
	 */
	CompletableFuture<Transfer> completion();

	/**
	 * Waits for the latest post to finish.
	 *
	 * <p>
	 * A post still in progress is first polled on the calling thread for up to 20 µs (at
	 * least once, never past the timeout, and not after the thread is interrupted), so
	 * that a short transfer ends at the latency of the backend, without waking another
	 * thread. Meanwhile the calling thread keeps a core busy; on a machine with few cores
	 * that core is taken from other threads for at most those 20 µs per call. After the
	 * spin the thread blocks on {@link #completion()}, which the agent's progress loop
	 * completes. The progress loop keeps polling the transfer while the caller does;
	 * whichever sees the end runs it, once: the listeners hear it, and the future is
	 * completed, exactly once, on that thread. A transfer that passes the stall limit
	 * ends {@link TransferState#STALLED} as it does without a waiting caller, and one
	 * whose status poll throws ends {@link TransferState#FAILED}. An {@link Error} a
	 * listener throws while the caller ends the post reaches the caller, after every
	 * listener heard the end and the future completed, as it does from {@link #post()}.
	 * @param timeout how long to wait
	 * @return this transfer
	 * @throws NixlException {@link NixlStatus#TIMEOUT} when the deadline passes (the
	 * transfer keeps running), {@link NixlStatus#CANCELLED} when the thread is
	 * interrupted before the transfer ended (its interrupt status is kept; the transfer
	 * keeps running), or the failure of the transfer
	 */
	Transfer await(Duration timeout);

	/**
	 * Returns NIXL's telemetry of the latest post.
	 * @return the telemetry
	 * @throws NixlException {@link NixlStatus#ERROR_NO_TELEMETRY} when telemetry is off
	 */
	TransferTelemetry telemetry();

	/**
	 * Cancels the transfer if it is in progress. Its future completes with
	 * {@link NixlStatus#CANCELLED}.
	 */
	void cancel();

	/**
	 * Releases the native request, cancelling it first if it is in progress. Closing
	 * twice is harmless.
	 */
	@Override
	void close();

}
