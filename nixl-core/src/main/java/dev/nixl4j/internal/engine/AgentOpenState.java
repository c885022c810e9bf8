package dev.nixl4j.internal.engine;

import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

import dev.nixl4j.AgentState;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * The lifecycle of one agent: open, failed or closed, and the lock that keeps the engine
 * alive while a call is inside it.
 *
 * <p>
 * Every engine call of the control path and every post holds the read side of the lock;
 * closing takes the write side, so the engine is destroyed only when no call is inside
 * it.
 */
final class AgentOpenState {

	private final String agentName;

	private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

	private volatile boolean open = true;

	/** Why the agent failed, once one of its threads could not go on; never reset. */
	private volatile @Nullable NixlException failure;

	/** The thread whose fault failed the agent; written before {@link #failure}. */
	private volatile String failedThread = "";

	AgentOpenState(String agentName) {
		this.agentName = agentName;
	}

	ReentrantReadWriteLock.ReadLock readLock() {
		return this.lock.readLock();
	}

	ReentrantReadWriteLock.WriteLock writeLock() {
		return this.lock.writeLock();
	}

	boolean isOpen() {
		return this.open;
	}

	/** Marks the agent closed; the caller holds the write lock. */
	void closed() {
		this.open = false;
	}

	@Nullable NixlException failure() {
		return this.failure;
	}

	AgentState state() {
		if (!this.open) {
			return AgentState.CLOSED;
		}
		return (this.failure != null) ? AgentState.FAILED : AgentState.ACTIVE;
	}

	/**
	 * Records the first failure of an open agent.
	 * @return {@code false} when the agent had already failed or was closed
	 */
	synchronized boolean failed(String thread, NixlException failed) {
		if (this.failure != null || !this.open) {
			return false;
		}
		this.failedThread = thread;
		this.failure = failed;
		return true;
	}

	void ensureOpen(String operation) {
		if (!this.open) {
			throw new NixlException(NixlStatus.CLOSED, operation, this.agentName, null, "the agent was closed");
		}
	}

	/**
	 * Throws unless the agent is open and has not failed: the check of everything that
	 * moves data or waits for it (posts, notifications).
	 */
	void ensureActive(String operation) {
		ensureOpen(operation);
		NixlException failed = this.failure;
		if (failed != null) {
			throw new NixlException(NixlStatus.FAILED, operation, this.agentName, null,
					"the agent failed and can no longer move data (" + this.failedThread
							+ " thread stopped); close it and create a new one",
					failed.getCause());
		}
	}

	<T> T guarded(String operation, Supplier<T> call) {
		this.lock.readLock().lock();
		try {
			ensureOpen(operation);
			return call.get();
		}
		finally {
			this.lock.readLock().unlock();
		}
	}

	void guarded(String operation, Runnable call) {
		guarded(operation, () -> {
			call.run();
			return null;
		});
	}

}
