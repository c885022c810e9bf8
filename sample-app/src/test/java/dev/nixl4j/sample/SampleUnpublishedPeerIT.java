package dev.nixl4j.sample;

import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A holder of the registry token whose agent never publishes its metadata sends the
 * prefill worker well-formed {@code done} messages, 100 ms apart, with real worker
 * processes on the embedded engine: the prefill worker cannot find it to answer, and
 * honest 512-token requests must go on being verified, none held up, while the health
 * details show the answers backing up and then dropped.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SampleUnpublishedPeerIT {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

	/**
	 * The slowest an honest request may be while the answers back up: such a request
	 * takes tens of milliseconds, and none of its steps waits for the unpublished peer.
	 */
	private static final Duration HONEST_BOUND = Duration.ofSeconds(3);

	/** The prefill worker's peer timeout: answers to the peer are dropped after it. */
	private static final Duration FETCH_TIMEOUT = Duration.ofSeconds(5);

	private static final String[] SHAPE = { "--nixl.agent.engine=embedded", "--nixl.kv.layers=2",
			"--nixl.kv.blocks=256" };

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	void startWorkers() {
		List<String> prefillArgs = new ArrayList<>(List.of(SHAPE));
		prefillArgs.add("--nixl.metadata.fetch-timeout=" + FETCH_TIMEOUT.toMillis() + "ms");
		this.prefill = SampleWorker.start("prefill-unpublished-peer", "prefill", SampleWorker.freePort(),
				SampleWorker.TOKEN, prefillArgs.toArray(String[]::new));
		List<String> decodeArgs = new ArrayList<>(List.of(SHAPE));
		decodeArgs.add("--sample.decode.prefill-url=" + this.prefill.uri());
		this.decode = SampleWorker.start("decode-unpublished-peer", "decode", SampleWorker.freePort(),
				SampleWorker.TOKEN, decodeArgs.toArray(String[]::new));
	}

	@AfterAll
	void stopWorkers() {
		assertThat(SampleWorker.stopAll(this.decode, this.prefill)).isEmpty();
	}

	@Test
	void doneMessagesFromAPeerThatNeverPublishedItsMetadataHoldUpNoHonestRequest() throws Exception {
		String prefillAgent = generate("before the peer").producerAgent();
		AtomicBoolean stop = new AtomicBoolean();
		AtomicLong sent = new AtomicLong();
		List<Duration> honest = new ArrayList<>();
		boolean backedUp = false;
		long mostPending = 0;
		try (NixlAgent peer = NixlAgent.create(
				AgentConfig.builder("unpublished-" + ProcessHandle.current().pid()).engine(Engine.EMBEDDED).build());
				HttpMetadataExchange registry = HttpMetadataExchange.builder(URI.create(this.prefill.uri() + "/nixl"))
					.token(SampleWorker.TOKEN)
					.build();
				ExecutorService sender = Executors.newSingleThreadExecutor()) {
			registry.load(peer, prefillAgent, Duration.ofSeconds(10));
			Future<?> sending = sender.submit(() -> {
				while (!stop.get()) {
					long lease = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
					peer.sendNotification(prefillAgent, ("nixl4j.kv/done:guess-" + sent.get() + ":" + lease + ":0")
						.getBytes(StandardCharsets.UTF_8));
					sent.incrementAndGet();
					SampleWorker.pause(Duration.ofMillis(100));
				}
			});
			try {
				// past the peer timeout, so that answers to the peer are given up
				// meanwhile
				long end = System.nanoTime() + FETCH_TIMEOUT.plusSeconds(5).toNanos();
				int i = 0;
				while (System.nanoTime() - end < 0) {
					long start = System.nanoTime();
					generate("honest while the peer sends " + i++ + " " + "x".repeat(480));
					honest.add(Duration.ofNanos(System.nanoTime() - start));
					JsonNode producer = kvProducer();
					mostPending = Math.max(mostPending, producer.path("pendingAnswers").asLong());
					backedUp |= producer.path("answers").asString("").startsWith("backed up");
				}
			}
			finally {
				stop.set(true);
			}
			sending.get(30, TimeUnit.SECONDS);
		}
		JsonNode health = this.prefill.getJson("/actuator/health");
		JsonNode producer = kvProducer();
		Duration slowest = honest.stream().max(Duration::compareTo).orElseThrow();
		System.out.printf(
				"unpublished peer: %d done messages 100 ms apart; %d honest 512-token requests verified meanwhile, the"
						+ " slowest in %d ms; answers waiting at most %d, backed up: %s; %s answers dropped%n",
				sent.get(), honest.size(), slowest.toMillis(), mostPending, backedUp,
				producer.path("droppedAnswers").asString());
		assertThat(honest).as("honest requests, every one verified").hasSizeGreaterThan(10);
		assertThat(slowest).as("the slowest honest request").isLessThan(HONEST_BOUND);
		assertThat(backedUp).as("the health details said the answers back up").isTrue();
		assertThat(mostPending).isPositive();
		assertThat(producer.path("droppedAnswers").asLong()).as("answers to the peer given up").isPositive();
		assertThat(this.prefill.meter("nixl.kv.answers.dropped")).isPositive();
		assertThat(health.path("status").asString()).isEqualTo("UP");
		for (int i = 0; i < 5; i++) {
			generate("honest after the peer " + i);
		}
	}

	/** The prefill worker's {@code kvProducer} health detail. */
	private JsonNode kvProducer() {
		HttpResponse<String> response = this.prefill.get("/actuator/health", this.prefill.authorization());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		JsonNode details = SampleWorker.JSON.readTree(response.body()).path("components").path("nixl").path("details");
		assertThat(details.has("kvProducer")).as(response.body()).isTrue();
		return details.path("kvProducer");
	}

	private GenerateResponse generate(String prompt) {
		HttpResponse<String> response = this.decode.post("/generate", new GenerateRequest(null, prompt, null, 8, null),
				REQUEST_TIMEOUT, SampleWorker.WORKER_AUTHORIZATION);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		GenerateResponse answer = SampleWorker.JSON.readValue(response.body(), GenerateResponse.class);
		int[] tokens = ToyModel.tokens(prompt, null, Integer.MAX_VALUE);
		assertThat(answer.kvCrc32c()).isEqualTo(new ToyModel(answer.layout().toLayout()).expectedCrc32c(tokens));
		assertThat(answer.verified()).isTrue();
		return answer;
	}

}
