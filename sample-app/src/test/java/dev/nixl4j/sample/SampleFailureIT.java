package dev.nixl4j.sample;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.PrefillRequest;
import dev.nixl4j.sample.load.LoadGenerator;
import dev.nixl4j.sample.load.LoadGenerator.RequestResult;
import dev.nixl4j.sample.load.LoadOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's failure paths, with real worker processes on the embedded engine: a wrong
 * token, a decode worker whose model shape differs, a decode worker whose cache is full,
 * a token holder trying to delete the workers' registry entries, a lease that expires
 * before the read, a prefill worker that dies in the middle of a run and comes back, and
 * one that stops gracefully while a decode worker still has to read its leased blocks.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SampleFailureIT {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

	private static final String EMBEDDED = "--nixl.agent.engine=embedded";

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	void startWorkers() {
		// Leases of 2 s: long enough for a pull here, short enough to expire in a test.
		this.prefill = SampleWorker.start("prefill-failures", "prefill", SampleWorker.freePort(), SampleWorker.TOKEN,
				EMBEDDED, "--nixl.kv.lease-ttl=2s");
		this.decode = startDecode("decode-failures", this.prefill, SampleWorker.TOKEN);
	}

	@AfterAll
	void stopWorkers() {
		if (this.decode != null) {
			this.decode.close();
		}
		if (this.prefill != null) {
			this.prefill.close();
		}
	}

	private static SampleWorker startDecode(String name, SampleWorker prefill, String token, String... more) {
		List<String> args = new ArrayList<>(List.of(EMBEDDED, "--sample.decode.prefill-url=" + prefill.uri()));
		args.addAll(List.of(more));
		return SampleWorker.start(name, "decode", SampleWorker.freePort(), token, args.toArray(String[]::new));
	}

	@Test
	void aWrongTokenIsRefusedEverywhere() {
		PrefillRequest request = new PrefillRequest("token-check", "some prompt", null);
		assertThat(this.prefill.post("/prefill", request, REQUEST_TIMEOUT).statusCode()).isEqualTo(401);
		HttpResponse<String> wrong = this.prefill.post("/prefill", request, REQUEST_TIMEOUT, "Authorization",
				"Bearer not-the-token-0123456789");
		assertThat(wrong.statusCode()).isEqualTo(401);
		assertThat(wrong.body()).isEmpty();
		assertThat(this.prefill.get("/nixl/agents/any/metadata").statusCode()).isEqualTo(401);

		try (SampleWorker misconfigured = startDecode("decode-wrong-token", this.prefill, "not-the-token-0123456789")) {
			HttpResponse<String> response = misconfigured.post("/generate",
					new GenerateRequest(null, "a prompt", null, null, null), REQUEST_TIMEOUT);
			assertThat(response.statusCode()).as(response.body()).isEqualTo(502);
			JsonNode problem = SampleWorker.JSON.readTree(response.body());
			assertThat(problem.path("title").asString()).isEqualTo("Prefill worker refused the token");
			assertThat(problem.path("detail").asString()).contains("(401)",
					"the prefill worker must take this worker's sample.token");
			assertThat(misconfigured.log()).doesNotContain("not-the-token-0123456789");
		}
	}

	@Test
	void aDecodeWorkerWithAnotherModelShapeIsRefusedBeforeAnythingIsReadAndGivesTheLeaseBack() {
		double free = this.prefill.meter("sample.kv.blocks.free");
		try (SampleWorker other = startDecode("decode-16-layers", this.prefill, SampleWorker.TOKEN,
				"--nixl.kv.layers=16")) {
			HttpResponse<String> response = other.post("/generate",
					new GenerateRequest(null, "a prompt", null, null, null), REQUEST_TIMEOUT);
			assertThat(response.statusCode()).as(response.body()).isEqualTo(409);
			JsonNode problem = SampleWorker.JSON.readTree(response.body());
			assertThat(problem.path("title").asString()).isEqualTo("KV layout mismatch");
			assertThat(problem.path("detail").asString()).contains("serves KV cache kv-layout/1;layers=32;",
					"but this consumer's is kv-layout/1;layers=16;", "nixl.kv.* and nixl.kv.model-fingerprint");
		}
		this.prefill.awaitMeter("sample.kv.blocks.free", free);
	}

	@Test
	void anExpiredLeaseFailsTheRequestAndItsBlocksServeTheNextOne() {
		double expired = this.prefill.meter("sample.leases", "outcome:EXPIRED");
		double completed = this.prefill.meter("sample.leases", "outcome:COMPLETED");
		// A waits 6 s in the decode worker's queue: its lease of 2 s runs out meanwhile.
		CompletableFuture<HttpResponse<String>> slow = CompletableFuture.supplyAsync(() -> this.decode.post("/generate",
				new GenerateRequest("slow-request", "a".repeat(64), null, null, 6000L), REQUEST_TIMEOUT,
				SampleWorker.WORKER_AUTHORIZATION));
		this.prefill.awaitMeter("sample.leases", expired + 1, "outcome:EXPIRED");

		// B takes the blocks A's lease gave back and overwrites them with its own values.
		String prompt = "b".repeat(64);
		HttpResponse<String> fast = this.decode.post("/generate",
				new GenerateRequest("fast-request", prompt, null, 8, null), REQUEST_TIMEOUT,
				SampleWorker.WORKER_AUTHORIZATION);
		assertThat(fast.statusCode()).as(fast.body()).isEqualTo(200);
		GenerateResponse answer = SampleWorker.JSON.readValue(fast.body(), GenerateResponse.class);
		KvCacheLayout layout = answer.layout().toLayout();
		assertThat(answer.kvCrc32c()).isEqualTo(new ToyModel(layout).expectedCrc32c(ToyModel.tokens(prompt, null, 64)));

		HttpResponse<String> late = slow.join();
		assertThat(late.statusCode()).as(late.body()).isEqualTo(410);
		JsonNode problem = SampleWorker.JSON.readTree(late.body());
		assertThat(problem.path("title").asString()).isEqualTo("Lease lost");
		assertThat(problem.path("detail").asString())
			.contains("request 'slow-request'", "the prefill worker did not confirm its lease",
					"the data was discarded", "lease time 2000 ms")
			.containsPattern("\\((EXPIRED|UNKNOWN)\\)");
		assertThat(late.body()).doesNotContain("\"text\"");
		this.prefill.awaitMeter("sample.leases", completed + 1, "outcome:COMPLETED");
		assertThat(this.prefill.meter("sample.leases", "outcome:EXPIRED")).isEqualTo(expired + 1);
		assertThat(this.decode.meter("sample.generate", "status:410")).isPositive();
	}

	@Test
	void aDecodeWorkerWhoseCacheIsFullGivesTheLeaseBackAtOnce() {
		try (SampleWorker small = startDecode("decode-small-cache", this.prefill, SampleWorker.TOKEN,
				"--nixl.kv.blocks=2")) {
			double free = this.prefill.meter("sample.kv.blocks.free");
			double released = this.prefill.meter("sample.leases", "outcome:RELEASED");
			// 80 tokens: 5 blocks, more than the decode worker's 2
			HttpResponse<String> response = small.post("/generate",
					new GenerateRequest("no-room", "d".repeat(80), null, 8, null), REQUEST_TIMEOUT,
					SampleWorker.WORKER_AUTHORIZATION);
			long answered = System.nanoTime();

			assertThat(response.statusCode()).as(response.body()).isEqualTo(503);
			JsonNode problem = SampleWorker.JSON.readTree(response.body());
			assertThat(problem.path("title").asString()).isEqualTo("KV cache full");
			assertThat(problem.path("detail").asString()).contains("request 'no-room'",
					"lease on the prefill worker was given back");
			this.prefill.awaitMeter("sample.leases", released + 1, "outcome:RELEASED");
			this.prefill.awaitMeter("sample.kv.blocks.free", free);
			System.out.printf("cache-full decode worker: prefill's blocks free again %.0f ms after the 503%n",
					(System.nanoTime() - answered) / 1e6);
		}
	}

	@Test
	void anotherTokenHolderCannotDeleteTheWorkersRegistryEntriesAndRequestsGoOn() throws Exception {
		// with the token: the answer names both agents
		HttpResponse<String> before = this.decode.post("/generate",
				new GenerateRequest(null, "before the deletes", null, 8, null), REQUEST_TIMEOUT,
				SampleWorker.WORKER_AUTHORIZATION);
		assertThat(before.statusCode()).as(before.body()).isEqualTo(200);
		GenerateResponse answer = SampleWorker.JSON.readValue(before.body(), GenerateResponse.class);
		List<String> agents = List.of(answer.decodeAgent(), answer.producerAgent());

		try (HttpClient http = HttpClient.newHttpClient()) {
			for (String agent : agents) {
				// the token alone does not make its holder the owner of an entry
				assertThat(registry(http, "DELETE", agent)).as("DELETE of the entry of '%s'", agent).isEqualTo(403);
				assertThat(registry(http, "GET", agent)).as("entry of '%s' after the DELETE", agent).isEqualTo(200);
			}
		}
		HttpResponse<String> after = this.decode.post("/generate",
				new GenerateRequest(null, "after the deletes", null, 8, null), REQUEST_TIMEOUT);
		assertThat(after.statusCode()).as(after.body()).isEqualTo(200);
		assertThat(this.decode.getJson("/actuator/health").path("status").asString()).isEqualTo("UP");
		assertThat(this.prefill.getJson("/actuator/health").path("status").asString()).isEqualTo("UP");
	}

	/**
	 * A request to the prefill worker's registry about an agent's entry; returns the
	 * status.
	 */
	private int registry(HttpClient http, String method, String agent) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(this.prefill.uri().resolve("/nixl/agents/" + agent + "/metadata"))
			.timeout(Duration.ofSeconds(10))
			.header("Authorization", "Bearer " + SampleWorker.TOKEN)
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build();
		return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	@Test
	void aPrefillWorkerThatDiesFailsRequestsFastAndTheyRecoverWhenItIsBack() throws Exception {
		int port = SampleWorker.freePort();
		SampleWorker first = SampleWorker.start("prefill-dies", "prefill", port, SampleWorker.TOKEN, EMBEDDED);
		SampleWorker second = null;
		try (SampleWorker consumer = startDecode("decode-survives", first, SampleWorker.TOKEN)) {
			// with the token: the answers name the prefill worker's agent
			LoadGenerator client = new LoadGenerator(LoadOptions.parse(new String[] { "--url",
					consumer.uri().toString(), "--prompt-tokens", "48", "--max-tokens", "8", "--timeout", "20" }),
					SampleWorker.TOKEN);
			List<Phased> results = Collections.synchronizedList(new ArrayList<>());
			AtomicReference<String> phase = new AtomicReference<>("up");
			AtomicBoolean running = new AtomicBoolean(true);
			Thread load = Thread.ofPlatform().name("sample-load").start(() -> {
				for (int i = 0; running.get(); i++) {
					RequestResult result = client.send(i);
					results.add(new Phased(phase.get(), result));
				}
			});
			try {
				awaitResults(results, (r) -> r.phase().equals("up") && r.result().ok(), 3);
				String firstAgent = firstAnswer(results, "up").producerAgent();

				first.kill();
				phase.set("down");
				awaitResults(results, (r) -> r.phase().equals("down") && !r.result().ok(), 6);
				awaitResults(results, (r) -> r.phase().equals("down")
						&& String.valueOf(r.result().error()).contains("circuit breaker 'prefill' is open"), 1);

				second = SampleWorker.start("prefill-back", "prefill", port, SampleWorker.TOKEN, EMBEDDED);
				phase.set("back");
				awaitResults(results, (r) -> r.phase().equals("back") && r.result().ok(), 3);
				assertThat(firstAnswer(results, "back").producerAgent()).isNotEqualTo(firstAgent);
			}
			finally {
				running.set(false);
				load.join(Duration.ofSeconds(30));
			}
			List<Phased> all;
			synchronized (results) {
				all = List.copyOf(results);
			}
			// While the prefill worker was down, every request failed with a clear answer
			// in time;
			// no request ever returned data that did not check out.
			assertThat(all).filteredOn((r) -> r.phase().equals("down") && !r.result().ok())
				.allSatisfy((r) -> assertThat(r.result().error()).matches("status 50[23]: .*")
					.containsAnyOf("is not reachable", "circuit breaker 'prefill' is open",
							"pulling the blocks of request", "could not exchange NIXL metadata"));
			assertThat(all).filteredOn((r) -> !r.result().ok())
				.allSatisfy((r) -> assertThat(r.result().error()).startsWith("status ")
					.doesNotContain("KV CRC32C", "generated text", "bytes, got", "unreadable answer"));
		}
		finally {
			first.close();
			if (second != null) {
				second.close();
			}
		}
	}

	@Test
	void aPrefillWorkerStoppedGracefullyLetsTheDecodeWorkerReadItsLeasedBlocksFirst() {
		SampleWorker stopping = SampleWorker.start("prefill-stops", "prefill", SampleWorker.freePort(),
				SampleWorker.TOKEN, EMBEDDED);
		try (SampleWorker consumer = startDecode("decode-of-stopping", stopping, SampleWorker.TOKEN)) {
			assertThat(
					consumer.post("/generate", new GenerateRequest(null, "warm up", null, null, null), REQUEST_TIMEOUT)
						.statusCode())
				.isEqualTo(200);
			double free = stopping.meter("sample.kv.blocks.free");
			String prompt = "c".repeat(80);
			// The decode worker holds this request for 3 s between the prefill call and
			// the pull.
			CompletableFuture<HttpResponse<String>> pending = CompletableFuture
				.supplyAsync(() -> consumer.post("/generate",
						new GenerateRequest("leased-while-stopping", prompt, null, 8, 3000L), REQUEST_TIMEOUT,
						SampleWorker.WORKER_AUTHORIZATION));
			// 80 tokens: 5 blocks leased.
			stopping.awaitMeter("sample.kv.blocks.free", free - 5);

			CompletableFuture<Integer> exit = CompletableFuture.supplyAsync(stopping::stop);
			HttpResponse<String> answer = pending.join();
			assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
			GenerateResponse generated = SampleWorker.JSON.readValue(answer.body(), GenerateResponse.class);
			assertThat(generated.kvCrc32c()).isEqualTo(
					new ToyModel(generated.layout().toLayout()).expectedCrc32c(ToyModel.tokens(prompt, null, 80)));
			assertThat(exit.join()).isIn(0, 143);
			assertThat(stopping.log()).doesNotContain("KV lease(s) after the shutdown timeout");

			HttpResponse<String> after = consumer.post("/generate",
					new GenerateRequest(null, "too late", null, null, null), REQUEST_TIMEOUT);
			assertThat(after.statusCode()).as(after.body()).isEqualTo(503);
		}
		finally {
			stopping.close();
		}
	}

	private static GenerateResponse firstAnswer(List<Phased> results, String phase) {
		synchronized (results) {
			return results.stream()
				.filter((r) -> r.phase().equals(phase) && r.result().ok())
				.map((r) -> r.result().answer())
				.findFirst()
				.orElseThrow();
		}
	}

	private static void awaitResults(List<Phased> results, Predicate<Phased> condition, int count) {
		long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
		while (true) {
			long matching;
			synchronized (results) {
				matching = results.stream().filter(condition).count();
			}
			if (matching >= count) {
				return;
			}
			if (System.nanoTime() - deadline >= 0) {
				synchronized (results) {
					throw new AssertionError(
							"expected " + count + " results of the condition within 90 s; got " + matching + ":\n"
									+ results.stream().map(Phased::toString).reduce("", (a, b) -> a + b + "\n"));
				}
			}
			SampleWorker.pause(Duration.ofMillis(50));
		}
	}

	record Phased(String phase, RequestResult result) {

		@Override
		public String toString() {
			return this.phase + " "
					+ (this.result.ok() ? "ok " + this.result.answer().producerAgent() : this.result.error());
		}

	}

}
