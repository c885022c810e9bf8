package dev.nixl4j.micrometer.tracing;

import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvObserver;
import dev.nixl4j.kv.KvTraceContext;
import dev.nixl4j.kv.KvTransferParams;
import dev.nixl4j.kv.LeaseConfirmation;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.Propagator.Getter;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.handler.TracingObservationHandler;
import io.micrometer.tracing.propagation.Propagator;
import org.jspecify.annotations.Nullable;

/**
 * A {@link KvObserver} that makes each step of the KV protocol a Micrometer
 * {@link Observation} (a span when the application traces) and carries the spans' W3C
 * context with the application's {@link Propagator}:
 * <ul>
 * <li>{@value #LEASE}: the producer's lease, from taken to ended (tag
 * {@code nixl.kv.outcome}), a child of what was current when it was taken (the prefill
 * request, say); its context goes into the lease's parameters;</li>
 * <li>{@value #PULL}: the consumer's pull, a child of the lease's context from the
 * parameters (of the current span when they carry none); its context goes into the done
 * message;</li>
 * <li>{@value #READ} and {@value #CONFIRMATION}: the pull's READ and its wait for the
 * producer's answer (tag {@code nixl.kv.confirmation}), children of the pull;</li>
 * <li>{@value #CONFIRM}: the producer deciding and sending its answer, a child of the
 * pull's context from the done message.</li>
 * </ul>
 * Request and lease ids are high-cardinality key values (spans only, never meter tags).
 */
public final class ObservationKvObserver implements KvObserver {

	/** The producer's lease. */
	public static final String LEASE = "nixl.kv.lease";

	/** The producer's answer to a done message. */
	public static final String CONFIRM = "nixl.kv.confirm";

	/** The consumer's pull. */
	public static final String PULL = "nixl.kv.pull";

	/** The consumer's READ. */
	public static final String READ = "nixl.kv.read";

	/** The consumer's wait for the producer's answer. */
	public static final String CONFIRMATION = "nixl.kv.confirmation";

	private static final String TRACEPARENT = "traceparent";

	private static final String TRACESTATE = "tracestate";

	private static final Getter<KvTraceContext> CONTEXT_GETTER = (carrier, key) -> switch (key) {
		case TRACEPARENT -> carrier.traceparent();
		case TRACESTATE -> carrier.tracestate().isEmpty() ? null : carrier.tracestate();
		default -> null;
	};

	private static final Getter<KvTransferParams> PARAMS_GETTER = (carrier, key) -> switch (key) {
		case TRACEPARENT -> carrier.traceparent().isEmpty() ? null : carrier.traceparent();
		case TRACESTATE -> carrier.tracestate().isEmpty() ? null : carrier.tracestate();
		default -> null;
	};

	private final ObservationRegistry registry;

	private final Propagator propagator;

	/**
	 * Creates the observer.
	 * @param registry where the observations go
	 * @param propagator writes the spans' context (W3C {@code traceparent} and
	 * {@code tracestate}); a propagator that writes no {@code traceparent} carries none
	 */
	public ObservationKvObserver(ObservationRegistry registry, Propagator propagator) {
		this.registry = Objects.requireNonNull(registry, "registry");
		this.propagator = Objects.requireNonNull(propagator, "propagator");
	}

	@Override
	public @Nullable KvTraceContext leaseTaken(KvLease lease) {
		Observation observation = Observation.createNotStarted(LEASE, this.registry)
			.lowCardinalityKeyValue("nixl.kv.role", "producer")
			.highCardinalityKeyValue("nixl.kv.request", lease.requestId())
			.highCardinalityKeyValue("nixl.kv.lease", Long.toString(lease.id()))
			.start();
		lease.outcome().whenComplete((outcome, failure) -> {
			observation.lowCardinalityKeyValue("nixl.kv.outcome", (outcome != null) ? outcome.name() : "UNKNOWN");
			if (failure != null) {
				observation.error(failure);
			}
			observation.stop();
		});
		return context(observation);
	}

	@Override
	public Step confirming(String consumer, String requestId, long leaseId, @Nullable KvTraceContext pull) {
		Observation observation;
		if (pull != null) {
			ReceiverContext<KvTraceContext> context = new ReceiverContext<>(CONTEXT_GETTER, Kind.CONSUMER);
			context.setCarrier(pull);
			context.setRemoteServiceName(consumer);
			observation = Observation.createNotStarted(CONFIRM, () -> context, this.registry);
		}
		else {
			observation = Observation.createNotStarted(CONFIRM, this.registry);
		}
		observation.lowCardinalityKeyValue("nixl.kv.role", "producer")
			.highCardinalityKeyValue("nixl.kv.consumer", consumer)
			.highCardinalityKeyValue("nixl.kv.request", requestId)
			.highCardinalityKeyValue("nixl.kv.lease", Long.toString(leaseId))
			.start();
		return new ObservedStep(observation);
	}

	@Override
	public Pull pullStarted(KvTransferParams params) {
		ReceiverContext<KvTransferParams> context = new ReceiverContext<>(PARAMS_GETTER, Kind.CONSUMER);
		context.setCarrier(params);
		context.setRemoteServiceName(params.producerAgent());
		Observation observation = Observation.createNotStarted(PULL, () -> context, this.registry)
			.lowCardinalityKeyValue("nixl.kv.role", "consumer")
			.highCardinalityKeyValue("nixl.kv.producer", params.producerAgent())
			.highCardinalityKeyValue("nixl.kv.request", params.requestId())
			.highCardinalityKeyValue("nixl.kv.lease", Long.toString(params.leaseId()))
			.highCardinalityKeyValue("nixl.kv.blocks", Integer.toString(params.blockIds().size()))
			.start();
		return new ObservedPull(observation, context(observation));
	}

	/**
	 * The W3C context of an observation's span, as the propagator writes it.
	 */
	private @Nullable KvTraceContext context(Observation observation) {
		TracingObservationHandler.TracingContext tracing = observation.getContext()
			.get(TracingObservationHandler.TracingContext.class);
		Span span = (tracing != null) ? tracing.getSpan() : null;
		if (span == null) {
			return null;
		}
		Map<String, String> carrier = new HashMap<>(4);
		this.propagator.inject(span.context(), carrier, (map, key, value) -> {
			if (map != null) {
				map.put(key, value);
			}
		});
		return KvTraceContext.parse(carrier.get(TRACEPARENT), carrier.get(TRACESTATE));
	}

	private static class ObservedStep implements Step {

		final Observation observation;

		ObservedStep(Observation observation) {
			this.observation = observation;
		}

		@Override
		public void end(@Nullable LeaseConfirmation confirmation, @Nullable Throwable failure) {
			if (confirmation != null) {
				this.observation.lowCardinalityKeyValue(KeyValue.of("nixl.kv.confirmation", confirmation.name()));
			}
			if (failure != null) {
				this.observation.error(failure);
			}
			this.observation.stop();
		}

	}

	private final class ObservedPull extends ObservedStep implements Pull {

		private final @Nullable KvTraceContext context;

		ObservedPull(Observation observation, @Nullable KvTraceContext context) {
			super(observation);
			this.context = context;
		}

		@Override
		public @Nullable KvTraceContext traceContext() {
			return this.context;
		}

		@Override
		public Step read() {
			return child(READ);
		}

		@Override
		public Step confirmation() {
			return child(CONFIRMATION);
		}

		/**
		 * Starts a step of the pull as its child. The pull is made current while the step
		 * starts: a tracer takes the current span (the caller's request, say) over the
		 * parent observation's when they differ.
		 */
		private Step child(String name) {
			Observation child = Observation.createNotStarted(name, ObservationKvObserver.this.registry)
				.parentObservation(this.observation)
				.lowCardinalityKeyValue("nixl.kv.role", "consumer");
			try (Observation.Scope scope = this.observation.openScope()) {
				child.start();
			}
			return new ObservedStep(child);
		}

	}

}
