package dev.nixl4j.autoconfigure.resilience;

import java.time.Duration;
import java.util.function.Consumer;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.MetadataExchange;
import io.github.resilience4j.retry.Retry;

/**
 * A {@link MetadataExchange} whose fetch and load are retried; everything else goes straight to
 * the delegate, which is closed with this exchange. A fetch with a zero timeout asks whether the
 * metadata is there now (the HTTP registry answers GET requests that way) and is not retried.
 */
final class RetryingMetadataExchange implements MetadataExchange {

	private final MetadataExchange delegate;

	private final Retry retry;

	RetryingMetadataExchange(MetadataExchange delegate, Retry retry) {
		this.delegate = delegate;
		this.retry = retry;
	}

	@Override
	public void publish(String agentName, AgentMetadata metadata) {
		this.delegate.publish(agentName, metadata);
	}

	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		if (timeout.isZero()) {
			return this.delegate.fetch(agentName, timeout);
		}
		return this.retry.executeSupplier(() -> this.delegate.fetch(agentName, timeout));
	}

	@Override
	public Watch load(NixlAgent agent, String remoteAgent, Duration timeout) {
		// the delegate's own load: some exchanges load differently from fetch-then-load
		return this.retry.executeSupplier(() -> this.delegate.load(agent, remoteAgent, timeout));
	}

	@Override
	public void invalidate(String agentName) {
		this.delegate.invalidate(agentName);
	}

	@Override
	public Watch watch(String agentName, Consumer<String> onRemoved) {
		return this.delegate.watch(agentName, onRemoved);
	}

	@Override
	public void close() {
		this.delegate.close();
	}

	@Override
	public String toString() {
		return this.delegate + " (retried by '" + this.retry.getName() + "')";
	}

}
