package dev.nixl4j.kv;

/**
 * Told by a {@link KvConsumer} how its pulls went, for meters
 * ({@link KvConsumer#addPullListener}). Called on the pulling thread (a reconnect on the
 * thread that found the connection lost), after the fact, once per event; an
 * implementation must be quick, must not block and must not throw. Producer names come
 * from the leases pulled, so there are no more of them than the consumer keeps sessions
 * with ({@link KvConsumer#MAX_SESSIONS}).
 */
public interface KvPullListener {

	/**
	 * A pull returned: the producer confirmed the lease and the data checked out.
	 * @param producer the producer's agent
	 * @param bytes the bytes read
	 * @param nanos how long the pull took, from its call to its return
	 */
	default void pulled(String producer, long bytes, long nanos) {
	}

	/**
	 * A pull threw.
	 * @param producer the producer's agent
	 * @param failure what it threw ({@link KvLeaseLostException},
	 * {@link KvIntegrityException}, {@link KvProducerUnavailableException}, ...)
	 * @param nanos how long the pull took, from its call to its throw
	 */
	default void pullFailed(String producer, RuntimeException failure, long nanos) {
	}

	/**
	 * The producer answered the done message of a pull's READ, whatever the answer.
	 * @param producer the producer's agent
	 * @param nanos how long the answer took, from the READ's completion to the answer's
	 * arrival, resends included
	 */
	default void confirmed(String producer, long nanos) {
	}

	/**
	 * The session with a producer was lost and is connected anew: a transfer failed in
	 * the backend, or the producer restarted (another incarnation of its cache). Once per
	 * loss, as {@link KvProducerSession#reconnects()} counts.
	 * @param producer the producer's agent
	 */
	default void reconnected(String producer) {
	}

}
