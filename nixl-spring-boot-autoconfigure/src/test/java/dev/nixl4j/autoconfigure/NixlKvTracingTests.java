package dev.nixl4j.autoconfigure;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.nixl4j.autoconfigure.tracing.NixlKvTracingAutoConfiguration;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvObserver;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.LeaseOutcome;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.micrometer.tracing.ObservationKvObserver;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler.FirstMatchingCompositeObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.micrometer.tracing.propagation.Propagator;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Traces across the KV hand-off between two applications that each trace with
 * OpenTelemetry (its SDK, an in-memory exporter each, W3C propagation): the producer's
 * and the consumer's spans of one request share the trace and nest as documented, the
 * context crossing only in the lease's parameters and the done message. Without tracing
 * there is no observer and the parameters carry no context.
 */
class NixlKvTracingTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static ApplicationContextRunner runner(InMemoryMetadataExchange registry) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlKvTracingAutoConfiguration.class))
			.withBean("registry", MetadataExchange.class, () -> new NixlAutoConfigurationTests.NamedExchange(registry))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.kv.layers=2", "nixl.kv.blocks=8",
					"nixl.kv.kv-heads=2", "nixl.kv.head-dim=64");
	}

	@Test
	void theProducersAndTheConsumersSpansOfARequestShareATraceAndNest() throws Exception {
		InMemoryMetadataExchange registry = new InMemoryMetadataExchange();
		Tracing prefillTracing = Tracing.create();
		Tracing decodeTracing = Tracing.create();
		runner(registry).with(prefillTracing::beans)
			.run((prefill) -> runner(registry).with(decodeTracing::beans).run((decode) -> {
				assertThat(prefill).getBean(KvObserver.class).isInstanceOf(ObservationKvObserver.class);
				PagedKvCache producerCache = prefill.getBean(PagedKvCache.class);
				int[] blocks = producerCache.allocator().allocate(2);
				for (int region = 0; region < producerCache.layout().regionCount(); region++) {
					for (int block : blocks) {
						fill(producerCache.block(region, block), region * 100 + block);
					}
				}
				KvProducer producer = prefill.getBean(KvProducer.class);
				Observation request = Observation.start("prefill.request", prefillTracing.registry);
				KvLease lease;
				try (Observation.Scope scope = request.openScope()) {
					lease = producer.lease("req-traced", blocks);
				}
				request.stop();
				assertThat(lease.params().traceparent()).as("the lease's parameters carry its span").isNotEmpty();
				KvConsumer consumer = decode.getBean(KvConsumer.class);
				consumer.connect(producer.handle());
				PagedKvCache consumerCache = decode.getBean(PagedKvCache.class);
				int[] local = consumerCache.allocator().allocate(2);
				// the decode request's span is current, as in a web application
				Observation generate = Observation.start("decode.request", decodeTracing.registry);
				try (Observation.Scope scope = generate.openScope()) {
					consumer.pull(lease.params(), local, WAIT);
				}
				generate.stop();
				for (int region = 0; region < producerCache.layout().regionCount(); region++) {
					for (int i = 0; i < blocks.length; i++) {
						assertThat(
								consumerCache.block(region, local[i]).mismatch(producerCache.block(region, blocks[i])))
							.isEqualTo(-1);
					}
				}
				assertThat(lease.outcome().get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(LeaseOutcome.COMPLETED);

				Map<String, SpanData> producerSpans = prefillTracing.awaitSpans("prefill.request",
						ObservationKvObserver.LEASE, ObservationKvObserver.CONFIRM);
				Map<String, SpanData> consumerSpans = decodeTracing.awaitSpans(ObservationKvObserver.PULL,
						ObservationKvObserver.READ, ObservationKvObserver.CONFIRMATION);
				SpanData root = producerSpans.get("prefill.request");
				SpanData leaseSpan = producerSpans.get(ObservationKvObserver.LEASE);
				SpanData confirm = producerSpans.get(ObservationKvObserver.CONFIRM);
				SpanData pull = consumerSpans.get(ObservationKvObserver.PULL);
				String trace = root.getTraceId();
				assertThat(List.of(leaseSpan, confirm, pull, consumerSpans.get(ObservationKvObserver.READ),
						consumerSpans.get(ObservationKvObserver.CONFIRMATION)))
					.allSatisfy((span) -> assertThat(span.getTraceId()).as(span.getName()).isEqualTo(trace));
				assertThat(leaseSpan.getParentSpanId()).isEqualTo(root.getSpanId());
				assertThat(pull.getParentSpanId()).as("the pull continues the lease").isEqualTo(leaseSpan.getSpanId());
				assertThat(pull.getParentSpanContext().isRemote()).isTrue();
				assertThat(consumerSpans.get(ObservationKvObserver.READ).getParentSpanId()).isEqualTo(pull.getSpanId());
				assertThat(consumerSpans.get(ObservationKvObserver.CONFIRMATION).getParentSpanId())
					.isEqualTo(pull.getSpanId());
				assertThat(confirm.getParentSpanId()).as("the answer continues the pull").isEqualTo(pull.getSpanId());
				assertThat(leaseSpan.getAttributes().asMap().toString()).contains("nixl.kv.outcome=COMPLETED");
				assertThat(consumerSpans.get(ObservationKvObserver.CONFIRMATION).getAttributes().asMap().toString())
					.contains("nixl.kv.confirmation=HELD");
			}));
	}

	@Test
	void withoutTracingThereIsNoObserverAndTheParametersCarryNoContext() {
		InMemoryMetadataExchange registry = new InMemoryMetadataExchange();
		runner(registry).withBean(ObservationRegistry.class, ObservationRegistry::create).run((prefill) -> {
			assertThat(prefill).hasNotFailed().doesNotHaveBean(KvObserver.class);
			PagedKvCache cache = prefill.getBean(PagedKvCache.class);
			int[] blocks = cache.allocator().allocate(1);
			KvLease lease = prefill.getBean(KvProducer.class)
				.lease("req-plain", blocks, KvLease.options().ttl(Duration.ofMillis(100)));
			assertThat(lease.params().traceContext()).isNull();
		});
	}

	private static void fill(MemorySegment block, int seed) {
		for (long i = 0; i < block.byteSize(); i++) {
			block.set(ValueLayout.JAVA_BYTE, i, (byte) (seed * 31 + i * 7));
		}
	}

	/**
	 * One application's tracing: the OpenTelemetry SDK with an in-memory exporter,
	 * bridged to Micrometer as Spring Boot bridges it.
	 */
	private record Tracing(InMemorySpanExporter exporter, ObservationRegistry registry, Propagator propagator) {

		static Tracing create() {
			InMemorySpanExporter exporter = InMemorySpanExporter.create();
			OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
				.setTracerProvider(
						SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
				.setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
				.build();
			io.opentelemetry.api.trace.Tracer otelTracer = sdk.getTracer("nixl4j-test");
			OtelCurrentTraceContext current = new OtelCurrentTraceContext();
			OtelTracer tracer = new OtelTracer(otelTracer, current, (event) -> {
			}, new OtelBaggageManager(current, List.of(), List.of()));
			OtelPropagator propagator = new OtelPropagator(sdk.getPropagators(), otelTracer);
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig()
				.observationHandler(new FirstMatchingCompositeObservationHandler(
						new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
						new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
						new DefaultTracingObservationHandler(tracer)));
			return new Tracing(exporter, registry, propagator);
		}

		ApplicationContextRunner beans(ApplicationContextRunner runner) {
			return runner.withBean(ObservationRegistry.class, () -> this.registry)
				.withBean(Propagator.class, () -> this.propagator);
		}

		/**
		 * Waits for the spans of these names to end (the lease's ends after the answer).
		 */
		Map<String, SpanData> awaitSpans(String... names) {
			long deadline = System.nanoTime() + WAIT.toNanos();
			while (true) {
				Map<String, SpanData> spans = this.exporter.getFinishedSpanItems()
					.stream()
					.collect(Collectors.toMap(SpanData::getName, Function.identity(), (a, b) -> a));
				if (spans.keySet().containsAll(List.of(names)) || System.nanoTime() - deadline > 0) {
					assertThat(spans).containsKeys(names);
					return spans;
				}
				LockSupport.parkNanos(5_000_000);
			}
		}

	}

}
