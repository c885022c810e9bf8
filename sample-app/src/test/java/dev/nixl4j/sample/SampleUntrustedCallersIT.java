package dev.nixl4j.sample;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.PrefillRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What callers of the decode worker's public {@code POST /generate} cannot do, with real
 * worker processes on the embedded engine: take the prefill worker's whole cache with
 * long prompts and a long {@code decodeDelayMillis}, or fail other requests by taking
 * their request ids; what the workers' token still allows; and the prefill worker's
 * shares per request and per consumer. Both workers have the sample's 512 blocks (16
 * tokens each), in a model of 2 layers (128 KiB per block), so the shares are 128 blocks
 * per request and 384 per consumer.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SampleUntrustedCallersIT {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

	private static final int BLOCKS = 512;

	private static final String[] SHAPE = { "--nixl.agent.engine=embedded", "--nixl.kv.layers=2",
			"--nixl.kv.blocks=" + BLOCKS, "--sample.generate.max-concurrent-requests=8" };

	/** A prompt of the longest size a worker accepts: every block of the cache. */
	private static final String WHOLE_CACHE = "w".repeat(8192);

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	void startWorkers() {
		List<String> prefillArgs = new ArrayList<>(List.of(SHAPE));
		prefillArgs.add("--nixl.kv.lease-ttl=8s");
		this.prefill = SampleWorker.start("prefill-untrusted", "prefill", SampleWorker.freePort(), SampleWorker.TOKEN,
				prefillArgs.toArray(String[]::new));
		List<String> decodeArgs = new ArrayList<>(List.of(SHAPE));
		decodeArgs.add("--sample.decode.prefill-url=" + this.prefill.uri());
		this.decode = SampleWorker.start("decode-untrusted", "decode", SampleWorker.freePort(), SampleWorker.TOKEN,
				decodeArgs.toArray(String[]::new));
	}

	/** Every test starts with the whole cache free: no lease of another test is left. */
	@BeforeEach
	void everyBlockIsFree() {
		this.prefill.awaitMeter("sample.kv.blocks.free", BLOCKS);
	}

	@AfterAll
	void stopWorkers() {
		assertThat(SampleWorker.stopAll(this.decode, this.prefill)).isEmpty();
	}

	@Test
	void aFloodOfWholeCacheRequestsLeavesHonestRequestsVerified() throws Exception {
		Map<Integer, AtomicInteger> floodAnswers = new ConcurrentHashMap<>();
		List<String> unexpected = new ArrayList<>();
		AtomicBoolean stop = new AtomicBoolean();
		int honest = 0;
		try (ExecutorService attackers = Executors.newVirtualThreadPerTaskExecutor()) {
			List<Future<?>> running = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				// one attacker with the delay of attack (a), one without
				Map<String, Object> body = (i == 0) ? Map.of("prompt", WHOLE_CACHE, "decodeDelayMillis", 60000)
						: Map.of("prompt", WHOLE_CACHE);
				running.add(attackers.submit(() -> {
					while (!stop.get()) {
						HttpResponse<String> answer = this.decode.post("/generate", body, REQUEST_TIMEOUT);
						floodAnswers.computeIfAbsent(answer.statusCode(), (s) -> new AtomicInteger()).incrementAndGet();
						if (answer.statusCode() != 403 && answer.statusCode() != 429) {
							synchronized (unexpected) {
								unexpected.add(answer.statusCode() + ": " + answer.body());
							}
						}
						SampleWorker.pause(Duration.ofMillis(50));
					}
				}));
			}
			try {
				long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
				while (System.nanoTime() - end < 0) {
					assertVerified(generate("honest during the flood " + honest), "honest during the flood " + honest);
					honest++;
				}
			}
			finally {
				stop.set(true);
			}
			for (Future<?> attacker : running) {
				attacker.get(REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
			}
		}
		System.out.printf("flood of whole-cache requests for 10 s: %s; %d honest requests verified meanwhile%n",
				floodAnswers, honest);
		assertThat(unexpected).isEmpty();
		assertThat(floodAnswers).containsKeys(403, 429);
		assertThat(honest).isPositive();
		this.prefill.awaitMeter("sample.kv.blocks.free", BLOCKS);
	}

	@Test
	void aWholeCacheRequestIsRefusedBeforeAnythingIsTaken() {
		double free = this.prefill.meter("sample.kv.blocks.free");
		// without a token: the decode worker's share per caller, before the prefill
		// worker is asked
		HttpResponse<String> response = generate(WHOLE_CACHE);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(429);
		assertThat(response.headers().firstValue("Retry-After")).isEmpty();
		assertThat(problem(response).path("detail").asString()).contains("needs 512 KV blocks",
				"may hold at most 128 at once (sample.generate.max-blocks-per-caller)");
		// with the token: the prefill worker's share per request
		HttpResponse<String> withToken = this.decode.post("/generate",
				new GenerateRequest(null, WHOLE_CACHE, null, 8, null), REQUEST_TIMEOUT,
				SampleWorker.WORKER_AUTHORIZATION);
		assertThat(withToken.statusCode()).as(withToken.body()).isEqualTo(429);
		assertThat(problem(withToken).path("detail").asString()).contains("needs 512 KV blocks",
				"one request may lease at most 128 (sample.prefill.max-blocks-per-request)");
		assertThat(this.prefill.meter("sample.kv.blocks.free")).isEqualTo(free);
	}

	@Test
	void theTestKnobsAreRefusedWithoutTheWorkersToken() {
		double free = this.prefill.meter("sample.kv.blocks.free");
		Map<GenerateRequest, String> cases = Map.of(new GenerateRequest("chosen-id", "a prompt", null, 8, null),
				"field 'requestId'", new GenerateRequest(null, "a prompt", null, 8, 60000L),
				"field 'decodeDelayMillis'");
		cases.forEach((request, field) -> {
			for (String[] headers : List.of(new String[0],
					new String[] { "Authorization", "Bearer not-" + SampleWorker.TOKEN })) {
				HttpResponse<String> response = this.decode.post("/generate", request, REQUEST_TIMEOUT, headers);
				assertThat(response.statusCode()).as(response.body()).isEqualTo(403);
				JsonNode problem = problem(response);
				assertThat(problem.path("title").asString()).isEqualTo("Field reserved to the workers");
				assertThat(problem.path("detail").asString()).contains(field,
						"accepted only with the workers' bearer token");
			}
		});
		assertThat(this.prefill.meter("sample.kv.blocks.free")).isEqualTo(free);
	}

	@Test
	void withTheWorkersTokenTheTestKnobsStillWork() {
		String prompt = "a chosen id and a delay";
		HttpResponse<String> response = this.decode.post("/generate",
				new GenerateRequest("knobs-with-token", prompt, null, 8, 300L), REQUEST_TIMEOUT,
				SampleWorker.WORKER_AUTHORIZATION);
		GenerateResponse answer = assertVerified(response, prompt);
		assertThat(answer.requestId()).isEqualTo("knobs-with-token");
		assertThat(answer.timings().total()).isGreaterThanOrEqualTo(300);
	}

	@Test
	void generatedRequestIdsAreRandomNotACounter() {
		Set<String> ids = new HashSet<>();
		for (int i = 0; i < 6; i++) {
			String prompt = "an id is made " + i;
			GenerateResponse answer = assertVerified(generate(prompt), prompt);
			assertThat(answer.requestId()).matches("gen-[0-9a-f]{32}");
			// no agent name for a caller without the token
			assertThat(answer.decodeAgent()).isEqualTo("(hidden)");
			ids.add(answer.requestId());
		}
		String agent = this.decode.agentName();
		assertThat(ids).hasSize(6).allSatisfy((id) -> assertThat(id).doesNotContain(agent));
		// no two share even their first 64 bits, as a counter's would
		assertThat(ids.stream().map((id) -> id.substring(0, 20)).distinct()).hasSize(6);
	}

	@Test
	void guessedRequestIdsNeverFailHonestRequests() throws Exception {
		GenerateResponse first = assertVerified(generate("the first honest request"), "the first honest request");
		String agent = this.decode.agentName();
		List<Integer> burstAnswers = new ArrayList<>();
		List<HttpResponse<String>> honest = new ArrayList<>();
		try (ExecutorService attackers = Executors.newVirtualThreadPerTaskExecutor()) {
			// the ids the decode worker used to make (agent name and a counter), and the
			// one it made last
			Future<List<Integer>> burst = attackers.submit(() -> {
				List<Integer> statuses = new ArrayList<>();
				for (int n = 1; n <= 200; n++) {
					String guess = (n % 50 == 0) ? first.requestId() : "gen-" + agent + "-" + n;
					statuses.add(this.decode
						.post("/generate", new GenerateRequest(guess, "x".repeat(2048), null, 8, null), REQUEST_TIMEOUT)
						.statusCode());
				}
				return statuses;
			});
			for (int i = 0; i < 20; i++) {
				honest.add(generate("honest during the burst " + i));
			}
			burstAnswers.addAll(burst.get(REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS));
		}
		assertThat(burstAnswers).hasSize(200).containsOnly(403);
		for (int i = 0; i < honest.size(); i++) {
			assertVerified(honest.get(i), "honest during the burst " + i);
		}
	}

	@Test
	void aRequestOverItsShareIsRefusedWhileOthersGetBlocks() throws Exception {
		String atTheShare = "s".repeat(128 * 16);
		try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
			// holds its 128 blocks for 2 s between the prefill and the pull
			Future<HttpResponse<String>> held = clients
				.submit(() -> this.decode.post("/generate", new GenerateRequest(null, atTheShare, null, 8, 2000L),
						REQUEST_TIMEOUT, SampleWorker.WORKER_AUTHORIZATION));
			this.prefill.awaitMeter("sample.kv.blocks.free", BLOCKS - 128);

			// with the token, so that the prefill worker's share per request decides
			HttpResponse<String> over = this.decode.post("/generate",
					new GenerateRequest(null, atTheShare + "s", null, 8, null), REQUEST_TIMEOUT,
					SampleWorker.WORKER_AUTHORIZATION);
			assertThat(over.statusCode()).as(over.body()).isEqualTo(429);
			assertThat(problem(over).path("detail").asString()).contains("needs 129 KV blocks",
					"at most 128 (sample.prefill.max-blocks-per-request)");
			assertThat(this.prefill.meter("sample.kv.blocks.free")).isEqualTo(BLOCKS - 128);

			assertVerified(generate("another request meanwhile"), "another request meanwhile");
			assertVerified(held.get(REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS), atTheShare);
		}
	}

	@Test
	void aConsumerOverItsShareIsRefusedWhileAnotherConsumerGetsBlocks() {
		String share = "c".repeat(128 * 16);
		// three leases of 128 blocks that nobody reads: consumer-a's 384 blocks until
		// they expire (8 s)
		for (int i = 0; i < 3; i++) {
			assertThat(prefill(new PrefillRequest("share-a-" + i, share, null, "consumer-a")).statusCode())
				.isEqualTo(200);
		}
		HttpResponse<String> over = prefill(new PrefillRequest("share-a-3", "one block", null, "consumer-a"));
		assertThat(over.statusCode()).as(over.body()).isEqualTo(429);
		JsonNode problem = problem(over);
		assertThat(problem.path("title").asString()).isEqualTo("Consumer over its share");
		assertThat(problem.path("detail").asString()).contains("'consumer-a' holds 384 of the 384",
				"(sample.prefill.max-blocks-per-consumer)");
		assertThat(this.prefill.meter("sample.kv.blocks.free")).isEqualTo(BLOCKS - 384);

		assertThat(prefill(new PrefillRequest("share-b-0", "one block", null, "consumer-b")).statusCode())
			.isEqualTo(200);
		assertVerified(generate("through the decode worker"), "through the decode worker");

		// the shares end with the leases
		this.prefill.awaitMeter("sample.kv.blocks.free", BLOCKS);
		assertThat(prefill(new PrefillRequest("share-a-4", "one block", null, "consumer-a")).statusCode())
			.isEqualTo(200);
	}

	@Test
	void requestsBeyondTheConcurrencyLimitAreRefusedAtOnce() throws Exception {
		try (ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor()) {
			List<Future<HttpResponse<String>>> held = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				String prompt = "held " + i;
				held.add(clients
					.submit(() -> this.decode.post("/generate", new GenerateRequest(null, prompt, null, 8, 4000L),
							REQUEST_TIMEOUT, SampleWorker.WORKER_AUTHORIZATION)));
			}
			// each of the 8 has leased its one block and waits
			this.prefill.awaitMeter("sample.kv.blocks.free", BLOCKS - 8);

			HttpResponse<String> refused = generate("one too many");
			assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
			JsonNode problem = problem(refused);
			assertThat(problem.path("title").asString()).isEqualTo("Too many requests");
			assertThat(problem.path("detail").asString()).contains("serves 8 requests at once",
					"sample.generate.max-concurrent-requests");

			for (int i = 0; i < held.size(); i++) {
				assertVerified(held.get(i).get(REQUEST_TIMEOUT.toSeconds(), TimeUnit.SECONDS), "held " + i);
			}
		}
		assertVerified(generate("after the others"), "after the others");
	}

	/** A request as anybody may send it: no id, no delay, no token. */
	private HttpResponse<String> generate(String prompt) {
		return this.decode.post("/generate", new GenerateRequest(null, prompt, null, 8, null), REQUEST_TIMEOUT);
	}

	private HttpResponse<String> prefill(PrefillRequest request) {
		return this.prefill.post("/prefill", request, REQUEST_TIMEOUT, SampleWorker.WORKER_AUTHORIZATION);
	}

	private static JsonNode problem(HttpResponse<String> response) {
		return SampleWorker.JSON.readTree(response.body());
	}

	/** Asserts a 200 whose KV bytes are those of the prompt. */
	private static GenerateResponse assertVerified(HttpResponse<String> response, String prompt) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		GenerateResponse answer = SampleWorker.JSON.readValue(response.body(), GenerateResponse.class);
		assertThat(answer.verified()).isTrue();
		int[] tokens = ToyModel.tokens(prompt, null, Integer.MAX_VALUE);
		assertThat(answer.kvCrc32c()).isEqualTo(new ToyModel(answer.layout().toLayout()).expectedCrc32c(tokens));
		return answer;
	}

}
