package dev.nixl4j.micrometer;

import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What an observation of one transfer post knows: the agent, the transfer, and once the
 * post ended, its outcome.
 */
public class TransferObservationContext extends Observation.Context {

	private final String agentName;

	private final Transfer transfer;

	private @Nullable TransferState outcome;

	private boolean refused;

	/**
	 * Creates the context of a post.
	 * @param agentName the agent that posts
	 * @param transfer the transfer being posted
	 */
	public TransferObservationContext(String agentName, Transfer transfer) {
		this.agentName = agentName;
		this.transfer = transfer;
	}

	/**
	 * Returns the agent that posts.
	 * @return its name
	 */
	public String getAgentName() {
		return this.agentName;
	}

	/**
	 * Returns the transfer.
	 * @return the transfer
	 */
	public Transfer getTransfer() {
		return this.transfer;
	}

	/**
	 * Returns how the post ended.
	 * @return {@link TransferState#COMPLETED}, {@link TransferState#FAILED},
	 * {@link TransferState#STALLED} or {@link TransferState#CANCELLED}, or {@code null}
	 * while it runs and when it was refused
	 */
	public @Nullable TransferState getOutcome() {
		return this.outcome;
	}

	/**
	 * Records how the post ended.
	 * @param outcome the outcome
	 */
	public void setOutcome(@Nullable TransferState outcome) {
		this.outcome = outcome;
	}

	/**
	 * Whether the post was refused before it started (by a transfer listener or the
	 * agent).
	 * @return {@code true} if refused
	 */
	public boolean isRefused() {
		return this.refused;
	}

	/**
	 * Records that the post was refused before it started.
	 * @param refused whether it was refused
	 */
	public void setRefused(boolean refused) {
		this.refused = refused;
	}

}
