package dev.nixl4j.internal.embedded;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.XferOp;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;
import org.jspecify.annotations.Nullable;

/**
 * A transfer request of the embedded engine: local segments paired with a peer's regions.
 * It can be posted again once done. Threads that move its data count themselves in
 * {@link #io} (under this object's monitor) so that cancelling waits until none touches
 * its memory.
 */
final class Request {

	static final int SUCCESS = 0;

	static final int IN_PROGRESS = 1;

	private static final long IO_LEAVE_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(10);

	final XferOp op;

	final RemotePeer peer;

	final List<MemorySegment> local;

	final List<RemoteRegion> remote;

	final long bytes;

	/** The id of the latest post on the wire; responses for older posts are ignored. */
	long wireId;

	byte @Nullable [] notification;

	boolean cancelled;

	int io;

	volatile int status = SUCCESS;

	volatile @Nullable String detail;

	long postedMicros;

	long postStart;

	long postEnd;

	volatile long finished;

	Request(XferOp op, RemotePeer peer, List<MemorySegment> local, List<RemoteRegion> remote) {
		this.op = op;
		this.peer = peer;
		this.local = local;
		this.remote = remote;
		long total = 0;
		for (MemorySegment segment : local) {
			total += segment.byteSize();
		}
		this.bytes = total;
	}

	/**
	 * Ends a post with a status, unless a later post or a cancellation replaced it.
	 * @return whether the status was taken
	 */
	synchronized boolean finish(long wireId, int code, @Nullable String why) {
		if (this.cancelled || wireId != this.wireId || this.status != IN_PROGRESS) {
			return false;
		}
		this.detail = why;
		this.finished = System.nanoTime();
		this.status = code;
		return true;
	}

	/**
	 * Starts moving this request's data, unless it was cancelled.
	 * @return {@code false} if the caller must not touch the memory
	 */
	synchronized boolean enterIo(long wireId) {
		if (this.cancelled || wireId != this.wireId) {
			return false;
		}
		this.io++;
		return true;
	}

	synchronized void exitIo() {
		this.io--;
		notifyAll();
	}

	/**
	 * Cancels the request.
	 * @return whether a thread is moving its data for a post still in progress (its
	 * connection must be cut); a thread of a finished post is only about to leave
	 */
	synchronized boolean cancel() {
		this.cancelled = true;
		return this.io > 0 && this.status == IN_PROGRESS;
	}

	/**
	 * Waits until no thread moves this request's data. An interrupt does not end the wait
	 * (the caller may free the memory once this returns); it is kept for the caller.
	 */
	synchronized void awaitNoIo() {
		long deadline = System.nanoTime() + IO_LEAVE_LIMIT_NANOS;
		boolean interrupted = false;
		try {
			while (this.io > 0) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					throw new IllegalStateException(
							"a transfer's data was still moving 10 s after its connection was cut");
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this, left);
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

}
