package dev.nixl4j.kv;

/**
 * How a {@link KvLease} ended.
 */
public enum LeaseOutcome {

	/** Every consumer rank reported its read while the lease was held. */
	COMPLETED,

	/** The lease ran out first; its blocks were released. */
	EXPIRED,

	/** The producer closed first; its blocks were released. */
	CLOSED

}
