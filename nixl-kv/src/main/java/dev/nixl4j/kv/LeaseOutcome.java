package dev.nixl4j.kv;

/**
 * How a {@link KvLease} ended.
 */
public enum LeaseOutcome {

	/** Every consumer rank reported its read while the lease was held. */
	COMPLETED,

	/** The lease ran out first; its blocks were released. */
	EXPIRED,

	/**
	 * A consumer gave the lease back (its pull failed or it will not pull); its blocks
	 * were released.
	 */
	RELEASED,

	/** The producer closed first; its blocks were released. */
	CLOSED,

	/**
	 * A consumer rank reported its read, but a block of the lease had been handed out
	 * again meanwhile ({@link LeaseConfirmation#STALE}); the blocks still of the lease's
	 * generation were released.
	 */
	STALE

}
