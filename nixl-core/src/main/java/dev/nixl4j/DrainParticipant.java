package dev.nixl4j;

import java.time.Duration;

/**
 * A component that holds work on an agent's memory beyond the agent's own transfers, such
 * as the KV producer's leases (consumers still reading leased blocks), and lets a
 * {@link Drain} wait for that work before the agent closes.
 */
public interface DrainParticipant {

	/**
	 * Waits until the work this component holds has ended. Must return by the timeout;
	 * never starts new work.
	 * @param timeout how long to wait at most
	 * @return {@code true} when no work is left, {@code false} when the time ran out
	 * first
	 */
	boolean awaitDrained(Duration timeout);

	/**
	 * Describes the work held now, for a {@link DrainResult} and its logs, such as
	 * {@code "2 KV lease(s)"}. Must not block.
	 * @return a short description
	 */
	String pendingWork();

}
