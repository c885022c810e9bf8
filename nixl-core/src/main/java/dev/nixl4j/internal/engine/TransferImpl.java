package dev.nixl4j.internal.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import dev.nixl4j.TransferTelemetry;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

/**
 * A transfer request. Every use of the native handle (post, poll, release) happens under
 * this object's monitor, so the progress loop never polls a handle that another thread
 * released.
 */
final class TransferImpl implements Transfer {

	private static final int SUCCESS = 0;

	private static final int IN_PROGRESS = 1;

	/**
	 * How long {@link #await(Duration)} polls on the calling thread before it blocks on
	 * the future: as long as the progress loop spins after progress, so that a short
	 * transfer ends without a hand-off between threads.
	 */
	private static final long AWAIT_SPIN_NANOS = 20_000;

	/** The thread named when the fault listener hears of a waiting caller's faults. */
	private static final String CALLER = "waiting caller";

	private final AgentCore agent;

	private final AgentOpenState lifecycle;

	private final ListenerFanOut listeners;

	private final EngineDriver driver;

	private final XferOp op;

	private final String remoteAgent;

	private final long byteSize;

	private final List<RegistrationImpl> registrations;

	private final byte @Nullable [] notification;

	/** The agent's stall limit in nanoseconds. */
	private final long stallNanos;

	private long handle;

	private volatile TransferState state = TransferState.READY;

	private volatile @Nullable CompletableFuture<Transfer> completion;

	private long postedAt;

	private long endedAt;

	/** The listeners that accepted the latest post; guarded by this object's monitor. */
	private List<TransferListener> listening = List.of();

	/**
	 * Whether the latest post carries a notification; guarded by this object's monitor.
	 */
	private boolean notified;

	private long stallDeadline;

	TransferImpl(AgentCore agent, EngineDriver driver, XferOp op, String remoteAgent, long byteSize,
			List<RegistrationImpl> registrations, byte @Nullable [] notification, long handle) {
		this.agent = agent;
		this.lifecycle = agent.lifecycle();
		this.listeners = agent.listeners();
		this.driver = driver;
		this.op = op;
		this.remoteAgent = remoteAgent;
		this.byteSize = byteSize;
		this.registrations = registrations;
		this.notification = (notification != null) ? notification.clone() : null;
		this.stallNanos = agent.config().stallTimeout().toNanos();
		this.handle = handle;
	}

	@Override
	public XferOp op() {
		return this.op;
	}

	@Override
	public String remoteAgent() {
		return this.remoteAgent;
	}

	@Override
	public long byteSize() {
		return this.byteSize;
	}

	@Override
	public TransferState state() {
		return this.state;
	}

	/**
	 * Returns when the latest post was made ({@link System#nanoTime()}).
	 * @return the time
	 */
	long postedAt() {
		return this.postedAt;
	}

	@Override
	public synchronized Duration elapsed() {
		if (this.completion == null) {
			return Duration.ZERO;
		}
		long end = (this.state == TransferState.IN_PROGRESS) ? System.nanoTime() : this.endedAt;
		return Duration.ofNanos(end - this.postedAt);
	}

	@Override
	public CompletableFuture<Transfer> post() {
		return post(this.notification);
	}

	@Override
	public CompletableFuture<Transfer> post(byte @Nullable [] message) {
		List<TransferListener> accepted = this.listeners.admit(this);
		CompletableFuture<Transfer> future = new CompletableFuture<>();
		Finish finish;
		this.lifecycle.readLock().lock();
		try {
			this.lifecycle.ensureActive("post_xfer_req");
			finish = postLocked(future, message, accepted);
		}
		catch (RuntimeException ex) {
			ListenerFanOut.refuse(accepted, this, ex);
			throw ex;
		}
		finally {
			this.lifecycle.readLock().unlock();
		}
		if (finish == null) {
			this.agent.progress(this);
		}
		else {
			finish.run();
		}
		return future;
	}

	private @Nullable Finish postLocked(CompletableFuture<Transfer> future, byte @Nullable [] message,
			List<TransferListener> accepted) {
		synchronized (this) {
			if (this.handle == 0) {
				throw failure(NixlStatus.CLOSED, "post_xfer_req", "the transfer was " + this.state.name().toLowerCase()
						+ " and its native request released; create a new one");
			}
			if (this.state == TransferState.IN_PROGRESS) {
				throw failure(NixlStatus.ERROR_INVALID_STATE, "post_xfer_req",
						"the transfer is still in progress; a repost must wait for it to finish");
			}
			acquireRegistrations();
			this.completion = future;
			this.listening = accepted;
			this.notified = (message != null);
			this.state = TransferState.IN_PROGRESS;
			this.postedAt = System.nanoTime();
			this.stallDeadline = this.postedAt + this.stallNanos;
			int status;
			try {
				status = this.driver.post(this.handle, message);
			}
			catch (RuntimeException | Error ex) {
				// the engine threw instead of answering: the post failed like one it
				// answered with an
				// error, or it would stay in progress for ever with nobody polling it
				NixlException failure = (ex instanceof NixlException nixl) ? nixl
						: new NixlException(NixlStatus.ERROR_EXCEPTION, "post_xfer_req", this.agent.name(),
								this.remoteAgent, this.op + " of " + this.byteSize + " bytes: posting threw " + ex, ex);
				return end(TransferState.FAILED, failure);
			}
			return onStatus(status, "post_xfer_req");
		}
	}

	/**
	 * Polls once from the progress loop.
	 * @param thread the name the fault listener hears for a poll that throws
	 * @return {@code true} when the transfer left the in-progress state
	 */
	boolean poll(String thread) {
		Finish finish;
		Throwable pollFailure = null;
		Throwable releaseFailure = null;
		synchronized (this) {
			if (this.state != TransferState.IN_PROGRESS) {
				return true;
			}
			try {
				finish = pollLocked();
			}
			catch (RuntimeException | Error ex) {
				// ended here, under the monitor, so that a poll on another
				// thread cannot end it differently after this one threw
				pollFailure = ex;
				try {
					this.driver.release(this.handle);
				}
				catch (RuntimeException | Error again) {
					releaseFailure = again;
				}
				this.handle = 0;
				finish = end(TransferState.FAILED, pollFailure(ex));
			}
		}
		if (pollFailure != null) {
			this.agent.faults().survived(thread, pollFailure);
		}
		if (releaseFailure != null) {
			this.agent.faults().survived(thread, releaseFailure);
		}
		if (finish == null) {
			return false;
		}
		finish.run();
		return true;
	}

	/**
	 * Asks the engine once for the status of the post in flight and ends it when it
	 * finished, failed or passed the stall limit. Holds the monitor, and the transfer is
	 * in progress.
	 */
	private @Nullable Finish pollLocked() {
		Finish finish = onStatus(this.driver.status(this.handle), "get_xfer_status");
		if (finish == null && System.nanoTime() - this.stallDeadline > 0) {
			this.driver.release(this.handle);
			this.handle = 0;
			finish = end(TransferState.STALLED,
					failure(NixlStatus.STALLED, "get_xfer_status", "still in progress after the stall limit of "
							+ this.agent.config().stallTimeout() + "; the request was cancelled"));
		}
		return finish;
	}

	/**
	 * Polls the post in flight on the calling thread until it ends, the spin is over, or
	 * the thread is interrupted; polls at least once. The progress loop may poll at the
	 * same time: both go through this object's monitor, and only the poll that sees the
	 * end runs it. A poll that throws is handled as on the progress loop's thread:
	 * reported as a survived fault, and the transfer ended as failed.
	 */
	private void spinPoll(long spinNanos) {
		long spinStart = System.nanoTime();
		while (!poll(CALLER)) {
			if (System.nanoTime() - spinStart >= spinNanos || Thread.currentThread().isInterrupted()) {
				return;
			}
			Thread.onSpinWait();
		}
	}

	/**
	 * Maps a status to the end of this post, or {@code null} while in progress. Holds the
	 * monitor.
	 */
	private @Nullable Finish onStatus(int status, String operation) {
		if (status == IN_PROGRESS) {
			return null;
		}
		if (status == SUCCESS) {
			return end(TransferState.COMPLETED, null);
		}
		NixlStatus nixlStatus = NixlStatus.ofCode(status);
		String detail = this.driver.failureDetail(this.handle);
		return end(TransferState.FAILED, failure(nixlStatus, operation, "the backend reported " + nixlStatus + " (code "
				+ status + ")" + ((detail != null) ? ": " + detail : "")));
	}

	private Finish end(TransferState newState, @Nullable NixlException failure) {
		this.state = newState;
		for (int i = 0; i < this.registrations.size(); i++) {
			this.registrations.get(i).releaseOne();
		}
		CompletableFuture<Transfer> future = this.completion;
		List<TransferListener> listeners = this.listening;
		this.listening = List.of();
		this.endedAt = System.nanoTime();
		long duration = this.endedAt - this.postedAt;
		this.agent.transferEnded(this, newState, this.notified, failure);
		return () -> {
			// an Error from a listener is thrown once everyone has heard, to the progress
			// loop (which
			// counts it) or the caller
			Error thrown = ListenerFanOut.afterPost(listeners, this, newState, duration, failure);
			if (future != null) {
				if (failure == null) {
					future.complete(this);
				}
				else {
					future.completeExceptionally(failure);
				}
			}
			if (thrown != null) {
				throw thrown;
			}
		};
	}

	private void acquireRegistrations() {
		for (int i = 0; i < this.registrations.size(); i++) {
			if (!this.registrations.get(i).acquire()) {
				for (int j = 0; j < i; j++) {
					this.registrations.get(j).releaseOne();
				}
				throw failure(NixlStatus.CLOSED, "post_xfer_req",
						"memory this transfer uses was deregistered: " + this.registrations.get(i));
			}
		}
	}

	@Override
	public CompletableFuture<Transfer> completion() {
		CompletableFuture<Transfer> future = this.completion;
		if (future == null) {
			throw failure(NixlStatus.ERROR_INVALID_STATE, "get_xfer_status", "the transfer was never posted");
		}
		return future;
	}

	@Override
	public Transfer await(Duration timeout) {
		CompletableFuture<Transfer> future = completion();
		long timeoutNanos = timeout.toNanos();
		// a post that ended inside post() (most short ones) needs no clock
		long left = 0;
		if (!future.isDone()) {
			long start = System.nanoTime();
			spinPoll(Math.min(AWAIT_SPIN_NANOS, timeoutNanos));
			left = timeoutNanos - (System.nanoTime() - start);
		}
		try {
			return future.get(left, TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw failure(NixlStatus.TIMEOUT, "get_xfer_status",
					"not finished within " + timeout + " (state " + this.state + ")");
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof NixlException nixl) {
				throw nixl;
			}
			throw failure(NixlStatus.UNKNOWN, "get_xfer_status", String.valueOf(ex.getCause()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw failure(NixlStatus.CANCELLED, "get_xfer_status", "interrupted while waiting");
		}
	}

	@Override
	public synchronized TransferTelemetry telemetry() {
		if (this.handle == 0) {
			throw failure(NixlStatus.CLOSED, "get_xfer_telemetry", "the transfer's native request was released");
		}
		return this.driver.telemetry(this.handle);
	}

	/**
	 * Ends a post in flight as {@link TransferState#FAILED} with the given failure,
	 * releasing (and so cancelling) its native request: the agent failed. When the
	 * release throws, the post still ends, and what the release threw is thrown
	 * afterwards.
	 */
	void abort(NixlException failure) {
		releaseAndEnd(TransferState.FAILED, () -> failure);
	}

	/**
	 * Releases the native request of a post in flight and ends the post in the given
	 * state; does nothing when no post is in flight. The request is given up either way:
	 * if releasing it throws, the post still ends (or it would stay in progress, and its
	 * waiter wait, for ever), and what the release threw is thrown once the post ended,
	 * for the caller to count.
	 */
	private void releaseAndEnd(TransferState outcome, Supplier<NixlException> failure) {
		Finish finish = null;
		Throwable releaseFailure = null;
		synchronized (this) {
			if (this.state == TransferState.IN_PROGRESS) {
				try {
					this.driver.release(this.handle);
				}
				catch (RuntimeException | Error ex) {
					releaseFailure = ex;
				}
				this.handle = 0;
				finish = end(outcome, failure.get());
			}
		}
		if (finish != null) {
			finish.run();
		}
		if (releaseFailure instanceof RuntimeException ex) {
			throw ex;
		}
		if (releaseFailure instanceof Error ex) {
			throw ex;
		}
	}

	/**
	 * Ends a post in flight as {@link TransferState#FAILED} because polling it threw, so
	 * that it is not polled again: its native request is released (and so cancelled).
	 * Does nothing when the transfer had already ended (a listener threw after its end).
	 */
	void pollThrew(Throwable cause) {
		abort(pollFailure(cause));
	}

	private NixlException pollFailure(Throwable cause) {
		return new NixlException(
				NixlStatus.ERROR_EXCEPTION, "get_xfer_status", this.agent.name(), this.remoteAgent, this.op + " of "
						+ this.byteSize + " bytes: polling its status threw " + cause + "; the request was cancelled",
				cause);
	}

	@Override
	public void cancel() {
		releaseAndEnd(TransferState.CANCELLED,
				() -> failure(NixlStatus.CANCELLED, "release_xfer_req", "cancelled while in progress"));
	}

	@Override
	public void close() {
		// closed even when the engine cannot release the request: what it threw comes
		// last
		Throwable releaseFailure = null;
		try {
			cancel();
		}
		catch (RuntimeException | Error ex) {
			releaseFailure = ex;
		}
		synchronized (this) {
			if (this.handle != 0) {
				try {
					this.driver.release(this.handle);
				}
				catch (RuntimeException | Error ex) {
					releaseFailure = ex;
				}
				this.handle = 0;
			}
			if (this.state != TransferState.CANCELLED && this.state != TransferState.STALLED) {
				this.state = TransferState.CLOSED;
			}
		}
		this.agent.transferClosed(this);
		if (releaseFailure instanceof RuntimeException ex) {
			throw ex;
		}
		if (releaseFailure instanceof Error ex) {
			throw ex;
		}
	}

	private NixlException failure(NixlStatus status, String operation, String detail) {
		return new NixlException(status, operation, this.agent.name(), this.remoteAgent,
				this.op + " of " + this.byteSize + " bytes: " + detail);
	}

	@Override
	public String toString() {
		return "Transfer[" + this.op + " " + this.byteSize + " bytes with '" + this.remoteAgent + "', " + this.state
				+ "]";
	}

	@FunctionalInterface
	private interface Finish {

		void run();

	}

}
