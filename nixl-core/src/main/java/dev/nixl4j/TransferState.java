package dev.nixl4j;

/**
 * Life cycle of a {@link Transfer}.
 */
public enum TransferState {

	/** Created and not posted yet, or finished and ready to be posted again. */
	READY,
	/** Posted; the agent's progress loop is polling it. */
	IN_PROGRESS,
	/** All data has landed (the notification, if any, has been handed to the backend). */
	COMPLETED,
	/** The backend reported an error. */
	FAILED,
	/** It stayed in progress beyond the agent's stall limit and was cancelled. */
	STALLED,
	/** Its owner cancelled or closed it while it was in progress. */
	CANCELLED,
	/** Closed: its native request is released. */
	CLOSED;

	/**
	 * Whether a transfer in this state is done with its last post.
	 * @return {@code true} for every state but {@link #IN_PROGRESS}
	 */
	public boolean isTerminal() {
		return this != IN_PROGRESS;
	}

}
