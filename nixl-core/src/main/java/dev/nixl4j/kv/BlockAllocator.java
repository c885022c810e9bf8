package dev.nixl4j.kv;

import java.util.Arrays;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

/**
 * Hands out block ids {@code 0 .. capacity - 1} with reference counts: {@link #allocate}
 * gives blocks with one reference each, {@link #retain} adds one, {@link #release} drops
 * one and frees a block when none is left. Thread-safe.
 *
 * <p>
 * Every call checks all its ids before it changes anything: an unknown id, a free block
 * or a release of more references than a block holds fails with
 * {@link NixlStatus#ERROR_INVALID_PARAM} and leaves every count as it was.
 */
public final class BlockAllocator {

	private final int[] references;

	/** Free ids, lowest on top, so that a fresh allocator hands out contiguous runs. */
	private final int[] free;

	private int freeCount;

	/**
	 * Creates an allocator with every block free.
	 * @param capacity the number of blocks
	 */
	public BlockAllocator(int capacity) {
		if (capacity <= 0) {
			throw new IllegalArgumentException("capacity must be positive, was " + capacity);
		}
		this.references = new int[capacity];
		this.free = new int[capacity];
		for (int i = 0; i < capacity; i++) {
			this.free[i] = capacity - 1 - i;
		}
		this.freeCount = capacity;
	}

	/**
	 * Returns the number of blocks.
	 * @return the capacity
	 */
	public int capacity() {
		return this.references.length;
	}

	/**
	 * Returns the number of free blocks.
	 * @return the count
	 */
	public synchronized int freeCount() {
		return this.freeCount;
	}

	/**
	 * Returns a block's reference count.
	 * @param blockId the block
	 * @return its references, 0 when free
	 */
	public synchronized int references(int blockId) {
		requireKnown("block_references", blockId);
		return this.references[blockId];
	}

	/**
	 * Allocates blocks, each with one reference.
	 * @param count how many
	 * @return their ids
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for a count below 1,
	 * {@link NixlStatus#BUSY} when fewer blocks are free (none is taken then)
	 */
	public synchronized int[] allocate(int count) {
		if (count <= 0) {
			throw invalid("allocate_blocks", "the number of blocks must be positive, was " + count);
		}
		if (count > this.freeCount) {
			throw new NixlException(NixlStatus.BUSY, "allocate_blocks", null, null,
					count + " blocks asked for, only " + this.freeCount + " of " + capacity() + " free");
		}
		int[] ids = new int[count];
		for (int i = 0; i < count; i++) {
			int id = this.free[--this.freeCount];
			this.references[id] = 1;
			ids[i] = id;
		}
		return ids;
	}

	/**
	 * Adds one reference to each block (an id given twice gets two).
	 * @param blockIds allocated blocks
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for an unknown or free
	 * block
	 */
	public synchronized void retain(int... blockIds) {
		for (int id : blockIds) {
			requireKnown("retain_blocks", id);
			if (this.references[id] == 0) {
				throw invalid("retain_blocks", "block " + id + " is free: only allocated blocks can be retained");
			}
			if (this.references[id] == Integer.MAX_VALUE) {
				throw invalid("retain_blocks", "block " + id + " has too many references");
			}
		}
		for (int id : blockIds) {
			this.references[id]++;
		}
	}

	/**
	 * Drops one reference from each block (an id given twice loses two); blocks left
	 * without references become free.
	 * @param blockIds allocated blocks
	 * @return how many blocks became free
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for an unknown block,
	 * or one released more often than it is referenced (a double free)
	 */
	public synchronized int release(int... blockIds) {
		int[] sorted = blockIds.clone();
		Arrays.sort(sorted);
		for (int i = 0; i < sorted.length; i++) {
			int id = sorted[i];
			requireKnown("release_blocks", id);
			int times = 1;
			while (i + 1 < sorted.length && sorted[i + 1] == id) {
				times++;
				i++;
			}
			if (times > this.references[id]) {
				throw invalid("release_blocks",
						(this.references[id] == 0) ? "block " + id + " is already free (double release)" : "block " + id
								+ " released " + times + " times but holds " + this.references[id] + " references");
			}
		}
		int freed = 0;
		for (int id : blockIds) {
			if (--this.references[id] == 0) {
				this.free[this.freeCount++] = id;
				freed++;
			}
		}
		return freed;
	}

	private void requireKnown(String operation, int blockId) {
		if (blockId < 0 || blockId >= this.references.length) {
			throw invalid(operation,
					"unknown block id " + blockId + ": ids run from 0 to " + (this.references.length - 1));
		}
	}

	private static NixlException invalid(String operation, String detail) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, null, detail);
	}

}
