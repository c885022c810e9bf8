package dev.nixl4j.resilience4j;

import java.time.Duration;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.ForwardingMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import io.github.resilience4j.retry.Retry;

/**
 * A {@link MetadataExchange} whose fetch and load are retried; everything else goes
 * straight to the delegate, which is closed with this exchange. A fetch or load with a
 * zero timeout asks whether the metadata is there now (the HTTP registry answers GET
 * requests that way; a KV session asks so about a producer it knows to be gone) and is
 * not retried.
 */
final class RetryingMetadataExchange extends ForwardingMetadataExchange {

	private final Retry retry;

	RetryingMetadataExchange(MetadataExchange delegate, Retry retry) {
		super(delegate);
		this.retry = retry;
	}

	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		if (timeout.isZero()) {
			return super.fetch(agentName, timeout);
		}
		return this.retry.executeSupplier(() -> super.fetch(agentName, timeout));
	}

	@Override
	public Watch load(NixlAgent agent, String remoteAgent, Duration timeout) {
		if (timeout.isZero()) {
			return super.load(agent, remoteAgent, timeout);
		}
		return this.retry.executeSupplier(() -> super.load(agent, remoteAgent, timeout));
	}

	@Override
	public String toString() {
		return getDelegate() + " (retried by '" + this.retry.getName() + "')";
	}

}
