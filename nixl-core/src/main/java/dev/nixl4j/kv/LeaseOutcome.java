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
	CLOSED

}
