package dev.nixl4j;

import java.util.List;

/**
 * Live counters of an agent since it was created: finished transfers and their bytes by
 * direction and outcome, and notifications. Reading them is cheap and never blocks, so
 * meters can read them directly.
 */
public interface AgentStatistics {

	/**
	 * The outcomes a post ends in and is counted under, in the order reports list them.
	 */
	List<TransferState> OUTCOMES = List.of(TransferState.COMPLETED, TransferState.FAILED, TransferState.STALLED,
			TransferState.CANCELLED);

	/**
	 * Returns how many posts ended in an outcome.
	 * @param op the direction
	 * @param outcome one of {@link #OUTCOMES}
	 * @return the count
	 */
	long transfers(XferOp op, TransferState outcome);

	/**
	 * Returns the bytes of posts that ended in an outcome: moved for completed posts,
	 * requested for the others.
	 * @param op the direction
	 * @param outcome the outcome, as for {@link #transfers}
	 * @return the byte count
	 */
	long bytes(XferOp op, TransferState outcome);

	/**
	 * Returns how many notifications were sent, on their own or with a transfer.
	 * @return the count
	 */
	long notificationsSent();

	/**
	 * Returns how many notifications were received.
	 * @return the count
	 */
	long notificationsReceived();

	/**
	 * Returns how many times a unit of work on one of the agent's internal threads (the
	 * progress loop, the embedded engine's listener and connections) threw. Each was
	 * logged with its context (a thread that keeps failing, at most once a second) and
	 * the thread went on, except for a last one that {@linkplain AgentState#FAILED
	 * failed} the agent.
	 * @return the count
	 */
	long internalErrors();

}
