package dev.nixl4j.kv;

/**
 * How a producer lets its consumers check that the blocks they read are the ones it
 * leased, unchanged ({@code nixl.kv.integrity} in the starter). A check that fails makes
 * the pull fail; its data must not be used.
 */
public enum KvIntegrity {

	/**
	 * No check beyond the lease itself: the producer answers
	 * {@link LeaseConfirmation#HELD} whenever the lease is held.
	 */
	NONE,

	/**
	 * The lease's {@link KvTransferParams#generation() generation digest}: the producer
	 * answers {@link LeaseConfirmation#HELD} only when none of the blocks was handed out
	 * again since the lease was taken, else {@link LeaseConfirmation#STALE}. Costs one
	 * pass over the block ids per answer.
	 */
	GENERATION,

	/**
	 * The generation digest, and a CRC32C of every block (of every consumer rank's slice
	 * of it) over all regions, computed by the producer when it takes the lease and
	 * compared by the consumer with what landed before its pull returns: it catches
	 * blocks written to between the lease and the READ, and a READ that moved wrong
	 * bytes. Costs one pass over the data on each side.
	 */
	CRC32C

}
