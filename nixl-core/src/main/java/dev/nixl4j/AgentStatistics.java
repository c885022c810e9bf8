package dev.nixl4j;

import java.util.List;
import java.util.Map;

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
	 * Returns how many received notifications were dropped unclaimed: nobody waited for
	 * them and the mailbox was over its bound for their sender or in total
	 * ({@link AgentConfig#mailboxPerSender()}, {@link AgentConfig#mailboxCapacity()}).
	 * Each sender's drops are also logged, at most once per sender every 10 s.
	 * @return the count
	 */
	default long notificationsDropped() {
		return 0;
	}

	/**
	 * Returns how many notifications from one sender were dropped unclaimed. Counted for
	 * the first 1024 senders that had messages dropped; drops from further senders count
	 * in {@link #notificationsDropped()} only.
	 * @param remoteAgent the sender
	 * @return the count, 0 for a sender nothing was dropped from
	 */
	default long notificationsDropped(String remoteAgent) {
		return 0;
	}

	/**
	 * Returns the senders that had notifications dropped, with their counts, as
	 * {@link #notificationsDropped(String)} counts them (the first 1024 senders). A copy,
	 * taken under the mailbox's lock: meant for publication, not for a hot path.
	 * @return the counts by sender, in the order senders first had a drop
	 */
	default Map<String, Long> notificationsDroppedBySender() {
		return Map.of();
	}

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
