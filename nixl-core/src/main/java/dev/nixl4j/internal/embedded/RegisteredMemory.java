package dev.nixl4j.internal.embedded;

import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.MemoryDescriptor;
import org.jspecify.annotations.Nullable;

/**
 * One registration of an embedded agent: its regions, the segments behind them, and the
 * key a peer must present to touch them. Peers' requests {@link #enter enter} before they
 * touch the memory and {@link #exit exit} after; {@link #close()} refuses new entries and
 * waits for those inside, closing the connections of any that are stuck, so memory is
 * never touched after it was deregistered.
 */
final class RegisteredMemory {

	private static final long CLOSE_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

	private static final long CLOSE_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(10);

	private final long id;

	private final byte[] key;

	private final List<MemoryDescriptor> regions;

	private final List<MemorySegment> segments;

	private final Set<Closeable> users = ConcurrentHashMap.newKeySet();

	private int inside;

	private boolean open = true;

	RegisteredMemory(long id, byte[] key, List<MemoryDescriptor> regions, List<MemorySegment> segments) {
		this.id = id;
		this.key = key;
		this.regions = regions;
		this.segments = segments;
	}

	long id() {
		return this.id;
	}

	byte[] key() {
		return this.key;
	}

	List<MemoryDescriptor> regions() {
		return this.regions;
	}

	boolean keyMatches(byte[] presented) {
		return MessageDigest.isEqual(this.key, presented);
	}

	/**
	 * Returns the segment of a range inside one region, or {@code null} if no region
	 * holds it. Segments registered as segments keep their arena's checks: an arena
	 * closed under a registration makes accesses fail instead of touching freed memory.
	 */
	@Nullable MemorySegment slice(MemoryDescriptor range) {
		for (int i = 0; i < this.regions.size(); i++) {
			MemoryDescriptor region = this.regions.get(i);
			if (range.isInside(region)) {
				return this.segments.get(i).asSlice(range.address() - region.address(), range.length());
			}
		}
		return null;
	}

	/** The registered region that holds a range, or {@code null} if none does. */
	@Nullable MemoryDescriptor regionOf(MemoryDescriptor range) {
		for (MemoryDescriptor region : this.regions) {
			if (range.isInside(region)) {
				return region;
			}
		}
		return null;
	}

	/**
	 * Marks one more user of the memory.
	 * @param connection the connection to close if the user is stuck when the memory is
	 * deregistered, or {@code null} for an in-process copy (which cannot get stuck)
	 * @return {@code false} if the registration is closed
	 */
	synchronized boolean enter(@Nullable Closeable connection) {
		if (!this.open) {
			return false;
		}
		this.inside++;
		if (connection != null) {
			this.users.add(connection);
		}
		return true;
	}

	synchronized void exit(@Nullable Closeable connection) {
		this.inside--;
		if (connection != null) {
			this.users.remove(connection);
		}
		notifyAll();
	}

	/** Refuses new users and waits for the present ones to leave. */
	void close() {
		synchronized (this) {
			this.open = false;
			if (awaitEmpty(CLOSE_GRACE_NANOS)) {
				return;
			}
		}
		// a peer stalled in the middle of its data: cut its connection so its thread
		// leaves
		for (Closeable connection : this.users) {
			try {
				connection.close();
			}
			catch (IOException ex) {
				// closing is all that matters here
			}
		}
		synchronized (this) {
			if (!awaitEmpty(CLOSE_LIMIT_NANOS)) {
				throw new IllegalStateException("memory still in use " + CLOSE_LIMIT_NANOS / 1_000_000_000
						+ " s after its registration was closed");
			}
		}
	}

	/**
	 * Waits for the users to leave. An interrupt does not end the wait (returning while a
	 * peer's thread still writes would let the caller free memory under it); it is kept
	 * for the caller.
	 */
	private boolean awaitEmpty(long nanos) {
		long deadline = System.nanoTime() + nanos;
		boolean interrupted = false;
		try {
			while (this.inside > 0) {
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				try {
					TimeUnit.NANOSECONDS.timedWait(this, left);
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
			return true;
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

}
