package dev.nixl4j.kv;

/**
 * Where a {@link KvConsumer}'s session with one producer stands.
 */
public enum KvSessionState {

	/** Not resolved yet: the first pull from the producer resolves it. */
	NEW,

	/**
	 * The producer's handle was checked and its metadata loaded; the last pull from it
	 * did not fail in the backend.
	 */
	CONNECTED,

	/**
	 * A transfer from the producer failed in the backend (its connection dropped): both
	 * sides forgot the connection, and the next pull resolves and connects again.
	 */
	RECONNECTING,

	/**
	 * The producer's handle or metadata is not published (it stopped, or its entry
	 * expired): pulls fail at once until it is published again.
	 */
	GONE,

	/**
	 * The producer's cache cannot exchange blocks with this one (its layout or model
	 * fingerprint differs): pulls fail at once until it publishes a compatible handle.
	 */
	INCOMPATIBLE

}
