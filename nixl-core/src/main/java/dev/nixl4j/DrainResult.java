package dev.nixl4j;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link Drain} left behind when it returned.
 *
 * @param transfersLeft the posts still in flight at the deadline, in no particular order
 * @param participantsLeft the participants that still held work at the deadline, in the
 * order they were given
 * @param elapsed how long the drain took
 */
public record DrainResult(List<Transfer> transfersLeft, List<Pending> participantsLeft, Duration elapsed) {

	/**
	 * Creates a result.
	 * @param transfersLeft the posts still in flight at the deadline
	 * @param participantsLeft the participants that still held work at the deadline
	 * @param elapsed how long the drain took
	 */
	public DrainResult {
		transfersLeft = List.copyOf(transfersLeft);
		participantsLeft = List.copyOf(participantsLeft);
		Objects.requireNonNull(elapsed, "elapsed");
	}

	/**
	 * Whether everything ended before the deadline.
	 * @return {@code true} when no post was in flight and no participant held work
	 */
	public boolean isComplete() {
		return this.transfersLeft.isEmpty() && this.participantsLeft.isEmpty();
	}

	/**
	 * A participant that still held work at the deadline.
	 *
	 * @param participant the participant
	 * @param work what it held, from {@link DrainParticipant#pendingWork()}
	 */
	public record Pending(DrainParticipant participant, String work) {

		/**
		 * Creates an entry.
		 * @param participant the participant
		 * @param work what it held
		 */
		public Pending {
			Objects.requireNonNull(participant, "participant");
			Objects.requireNonNull(work, "work");
		}

	}

}
