package dev.nixl4j.connect;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * One side of a paired transfer created by a {@link Connector}: a passive
 * {@link ReadableOperation} or {@link WritableOperation}, or an active
 * {@link ReadOperation} or {@link WriteOperation}.
 *
 * <p>
 * An operation holds registered memory (and, when active, a reference to the peer's
 * loaded metadata) until it ends: it completes, fails, expires or is closed. It then
 * releases all of it, before its {@link #completion()} completes. Closing an unfinished
 * operation cancels it.
 */
public abstract sealed class Operation implements AutoCloseable permits PassiveOperation, ActiveOperation {

	private final Connector connector;

	private final String name;

	private final List<Descriptor> localDescriptors;

	private final CompletableFuture<Void> completion = new CompletableFuture<>();

	private volatile @Nullable String peer;

	private OperationStatus status = OperationStatus.UNINITIALIZED;

	private @Nullable NixlException failure;

	Operation(Connector connector, String name, List<Descriptor> localDescriptors) {
		this.connector = connector;
		this.name = name;
		this.localDescriptors = List.copyOf(localDescriptors);
	}

	/**
	 * Returns the current status.
	 * @return the status
	 */
	public synchronized OperationStatus status() {
		return this.status;
	}

	/**
	 * Returns the local memory this operation moves or exposes.
	 * @return the descriptors, in order
	 */
	public List<Descriptor> localDescriptors() {
		return this.localDescriptors;
	}

	/**
	 * Returns the notification key that pairs this operation with its peer.
	 * @return the key
	 */
	public abstract String notificationKey();

	/**
	 * Returns the connector that created this operation.
	 * @return the connector
	 */
	public Connector connector() {
		return this.connector;
	}

	/**
	 * Returns a future completed when the operation is {@link OperationStatus#COMPLETE},
	 * or completed exceptionally with a {@link NixlException} when it is
	 * {@link OperationStatus#ERRORED} or {@link OperationStatus#CANCELLED}. Its memory is
	 * released by then. Cancelling the returned future does not cancel the operation:
	 * {@link #close()} does.
	 * @return a new dependent future
	 */
	public CompletableFuture<Void> completion() {
		return this.completion.copy();
	}

	/**
	 * Returns why the operation errored or was cancelled.
	 * @return the failure, or empty while it runs or when it completed
	 */
	public synchronized Optional<NixlException> failure() {
		return Optional.ofNullable(this.failure);
	}

	/**
	 * Waits for the operation to end.
	 * @param timeout how long to wait
	 * @throws NixlException {@link NixlStatus#TIMEOUT} when the deadline passes (the
	 * operation goes on), or the failure of an {@link OperationStatus#ERRORED} or
	 * {@link OperationStatus#CANCELLED} operation
	 */
	public void await(Duration timeout) {
		try {
			this.completion.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			throw new NixlException(NixlStatus.TIMEOUT, this.name, this.connector.name(), remoteAgentName(),
					"not finished within " + timeout + " (status " + status() + ")");
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof NixlException nixl) {
				throw nixl;
			}
			throw new NixlException(NixlStatus.UNKNOWN, this.name, this.connector.name(), remoteAgentName(),
					String.valueOf(ex.getCause()), ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new NixlException(NixlStatus.CANCELLED, this.name, this.connector.name(), remoteAgentName(),
					"interrupted while waiting", ex);
		}
	}

	/**
	 * Cancels the operation if it has not ended, and releases what it holds. Closing
	 * twice is harmless.
	 */
	@Override
	public void close() {
		finish(OperationStatus.CANCELLED, failure(NixlStatus.CANCELLED, "closed before it finished"));
	}

	/**
	 * Registers, loads or posts what the operation needs; called once, by its connector.
	 */
	abstract void start();

	/**
	 * Returns the peer's agent name: for a read or write the agent whose metadata it
	 * loaded, for a readable or writable the agent whose notification completed it.
	 * @return the name, or empty until it is known
	 */
	public Optional<String> peer() {
		return Optional.ofNullable(this.peer);
	}

	/** The peer's agent name, once known. */
	@Nullable String remoteAgentName() {
		return this.peer;
	}

	void peer(String peer) {
		this.peer = peer;
	}

	/** Releases everything the operation holds; called once, by whoever ends it. */
	abstract void release();

	String operationName() {
		return this.name;
	}

	NixlException failure(NixlStatus status, String detail) {
		return failure(status, detail, null);
	}

	NixlException failure(NixlStatus status, String detail, @Nullable Throwable cause) {
		return new NixlException(status, this.name, this.connector.name(), remoteAgentName(), detail, cause);
	}

	/**
	 * Refuses to start an operation that was closed before it started (a connector
	 * closing).
	 */
	synchronized void requireNotEnded() {
		if (this.status.isTerminal()) {
			throw failure(NixlStatus.CLOSED, "the operation was " + this.status.name().toLowerCase()
					+ " before it started (its connector was closed)");
		}
	}

	/**
	 * Moves to a status that is not terminal, unless the operation ended meanwhile.
	 * @return {@code false} when it had ended
	 */
	synchronized boolean advance(OperationStatus next) {
		if (this.status.isTerminal()) {
			return false;
		}
		this.status = next;
		return true;
	}

	/**
	 * Ends the operation: the first caller sets the terminal status, releases what the
	 * operation holds, and then completes the future; later callers do nothing.
	 * @return {@code true} for the caller that ended it
	 */
	boolean finish(OperationStatus terminal, @Nullable NixlException cause) {
		NixlException outcome = cause;
		synchronized (this) {
			if (this.status.isTerminal()) {
				return false;
			}
			this.status = terminal;
			try {
				release();
			}
			catch (RuntimeException ex) {
				NixlException problem = failure(NixlStatus.ERROR_INVALID_STATE,
						"releasing the operation's memory or peer failed: " + ex.getMessage(), ex);
				if (outcome == null) {
					this.status = OperationStatus.ERRORED;
					outcome = problem;
				}
				else {
					outcome.addSuppressed(problem);
				}
			}
			this.failure = outcome;
		}
		this.connector.ended(this);
		if (outcome == null) {
			this.completion.complete(null);
		}
		else {
			this.completion.completeExceptionally(outcome);
		}
		return true;
	}

	@Override
	public String toString() {
		return getClass().getSimpleName() + "[" + status() + ", " + this.localDescriptors.size() + " descriptors]";
	}

}
