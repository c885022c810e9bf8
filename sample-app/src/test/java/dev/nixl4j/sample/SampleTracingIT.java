package dev.nixl4j.sample;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

import com.sun.net.httpserver.HttpServer;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.resource.v1.Resource;
import io.opentelemetry.proto.trace.v1.ResourceSpans;
import io.opentelemetry.proto.trace.v1.ScopeSpans;
import io.opentelemetry.proto.trace.v1.Span;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One request's trace across both workers: the sample's prefill and decode workers, each
 * a JVM from the packaged jar with tracing turned on, export their spans over OTLP/HTTP
 * to a receiver in this test; for every verified request the producer's spans
 * ({@code nixl.kv.lease}, {@code nixl.kv.confirm}) and the consumer's
 * ({@code nixl.kv.pull}, {@code nixl.kv.read}, {@code nixl.kv.confirmation}) share one
 * trace and nest as docs/operations.md says ("Tracing a request").
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SampleTracingIT {

	private static final int REQUESTS = 5;

	private static final Duration WAIT = Duration.ofSeconds(60);

	private final Queue<ReceivedSpan> spans = new ConcurrentLinkedQueue<>();

	private HttpServer receiver;

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	void start() throws IOException {
		this.receiver = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
		this.receiver.setExecutor(Executors.newFixedThreadPool(2));
		this.receiver.createContext("/v1/traces", (exchange) -> {
			try (InputStream body = exchange.getRequestBody()) {
				receive(ExportTraceServiceRequest.parseFrom(body.readNBytes(16 * 1024 * 1024)));
				byte[] answer = ExportTraceServiceResponse.getDefaultInstance().toByteArray();
				exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
				exchange.sendResponseHeaders(200, (answer.length == 0) ? -1 : answer.length);
				exchange.getResponseBody().write(answer);
			}
			catch (IOException ex) {
				exchange.sendResponseHeaders(400, -1);
			}
			finally {
				exchange.close();
			}
		});
		this.receiver.start();
		String endpoint = "http://127.0.0.1:" + this.receiver.getAddress().getPort() + "/v1/traces";
		String[] tracing = { "--management.tracing.export.enabled=true",
				"--management.tracing.sampling.probability=1.0",
				"--management.opentelemetry.tracing.export.otlp.endpoint=" + endpoint,
				"--management.opentelemetry.tracing.export.schedule-delay=200ms" };
		this.prefill = SampleWorker.start("prefill-traced", "prefill", SampleWorker.freePort(), SampleWorker.TOKEN,
				with(tracing, "--nixl.agent.engine=embedded", "--spring.application.name=prefill",
						// the decode worker's agent is named after its application,
						// decode-*
						"--nixl.metadata.http.registry.clients.decode.agent-name-prefixes=decode-"));
		this.decode = SampleWorker.start("decode-traced", "decode", SampleWorker.freePort(), SampleWorker.TOKEN,
				with(tracing, "--nixl.agent.engine=embedded", "--spring.application.name=decode",
						"--sample.decode.prefill-url=" + this.prefill.uri()));
	}

	@AfterAll
	void stop() {
		List<String> problems = SampleWorker.stopAll(this.decode, this.prefill);
		if (this.receiver != null) {
			this.receiver.stop(0);
		}
		assertThat(problems).isEmpty();
	}

	private static String[] with(String[] first, String... more) {
		List<String> all = new ArrayList<>(List.of(first));
		all.addAll(List.of(more));
		return all.toArray(String[]::new);
	}

	private void receive(ExportTraceServiceRequest request) {
		HexFormat hex = HexFormat.of();
		for (ResourceSpans resourceSpans : request.getResourceSpansList()) {
			String service = attribute(resourceSpans.getResource(), "service.name");
			for (ScopeSpans scopeSpans : resourceSpans.getScopeSpansList()) {
				for (Span span : scopeSpans.getSpansList()) {
					Map<String, String> attributes = span.getAttributesList()
						.stream()
						.collect(Collectors.toMap(KeyValue::getKey, (kv) -> kv.getValue().getStringValue(),
								(a, b) -> a));
					this.spans
						.add(new ReceivedSpan(service, span.getName(), hex.formatHex(span.getTraceId().toByteArray()),
								hex.formatHex(span.getSpanId().toByteArray()),
								hex.formatHex(span.getParentSpanId().toByteArray()), attributes,
								span.getStartTimeUnixNano(),
								(span.getEndTimeUnixNano() - span.getStartTimeUnixNano()) / 1000));
				}
			}
		}
	}

	private static String attribute(Resource resource, String key) {
		return resource.getAttributesList()
			.stream()
			.filter((kv) -> kv.getKey().equals(key))
			.map((kv) -> kv.getValue().getStringValue())
			.findFirst()
			.orElse("");
	}

	@Test
	void eachRequestsProducerAndConsumerSpansShareATraceAndNest() {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < REQUESTS; i++) {
			String id = "traced-" + i;
			List<Integer> tokens = new ArrayList<>();
			for (int t = 0; t < 40 + i; t++) {
				tokens.add((t * 7919 + i) % ToyModel.VOCABULARY);
			}
			HttpResponse<String> response = this.decode.post("/generate",
					new GenerateRequest(id, null, tokens, 4, null), WAIT, SampleWorker.WORKER_AUTHORIZATION);
			assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
			GenerateResponse answer = SampleWorker.JSON.readValue(response.body(), GenerateResponse.class);
			assertThat(answer.requestId()).isEqualTo(id);
			ids.add(id);
		}

		for (String id : ids) {
			Map<String, ReceivedSpan> request = awaitSpans(id);
			ReceivedSpan lease = request.get("nixl.kv.lease");
			ReceivedSpan confirm = request.get("nixl.kv.confirm");
			ReceivedSpan pull = request.get("nixl.kv.pull");
			ReceivedSpan read = request.get("nixl.kv.read");
			ReceivedSpan confirmation = request.get("nixl.kv.confirmation");
			assertThat(List.of(lease, confirm)).extracting(ReceivedSpan::service).containsOnly("prefill");
			assertThat(List.of(pull, read, confirmation)).extracting(ReceivedSpan::service).containsOnly("decode");
			assertThat(request.values()).as(id).extracting(ReceivedSpan::traceId).containsOnly(lease.traceId());
			assertThat(pull.parentId()).as("%s: the pull continues the lease", id).isEqualTo(lease.spanId());
			assertThat(read.parentId()).as(id).isEqualTo(pull.spanId());
			assertThat(confirmation.parentId()).as(id).isEqualTo(pull.spanId());
			assertThat(confirm.parentId()).as("%s: the answer continues the pull", id).isEqualTo(pull.spanId());
			assertThat(lease.attributes()).containsEntry("nixl.kv.outcome", "COMPLETED");
			assertThat(confirmation.attributes()).containsEntry("nixl.kv.confirmation", "HELD");
			if (id.equals(ids.get(ids.size() - 1))) {
				// the last request: the first one's spans include the workers' warm-up
				System.out.println("One request's trace (" + id + ", trace " + lease.traceId()
						+ "), start after the lease's start and duration:");
				request.values()
					.stream()
					.sorted(Comparator.comparingLong(ReceivedSpan::startNanos))
					.forEach((span) -> System.out.printf("  %-8s %-22s +%7d us %8d us  span %s parent %s%n",
							span.service(), span.name(), (span.startNanos() - lease.startNanos()) / 1000, span.micros(),
							span.spanId(), span.parentId()));
			}
		}
	}

	/** Waits until the five KV spans of a request arrived. */
	private Map<String, ReceivedSpan> awaitSpans(String requestId) {
		List<String> names = List.of("nixl.kv.lease", "nixl.kv.confirm", "nixl.kv.pull", "nixl.kv.read",
				"nixl.kv.confirmation");
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (true) {
			Map<String, ReceivedSpan> byName = this.spans.stream()
				.filter((span) -> requestId.equals(span.attributes().get("nixl.kv.request")))
				.collect(Collectors.toMap(ReceivedSpan::name, (span) -> span, (a, b) -> a));
			// the consumer's read and confirmation steps carry no request id: found by
			// their parent
			ReceivedSpan pull = byName.get("nixl.kv.pull");
			if (pull != null) {
				this.spans.stream()
					.filter((span) -> span.parentId().equals(pull.spanId()) && span.service().equals("decode"))
					.forEach((span) -> byName.putIfAbsent(span.name(), span));
			}
			if (byName.keySet().containsAll(names) || System.nanoTime() - deadline > 0) {
				assertThat(byName).as("the spans of request %s among %s", requestId, this.spans)
					.containsKeys(names.toArray(String[]::new));
				return byName;
			}
			SampleWorker.pause(Duration.ofMillis(100));
		}
	}

	private record ReceivedSpan(String service, String name, String traceId, String spanId, String parentId,
			Map<String, String> attributes, long startNanos, long micros) {
	}

}
