package dev.nixl4j.metadata;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;

/**
 * A {@link MetadataExchange} that passes every call to another one, for wrappers that add
 * behaviour (retries, tracing) to some calls: override those. Closing it closes the
 * exchange it wraps.
 */
public abstract class ForwardingMetadataExchange implements MetadataExchange {

	private final MetadataExchange delegate;

	/**
	 * Wraps an exchange.
	 * @param delegate the exchange that does the work
	 */
	protected ForwardingMetadataExchange(MetadataExchange delegate) {
		this.delegate = Objects.requireNonNull(delegate, "delegate");
	}

	/**
	 * Returns the wrapped exchange.
	 * @return the exchange that does the work
	 */
	public MetadataExchange getDelegate() {
		return this.delegate;
	}

	@Override
	public void publish(String agentName, AgentMetadata metadata) {
		this.delegate.publish(agentName, metadata);
	}

	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		return this.delegate.fetch(agentName, timeout);
	}

	@Override
	public Watch load(NixlAgent agent, String remoteAgent, Duration timeout) {
		// the delegate's own load: some exchanges load differently from fetch-then-load
		return this.delegate.load(agent, remoteAgent, timeout);
	}

	@Override
	public void publishDocument(String agentName, String kind, byte[] document) {
		this.delegate.publishDocument(agentName, kind, document);
	}

	@Override
	public byte[] fetchDocument(String agentName, String kind, Duration timeout) {
		return this.delegate.fetchDocument(agentName, kind, timeout);
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

}
