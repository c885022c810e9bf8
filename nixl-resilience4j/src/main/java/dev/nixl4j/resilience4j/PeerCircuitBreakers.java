package dev.nixl4j.resilience4j;

import java.util.concurrent.TimeUnit;

import dev.nixl4j.NixlException;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferRefusedException;
import dev.nixl4j.TransferState;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.jspecify.annotations.Nullable;

/**
 * A circuit breaker per peer around an agent's transfers:
 * {@code nixl-peer-<remote agent>} in the {@link CircuitBreakerRegistry}, created on the
 * first post to that peer from the registry's configuration {@value #CONFIG} when it is
 * defined (with Spring Boot: {@code resilience4j.circuitbreaker.configs.nixl-peer}), else
 * from the registry's default configuration (an instance configured by its full name
 * keeps its own).
 *
 * <p>
 * A transfer that ends {@link TransferState#FAILED FAILED} or
 * {@link TransferState#STALLED STALLED} is recorded as an error, one that
 * {@link TransferState#COMPLETED COMPLETED} as a success, each with its duration (so
 * slow-call thresholds apply); a {@link TransferState#CANCELLED cancelled} transfer and a
 * post that never started are not recorded. While a peer's breaker is open, a post to
 * that peer is refused at once: {@link Transfer#post()} throws a
 * {@link TransferRefusedException} of reason
 * {@link TransferRefusedException.Reason#PEER_SUSPENDED PEER_SUSPENDED}, naming the
 * breaker (hence the peer) as its {@link TransferRefusedException#limiter() limiter},
 * with Resilience4j's {@link CallNotPermittedException} as its cause; the engine never
 * sees the request. Other peers are not affected.
 *
 * <p>
 * The breakers are ordinary registry entries: Resilience4j's
 * {@code resilience4j.circuitbreaker.*} metrics and events report them, and its health
 * indicator shows them when
 * {@code resilience4j.circuitbreaker.configs.default.register-health-indicator} is true
 * (the health indicator looks up instances that are not configured by name in the default
 * configuration). A breaker stays in the registry after its peer went away.
 */
public final class PeerCircuitBreakers implements TransferListener {

	/**
	 * Name of the circuit breaker configuration
	 * ({@code resilience4j.circuitbreaker.configs.nixl-peer}) that per-peer breakers are
	 * created from, when defined.
	 */
	public static final String CONFIG = "nixl-peer";

	/**
	 * Prefix of the per-peer circuit breakers' names, followed by the peer's agent name.
	 */
	public static final String PREFIX = "nixl-peer-";

	private final CircuitBreakerRegistry registry;

	private final CircuitBreakerConfig config;

	/**
	 * Creates the listener; add it to the agent with
	 * {@link dev.nixl4j.NixlAgent#addTransferListener}.
	 * @param registry the registry that holds the breakers
	 */
	public PeerCircuitBreakers(CircuitBreakerRegistry registry) {
		this.registry = registry;
		this.config = registry.getConfiguration(CONFIG).orElseGet(registry::getDefaultConfig);
	}

	/**
	 * Returns the circuit breaker of a peer, creating it if needed.
	 * @param remoteAgent the peer's agent name
	 * @return its breaker, named {@code nixl-peer-<remoteAgent>}
	 */
	public CircuitBreaker circuitBreaker(String remoteAgent) {
		return this.registry.circuitBreaker(PREFIX + remoteAgent, this.config);
	}

	/**
	 * Asks the peer's breaker for permission.
	 * @param transfer the transfer about to be posted
	 * @throws TransferRefusedException when the peer's breaker is open
	 */
	@Override
	public void beforePost(Transfer transfer) {
		CircuitBreaker breaker = circuitBreaker(transfer.remoteAgent());
		try {
			breaker.acquirePermission();
		}
		catch (CallNotPermittedException ex) {
			throw new TransferRefusedException(TransferRefusedException.Reason.PEER_SUSPENDED, breaker.getName(), null,
					transfer.remoteAgent(),
					"transfers to '" + transfer.remoteAgent()
							+ "' are suspended after repeated failures (circuit breaker '" + breaker.getName() + "' is "
							+ breaker.getState() + "); they are tried again after its wait",
					ex);
		}
	}

	@Override
	public void postRefused(Transfer transfer, RuntimeException reason) {
		circuitBreaker(transfer.remoteAgent()).releasePermission();
	}

	@Override
	public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
			@Nullable NixlException failure) {
		CircuitBreaker breaker = circuitBreaker(transfer.remoteAgent());
		switch (outcome) {
			case COMPLETED -> breaker.onSuccess(durationNanos, TimeUnit.NANOSECONDS);
			case FAILED, STALLED -> breaker.onError(durationNanos, TimeUnit.NANOSECONDS,
					(failure != null) ? failure : new IllegalStateException("transfer " + outcome));
			default -> breaker.releasePermission();
		}
	}

	@Override
	public String toString() {
		return "PeerCircuitBreakers(" + PREFIX + "<peer>)";
	}

}
