package dev.nixl4j.resilience4j;

import dev.nixl4j.NixlException;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
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
 * with Resilience4j's {@link BulkheadFullException}, whose message names the bulkhead,
 * and moves nothing.
 *
 * <p>
 * The bulkhead is the registry's {@value #NAME} instance when it has one (with Spring
 * Boot: {@code resilience4j.bulkhead.instances.nixl-transfers}); otherwise it is created
 * from the registry's default configuration with {@code maxConcurrentCalls} set to the
 * default the caller gives (the starter gives {@code nixl.transfer.max-in-flight}). It is
 * an ordinary registry entry, so Resilience4j's {@code resilience4j.bulkhead.*} metrics
 * and events report it.
 */
public final class TransferBulkhead implements TransferListener {

	/** Name of the bulkhead bounding transfers in flight. */
	public static final String NAME = "nixl-transfers";

	private final Bulkhead bulkhead;

	/**
	 * Creates the listener, registering the bulkhead if it is not configured; add it to
	 * the agent with {@link dev.nixl4j.NixlAgent#addTransferListener}.
	 * @param registry the registry
	 * @param defaultMaxInFlight {@code maxConcurrentCalls} of a bulkhead that is not
	 * configured
	 */
	public TransferBulkhead(BulkheadRegistry registry, int defaultMaxInFlight) {
		this.bulkhead = registry.find(NAME)
			.orElseGet(() -> registry.bulkhead(NAME,
					BulkheadConfig.from(registry.getDefaultConfig()).maxConcurrentCalls(defaultMaxInFlight).build()));
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
	 * @throws BulkheadFullException when no permit is free within the bulkhead's wait
	 */
	@Override
	public void beforePost(Transfer transfer) {
		this.bulkhead.acquirePermission();
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

}
