package dev.nixl4j.kv;

/**
 * A producer's answer to a consumer that finished reading a request's blocks.
 */
public enum LeaseConfirmation {

	/**
	 * The lease was held when the consumer's notification arrived: the blocks read were
	 * the request's.
	 */
	HELD,

	/**
	 * The lease had expired and its blocks were released: what was read may belong to
	 * another request.
	 */
	EXPIRED,

	/**
	 * A consumer rank gave the lease back before this one finished reading: the blocks
	 * were released, what was read may belong to another request.
	 */
	RELEASED,

	/** The producer knows no such lease (never made, already completed, or forgotten). */
	UNKNOWN,

	/**
	 * The lease was held, but a block of it had been handed out again since the lease was
	 * taken (its generation changed: {@link KvIntegrity#GENERATION}), or the consumer
	 * reported another generation digest than the lease's: what was read may belong to
	 * another request. The producer ends the lease ({@link LeaseOutcome#STALE}).
	 */
	STALE

}
