package dev.nixl4j.kv;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The local blocks a {@link KvConsumer#pull(KvTransferParams, java.time.Duration) pull}
 * filled, leased from the consumer's cache until {@link #close()}: block {@code i}, in
 * token order, holds the producer's block {@code params.blockIds().get(i)} (this rank's
 * slice of its heads), checked and confirmed. Their memory is the cache's
 * ({@link #cache()}, {@link #block(int, int)}); {@link #close()} gives them back to the
 * cache's allocator. Use them in a try-with-resources statement.
 *
 * <p>
 * Thread-safe; closing twice is harmless.
 */
public final class KvBlocks implements AutoCloseable {

	private final PagedKvCache cache;

	private final int[] blockIds;

	private final long bytes;

	private final AtomicBoolean closed = new AtomicBoolean();

	KvBlocks(PagedKvCache cache, int[] blockIds, long bytes) {
		this.cache = cache;
		this.blockIds = blockIds;
		this.bytes = bytes;
	}

	/**
	 * Returns the cache the blocks belong to.
	 * @return the consumer's cache
	 */
	public PagedKvCache cache() {
		return this.cache;
	}

	/**
	 * Returns the blocks' ids in the cache, in token order.
	 * @return a copy of the ids
	 */
	public int[] blockIds() {
		return this.blockIds.clone();
	}

	/**
	 * Returns how many blocks were pulled.
	 * @return the count
	 */
	public int size() {
		return this.blockIds.length;
	}

	/**
	 * Returns the id in the cache of the block at a position in token order.
	 * @param index the position, from 0 to {@link #size()} - 1
	 * @return the block's id
	 */
	public int blockId(int index) {
		return this.blockIds[index];
	}

	/**
	 * Returns the memory of one block of one region
	 * ({@link PagedKvCache#block(int, int)}) of a cache in host memory.
	 * @param region the region index
	 * @param index the block's position in token order
	 * @return a slice of {@link KvCacheLayout#blockLength()} bytes
	 * @throws IllegalStateException when the blocks were given back
	 */
	public MemorySegment block(int region, int index) {
		if (this.closed.get()) {
			throw new IllegalStateException(
					"the pulled blocks " + Arrays.toString(this.blockIds) + " were given back to the cache");
		}
		return this.cache.block(region, this.blockIds[index]);
	}

	/**
	 * Returns how many bytes the pull read.
	 * @return the bytes, over every region
	 */
	public long bytes() {
		return this.bytes;
	}

	/**
	 * Gives the blocks back to the cache's allocator; their data must not be used after.
	 * Closing twice is harmless.
	 */
	@Override
	public void close() {
		if (this.closed.compareAndSet(false, true)) {
			this.cache.allocator().release(this.blockIds);
		}
	}

	@Override
	public String toString() {
		return "KvBlocks" + Arrays.toString(this.blockIds) + (this.closed.get() ? " (given back)" : "");
	}

}
