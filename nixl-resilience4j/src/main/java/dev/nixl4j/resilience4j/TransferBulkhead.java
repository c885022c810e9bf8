package dev.nixl4j.resilience4j;

import java.util.Objects;

import dev.nixl4j.NixlException;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferRefusedException;
import dev.nixl4j.TransferState;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Back-pressure for an agent's transfers: the {@value #NAME} bulkhead of the
 * {@link BulkheadRegistry} bounds the transfers in flight. A post takes a permit before
 * the engine sees it, waiting at most the bulkhead's {@code maxWaitDuration}
 * (Resilience4j's default: no wait), and gives it back when the transfer ends, whatever
 * its outcome, or when the post did not start. A post that gets no permit fails at once
 * and moves nothing: {@link dev.nixl4j.Transfer#post()} throws a
 * {@link TransferRefusedException} of reason
 * {@link TransferRefusedException.Reason#TOO_MANY_IN_FLIGHT TOO_MANY_IN_FLIGHT}, naming
 * the bulkhead as its {@link TransferRefusedException#limiter() limiter}, with
 * Resilience4j's {@link BulkheadFullException} as its cause.
 *
 * <p>
 * The bulkhead is the registry's {@value #NAME} instance when it has one (with Spring
 * Boot: {@code resilience4j.bulkhead.instances.nixl-transfers}); otherwise it is created
 * from the registry's default configuration with {@code maxConcurrentCalls} set to the
 * default the caller gives ({@link Builder#defaultMaxInFlight}; the starter gives
 * {@code nixl.transfer.max-in-flight}). It is an ordinary registry entry, so
 * Resilience4j's {@code resilience4j.bulkhead.*} metrics and events report it. Built with
 * {@link #builder}.
 */
public final class TransferBulkhead implements TransferListener {

	/** Name of the bulkhead bounding transfers in flight. */
	public static final String NAME = "nixl-transfers";

	private final Bulkhead bulkhead;

	private TransferBulkhead(Bulkhead bulkhead) {
		this.bulkhead = bulkhead;
	}

	/**
	 * Starts a transfer bulkhead taken from a registry.
	 * @param registry the registry that holds (or will hold) the {@value #NAME} bulkhead
	 * @return the builder
	 */
	public static Builder builder(BulkheadRegistry registry) {
		return new Builder(registry);
	}

	/**
	 * Returns the bulkhead.
	 * @return the registered bulkhead
	 */
	public Bulkhead bulkhead() {
		return this.bulkhead;
	}

	/**
	 * Takes a permit.
	 * @param transfer the transfer about to be posted
	 * @throws TransferRefusedException when no permit is free within the bulkhead's wait
	 */
	@Override
	public void beforePost(Transfer transfer) {
		try {
			this.bulkhead.acquirePermission();
		}
		catch (BulkheadFullException ex) {
			throw new TransferRefusedException(TransferRefusedException.Reason.TOO_MANY_IN_FLIGHT,
					this.bulkhead.getName(), null, transfer.remoteAgent(),
					"as many transfers are in flight as bulkhead '" + this.bulkhead.getName() + "' allows ("
							+ this.bulkhead.getBulkheadConfig().getMaxConcurrentCalls() + ")",
					ex);
		}
	}

	@Override
	public void postRefused(Transfer transfer, RuntimeException reason) {
		this.bulkhead.releasePermission();
	}

	@Override
	public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
			@Nullable NixlException failure) {
		this.bulkhead.onComplete();
	}

	@Override
	public String toString() {
		return "TransferBulkhead(" + this.bulkhead.getName() + ")";
	}

	/**
	 * Builds a {@link TransferBulkhead}.
	 */
	public static final class Builder {

		private final BulkheadRegistry registry;

		private @Nullable Integer defaultMaxInFlight;

		private Builder(BulkheadRegistry registry) {
			this.registry = Objects.requireNonNull(registry, "registry");
		}

		/**
		 * Sets {@code maxConcurrentCalls} of a bulkhead that the registry does not
		 * configure (default: that of the registry's default configuration).
		 * @param defaultMaxInFlight the most transfers in flight, at least 1
		 * @return this builder
		 */
		public Builder defaultMaxInFlight(int defaultMaxInFlight) {
			if (defaultMaxInFlight < 1) {
				throw new IllegalArgumentException("defaultMaxInFlight must be at least 1, was " + defaultMaxInFlight);
			}
			this.defaultMaxInFlight = defaultMaxInFlight;
			return this;
		}

		/**
		 * Takes the {@value TransferBulkhead#NAME} bulkhead from the registry,
		 * registering it if it is not configured; add the result to the agent with
		 * {@link dev.nixl4j.NixlAgent#addTransferListener}.
		 * @return the listener
		 */
		public TransferBulkhead build() {
			Integer max = this.defaultMaxInFlight;
			BulkheadConfig defaults = this.registry.getDefaultConfig();
			return new TransferBulkhead(this.registry.find(NAME)
				.orElseGet(() -> this.registry.bulkhead(NAME,
						(max != null) ? BulkheadConfig.from(defaults).maxConcurrentCalls(max).build() : defaults)));
		}

	}

}
