package dev.nixl4j.micrometer;

import java.time.Duration;
import java.util.function.Supplier;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.micrometer.MetadataObservationContext.Operation;
import dev.nixl4j.metadata.ForwardingMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * A {@link MetadataExchange} that observes the calls that wait on peers:
 * {@link #fetch(String, Duration) fetch} and {@link #load(NixlAgent, String, Duration)
 * load}. Publishing, withdrawing and watching are passed through unobserved. Closing it
 * closes the exchange it wraps.
 */
public class ObservedMetadataExchange extends ForwardingMetadataExchange {

	private static final MetadataObservationConvention DEFAULT_CONVENTION = new DefaultMetadataObservationConvention();

	private final ObservationRegistry registry;

	private final @Nullable MetadataObservationConvention convention;

	/**
	 * Wraps an exchange.
	 * @param delegate the exchange that does the work
	 * @param registry where observations go
	 * @param convention a convention that replaces the default, or {@code null}
	 */
	public ObservedMetadataExchange(MetadataExchange delegate, ObservationRegistry registry,
			@Nullable MetadataObservationConvention convention) {
		super(delegate);
		this.registry = registry;
		this.convention = convention;
	}

	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		return observe(Operation.FETCH, agentName, () -> super.fetch(agentName, timeout));
	}

	@Override
	public Watch load(NixlAgent agent, String remoteAgent, Duration timeout) {
		return observe(Operation.LOAD, remoteAgent, () -> super.load(agent, remoteAgent, timeout));
	}

	private <T> T observe(Operation operation, String remoteAgent, Supplier<T> call) {
		MetadataObservationContext context = new MetadataObservationContext(operation, remoteAgent);
		return Observation.createNotStarted(this.convention, DEFAULT_CONVENTION, () -> context, this.registry)
			.observe(call);
	}

	@Override
	public String toString() {
		return "ObservedMetadataExchange[" + getDelegate() + "]";
	}

}
