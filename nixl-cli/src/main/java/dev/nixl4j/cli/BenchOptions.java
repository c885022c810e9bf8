package dev.nixl4j.cli;

import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.XferOp;

/**
 * What {@code nixl4j bench} measures.
 *
 * @param ops the directions, in order
 * @param minBlock the smallest block size in bytes
 * @param maxBlock the largest block size in bytes; sizes double from the smallest
 * @param batch blocks per transfer
 * @param iterations timed posts per block size up to {@value #LARGE_BLOCK} bytes
 * @param warmup untimed posts before them
 * @param largeBlockFactor divisor of iterations and warm-up for blocks above
 * {@value #LARGE_BLOCK} bytes, as nixlbench's {@code large_blk_iter_ftr}
 * @param processes 1: both agents in this JVM; 2: the target agent in a child JVM
 * @param json whether to print JSON instead of tables
 * @param completion how the benchmark thread learns that a post finished
 * @param memory where both sides' memory lies
 */
record BenchOptions(List<XferOp> ops, long minBlock, long maxBlock, int batch, int iterations, int warmup,
		int largeBlockFactor, int processes, boolean json, Completion completion, BenchMemory.Kind memory) {

	/** Blocks above this size run fewer iterations (nixlbench's threshold). */
	static final long LARGE_BLOCK = 1 << 20;

	/**
	 * Returns the block sizes: from the smallest, doubling, up to the largest.
	 * @return the sizes in bytes
	 */
	List<Long> blockSizes() {
		List<Long> sizes = new ArrayList<>();
		for (long size = this.minBlock; size <= this.maxBlock; size *= 2) {
			sizes.add(size);
		}
		return sizes;
	}

	/**
	 * Returns the timed iterations for a block size.
	 * @param block the block size
	 * @return the iterations, at least 1
	 */
	int iterations(long block) {
		return (block > LARGE_BLOCK) ? Math.max(1, this.iterations / this.largeBlockFactor) : this.iterations;
	}

	/**
	 * Returns the warm-up posts for a block size.
	 * @param block the block size
	 * @return the warm-up count
	 */
	int warmup(long block) {
		return (block > LARGE_BLOCK) ? this.warmup / this.largeBlockFactor : this.warmup;
	}

	/** How the benchmark thread waits for a post to finish. */
	enum Completion {

		/**
		 * Spins on the future that {@code post()} returned, which the agent's progress
		 * loop completes, then blocks on it.
		 */
		FUTURE,

		/**
		 * Calls {@code Transfer.await}, which polls the transfer on the calling thread
		 * for a few microseconds before it blocks on the future.
		 */
		CALLER

	}

}
