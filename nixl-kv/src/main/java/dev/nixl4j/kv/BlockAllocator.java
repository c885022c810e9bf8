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
 *
 * <p>
 * Each block carries a generation, bumped every time {@link #allocate} hands the block
 * out: a holder that noted a block's generation can tell later whether the block was
 * freed and handed out again meanwhile (a lease whose blocks someone released once too
 * often, say), since its reference alone cannot show that.
 */
public final class BlockAllocator {

	private final int[] references;

	/** Bumped on every allocation of a block; 0 for a block never allocated. */
	private final long[] generations;

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
		this.generations = new long[capacity];
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
			this.generations[id]++;
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

	/**
	 * Returns a block's generation: how many times it was allocated.
	 * @param blockId the block
	 * @return its generation, 0 when it was never allocated
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for an unknown block
	 */
	public synchronized long generation(int blockId) {
		requireKnown("block_generation", blockId);
		return this.generations[blockId];
	}

	/**
	 * Returns the generations of blocks, in the order given.
	 * @param blockIds the blocks
	 * @return their generations
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for an unknown block
	 */
	public synchronized long[] generations(int... blockIds) {
		long[] result = new long[blockIds.length];
		for (int i = 0; i < blockIds.length; i++) {
			requireKnown("block_generation", blockIds[i]);
			result[i] = this.generations[blockIds[i]];
		}
		return result;
	}

	/**
	 * Returns the generations of allocated blocks, whose references a lease takes over.
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for an unknown or free
	 * block
	 */
	synchronized long[] generationsOfAllocated(String operation, int[] blockIds) {
		long[] result = new long[blockIds.length];
		for (int i = 0; i < blockIds.length; i++) {
			requireKnown(operation, blockIds[i]);
			if (this.references[blockIds[i]] == 0) {
				throw invalid(operation, "block " + blockIds[i] + " is free: only allocated blocks can be leased");
			}
			result[i] = this.generations[blockIds[i]];
		}
		return result;
	}

	/**
	 * Returns a 64-bit digest of blocks' current generations, in the order given: it
	 * changes, but for a chance of 2<sup>-64</sup>, when any of the blocks was handed out
	 * again. Never 0, so that 0 can stand for "no digest".
	 * @param blockIds the blocks
	 * @return the digest
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for an unknown block
	 */
	public long generationDigest(int... blockIds) {
		return digest(blockIds, generations(blockIds));
	}

	/**
	 * The digest of blocks and their generations, as {@link #generationDigest} computes
	 * it.
	 */
	static long digest(int[] blockIds, long[] generations) {
		long hash = 0x6a09e667f3bcc909L;
		for (int i = 0; i < blockIds.length; i++) {
			hash = mix(hash ^ mix(blockIds[i] * 0x9e3779b97f4a7c15L ^ generations[i]));
		}
		return (hash != 0) ? hash : 1;
	}

	/** SplitMix64's finalizer. */
	private static long mix(long value) {
		long z = value;
		z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
		z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
		return z ^ (z >>> 31);
	}

	/**
	 * Drops one reference from each block that is still of the generation given (blocks
	 * handed out again since lost that reference when they were freed); blocks left
	 * without references become free.
	 * @param blockIds distinct blocks
	 * @param generations their generations when the reference was taken
	 * @return how many blocks of another generation were skipped
	 */
	synchronized int releaseOfGeneration(int[] blockIds, long[] generations) {
		for (int id : blockIds) {
			requireKnown("release_blocks", id);
		}
		int skipped = 0;
		for (int i = 0; i < blockIds.length; i++) {
			int id = blockIds[i];
			if (this.generations[id] != generations[i] || this.references[id] == 0) {
				skipped++;
			}
			else if (--this.references[id] == 0) {
				this.free[this.freeCount++] = id;
			}
		}
		return skipped;
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
