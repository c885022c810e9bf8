package dev.nixl4j;

/**
 * Whether an agent can move data.
 *
 * @see NixlAgent#state()
 */
public enum AgentState {

	/** The agent is open and its internal threads run: it can move data. */
	ACTIVE,

	/**
	 * One of the agent's internal threads could not go on (see
	 * {@link NixlAgent#failure()}): posts and notification waits are refused with
	 * {@link NixlStatus#FAILED}, transfers that were in flight failed. The agent cannot
	 * recover; close it and create a new one.
	 */
	FAILED,

	/** The agent was closed. */
	CLOSED

}
