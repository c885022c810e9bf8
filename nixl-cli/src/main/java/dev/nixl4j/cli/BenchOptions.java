package dev.nixl4j.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

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
 * @param largeBlockFactor divisor of iterations and warm-up for blocks above {@value #LARGE_BLOCK}
 * bytes, as nixlbench's {@code large_blk_iter_ftr}
 * @param processes 1: both agents in this JVM; 2: the target agent in a child JVM
 * @param json whether to print JSON instead of tables
 */
record BenchOptions(List<XferOp> ops, long minBlock, long maxBlock, int batch, int iterations, int warmup,
		int largeBlockFactor, int processes, boolean json) {

	/** Blocks above this size run fewer iterations (nixlbench's threshold). */
	static final long LARGE_BLOCK = 1 << 20;

	static final String OP = "--op";

	static final String MIN_BLOCK = "--min-block";

	static final String MAX_BLOCK = "--max-block";

	static final String BATCH = "--batch";

	static final String ITERATIONS = "--iterations";

	static final String WARMUP = "--warmup";

	static final String LARGE_BLOCK_FACTOR = "--large-block-factor";

	static final String PROCESSES = "--processes";

	static final String JSON = "--json";

	/** Options that take a value. */
	static final Set<String> VALUED = Set.of(OP, MIN_BLOCK, MAX_BLOCK, BATCH, ITERATIONS, WARMUP, LARGE_BLOCK_FACTOR,
			PROCESSES);

	/**
	 * Reads the options.
	 * @param arguments the parsed command line
	 * @return the options
	 */
	static BenchOptions from(Arguments arguments) {
		List<XferOp> ops = switch (arguments.value(OP, "both")) {
			case "read" -> List.of(XferOp.READ);
			case "write" -> List.of(XferOp.WRITE);
			case "both" -> List.of(XferOp.WRITE, XferOp.READ);
			default -> throw new UsageException(OP + " takes read, write or both");
		};
		long minBlock = arguments.bytes(MIN_BLOCK, 4 << 10);
		long maxBlock = arguments.bytes(MAX_BLOCK, 64 << 20);
		if (maxBlock < minBlock) {
			throw new UsageException(MAX_BLOCK + " must not be smaller than " + MIN_BLOCK);
		}
		int batch = arguments.count(BATCH, 1);
		int iterations = arguments.count(ITERATIONS, 1000);
		int factor = arguments.count(LARGE_BLOCK_FACTOR, 16);
		if (batch < 1 || iterations < 1 || factor < 1) {
			throw new UsageException(BATCH + ", " + ITERATIONS + " and " + LARGE_BLOCK_FACTOR + " must be at least 1");
		}
		if (maxBlock * batch > (1L << 34)) {
			throw new UsageException("a transfer of " + MAX_BLOCK + " x " + BATCH + " bytes does not fit in memory here");
		}
		int processes = arguments.count(PROCESSES, 1);
		if (processes != 1 && processes != 2) {
			throw new UsageException(PROCESSES + " takes 1 or 2");
		}
		return new BenchOptions(ops, minBlock, maxBlock, batch, iterations, arguments.count(WARMUP, 100), factor,
				processes, arguments.flag(JSON));
	}

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

}
