package dev.nixl4j.kv;

import dev.nixl4j.NixlStatus;

/**
 * A pull whose data landed under a lease the producer confirmed
 * ({@link LeaseConfirmation#HELD}) but does not match the CRC32C the producer computed
 * when it took the lease ({@link KvIntegrity#CRC32C}): the producer's block was written
 * to after the lease was taken, or the READ moved wrong bytes. The data in the local
 * blocks must not be used; as for any failed pull the caller still owns its local blocks
 * and frees them (or pulls again into them), and recomputes the request or pulls it again
 * under a new lease.
 *
 * <p>
 * It extends {@link KvLeaseLostException} because the caller's duty is the same as for a
 * lease that was lost: a handler written for lost leases, which already throws the data
 * away and recomputes or pulls again, handles this failure correctly without knowing of
 * it. Its {@link #confirmation()} is {@link LeaseConfirmation#HELD} (the producer's lease
 * itself held) and its status {@link NixlStatus#ERROR_INVALID_STATE}.
 */
public class KvIntegrityException extends KvLeaseLostException {

	private static final long serialVersionUID = 1L;

	/** The producer's block whose checksum did not match (the first one). */
	private final int producerBlockId;

	/** The local block it landed in. */
	private final int localBlockId;

	/** The slice of heads this consumer rank read. */
	private final int slice;

	/**
	 * Creates the exception.
	 * @param agent the consumer's agent
	 * @param producer the producer's agent
	 * @param requestId the request
	 * @param producerBlockId the first producer block whose checksum did not match
	 * @param localBlockId the local block it landed in
	 * @param slice the slice of heads read (0 with one consumer rank)
	 */
	public KvIntegrityException(String agent, String producer, String requestId, int producerBlockId, int localBlockId,
			int slice) {
		super(agent, producer, requestId, LeaseConfirmation.HELD,
				"the blocks of request '" + requestId + "' read from producer '" + producer
						+ "' do not match the producer's CRC32C, first at producer block " + producerBlockId
						+ " (local block " + localBlockId + ((slice != 0) ? ", slice " + slice : "")
						+ "): the data read must not be used",
				null);
		this.producerBlockId = producerBlockId;
		this.localBlockId = localBlockId;
		this.slice = slice;
	}

	/**
	 * Returns the first producer block whose checksum did not match.
	 * @return its id in the producer's cache
	 */
	public int producerBlockId() {
		return this.producerBlockId;
	}

	/**
	 * Returns the local block that producer block landed in.
	 * @return its id in the consumer's cache
	 */
	public int localBlockId() {
		return this.localBlockId;
	}

	/**
	 * Returns the slice of heads this consumer rank read.
	 * @return the slice, 0 with one consumer rank
	 */
	public int slice() {
		return this.slice;
	}

}
