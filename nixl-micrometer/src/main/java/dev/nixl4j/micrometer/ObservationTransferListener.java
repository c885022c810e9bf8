package dev.nixl4j.micrometer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import dev.nixl4j.NixlException;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Observes each transfer post of an agent: the observation starts on the posting thread
 * just before the engine sees the post (so an observation current on that thread, an HTTP
 * request for example, becomes its parent) and stops when the post ends or is refused.
 * Add it to the agent with {@link dev.nixl4j.NixlAgent#addTransferListener}.
 */
public class ObservationTransferListener implements TransferListener {

	private static final TransferObservationConvention DEFAULT_CONVENTION = new DefaultTransferObservationConvention();

	private final ObservationRegistry registry;

	private final String agentName;

	private final @Nullable TransferObservationConvention convention;

	private final Map<Transfer, Running> running = new ConcurrentHashMap<>();

	/**
	 * Creates the listener.
	 * @param registry where observations go
	 * @param agentName the agent the listener is added to
	 * @param convention a convention that replaces the default, or {@code null}
	 */
	public ObservationTransferListener(ObservationRegistry registry, String agentName,
			@Nullable TransferObservationConvention convention) {
		this.registry = registry;
		this.agentName = agentName;
		this.convention = convention;
	}

	@Override
	public void beforePost(Transfer transfer) {
		TransferObservationContext context = new TransferObservationContext(this.agentName, transfer);
		Observation observation = Observation
			.createNotStarted(this.convention, DEFAULT_CONVENTION, () -> context, this.registry)
			.start();
		this.running.put(transfer, new Running(observation, context));
	}

	@Override
	public void postRefused(Transfer transfer, RuntimeException reason) {
		Running post = this.running.remove(transfer);
		if (post != null) {
			post.context().setRefused(true);
			post.observation().error(reason);
			post.observation().stop();
		}
	}

	@Override
	public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
			@Nullable NixlException failure) {
		Running post = this.running.remove(transfer);
		if (post != null) {
			post.context().setOutcome(outcome);
			if (failure != null) {
				post.observation().error(failure);
			}
			post.observation().stop();
		}
	}

	private record Running(Observation observation, TransferObservationContext context) {
	}

}
