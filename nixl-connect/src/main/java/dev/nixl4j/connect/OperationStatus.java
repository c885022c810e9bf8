package dev.nixl4j.connect;

/**
 * Life cycle of an {@link Operation}, with the names of Dynamo's {@code nixl_connect}.
 */
public enum OperationStatus {

	/** Being set up: memory not registered yet. */
	UNINITIALIZED,
	/** Memory registered; the transfer is not posted yet (active operations only). */
	INITIALIZED,
	/** Waiting: for the peer's notification (passive) or for the transfer (active). */
	IN_PROGRESS,
	/** Done: the data has moved. */
	COMPLETE,
	/** Closed before it finished, or the connector was closed. */
	CANCELLED,
	/** Failed: the transfer failed, or the passive side's lease expired. */
	ERRORED;

	/**
	 * Whether an operation in this status is finished and has released what it held.
	 * @return {@code true} for {@link #COMPLETE}, {@link #CANCELLED} and {@link #ERRORED}
	 */
	public boolean isTerminal() {
		return this == COMPLETE || this == CANCELLED || this == ERRORED;
	}

}
