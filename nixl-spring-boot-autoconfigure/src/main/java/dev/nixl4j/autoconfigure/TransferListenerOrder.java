package dev.nixl4j.autoconfigure;

import dev.nixl4j.TransferListener;

import org.springframework.core.Ordered;

/**
 * The orders of the auto-configured {@link TransferListener} beans. The agent bean
 * applies every {@code TransferListener} bean in
 * {@link org.springframework.core.annotation.Order @Order} / {@link Ordered} order,
 * lowest first; a listener bean without an order comes after all of these
 * ({@link Ordered#LOWEST_PRECEDENCE}).
 *
 * <p>
 * The order matters when a listener refuses a post: the listeners before it hear
 * {@link TransferListener#postRefused}, the ones after it hear nothing of that post.
 * Hence the observation comes first (it records every refusal, the shutdown's included),
 * the drain of a stopping application refuses before admission control (a post refused
 * while shutting down takes no bulkhead permit and counts no call of a circuit breaker),
 * and the circuit breaker refuses before the bulkhead takes a permit. A listener bean
 * ordered between two of these values runs between those listeners.
 */
public final class TransferListenerOrder {

	/** Order of the transfer observation ({@code ObservationTransferListener}). */
	public static final int OBSERVATION = 1000;

	/** Order of the transfer duration timers ({@code NixlTransferDurations}). */
	public static final int METRICS = 2000;

	/**
	 * Order of the graceful shutdown's drain ({@link dev.nixl4j.Drain}), which refuses
	 * posts once stopping.
	 */
	public static final int DRAIN = 3000;

	/** Order of the per-peer circuit breakers ({@code PeerCircuitBreakers}). */
	public static final int CIRCUIT_BREAKER = 4000;

	/** Order of the bulkhead of transfers in flight ({@code TransferBulkhead}). */
	public static final int BULKHEAD = 5000;

	private TransferListenerOrder() {
	}

}
