package dev.nixl4j.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.PrefillRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No answer of either worker to a caller without a worker's token holds a name, a path or
 * a KV session detail: not health (the endpoint, its component and the liveness and
 * readiness groups), info, the {@code nixl} endpoint, metrics or Prometheus,
 * {@code POST /generate}, nor any error answer (bad bodies, reserved fields, over a
 * share, the prefill worker's own refusal passed on, unknown paths and methods, the
 * registry). The workers run on native NIXL where it loads (so that the library's path is
 * among what must not show), otherwise on the embedded engine. What must not show is read
 * with the decode worker's token, which still sees it all: both agents' names, their
 * peers', the decode worker's KV sessions (producer and incarnation) and the library's
 * path and source.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SampleAnonymousCallersIT {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

	private static final String[] SHAPE = { "--nixl.agent.engine=auto", "--nixl.kv.layers=2", "--nixl.kv.blocks=512" };

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	void startWorkers() {
		this.prefill = SampleWorker.start("prefill-anonymous", "prefill", SampleWorker.freePort(), SampleWorker.TOKEN,
				SHAPE);
		List<String> decodeArgs = new ArrayList<>(List.of(SHAPE));
		decodeArgs.add("--sample.decode.prefill-url=" + this.prefill.uri());
		this.decode = SampleWorker.start("decode-anonymous", "decode", SampleWorker.freePort(), SampleWorker.TOKEN,
				decodeArgs.toArray(String[]::new));
	}

	@AfterAll
	void stopWorkers() {
		assertThat(SampleWorker.stopAll(this.decode, this.prefill)).isEmpty();
	}

	@Test
	void noAnswerToACallerWithoutATokenHoldsANameAPathOrASessionDetail() throws Exception {
		// a request of each kind, so that both agents know each other and the decode
		// worker has its KV session
		HttpResponse<String> anonymous = generate(new GenerateRequest(null, "an anonymous prompt", null, 8, null));
		assertThat(anonymous.statusCode()).as(anonymous.body()).isEqualTo(200);
		HttpResponse<String> withToken = this.decode.post("/generate",
				new GenerateRequest(null, "a worker's prompt", null, 8, null), REQUEST_TIMEOUT,
				SampleWorker.WORKER_AUTHORIZATION);
		assertThat(withToken.statusCode()).as(withToken.body()).isEqualTo(200);

		Set<String> secrets = secretsSeenWithTheToken(
				SampleWorker.JSON.readValue(withToken.body(), GenerateResponse.class));

		Map<String, HttpResponse<String>> answers = new LinkedHashMap<>();
		answers.put("decode POST /generate", anonymous);
		for (SampleWorker worker : List.of(this.prefill, this.decode)) {
			String role = (worker == this.prefill) ? "prefill " : "decode ";
			for (String path : List.of("/actuator", "/actuator/health", "/actuator/health/liveness",
					"/actuator/health/readiness", "/actuator/health/nixl", "/actuator/health/diskSpace",
					"/actuator/info", "/actuator/nixl", "/actuator/metrics", "/actuator/metrics/nixl.transfers",
					"/actuator/prometheus", "/no-such-path", "/generate", "/prefill")) {
				answers.put(role + "GET " + path, worker.get(path));
			}
			answers.put(role + "DELETE /actuator/health", send(worker.uri().resolve("/actuator/health"), "DELETE", ""));
			answers.put(role + "GET /actuator/health with a wrong token",
					worker.get("/actuator/health", "Authorization", "Bearer not-" + SampleWorker.TOKEN));
		}
		answers.put("prefill GET a registry entry",
				this.prefill.get("/nixl/agents/" + decodeAgent(withToken) + "/metadata"));
		answers.put("prefill POST /prefill", this.prefill.post("/prefill",
				new PrefillRequest("anonymous-1", "a prompt", null, null), REQUEST_TIMEOUT));
		// the decode worker's error answers
		answers.put("decode POST /generate not JSON", send(this.decode.uri().resolve("/generate"), "POST", "{x"));
		answers.put("decode POST /generate unknown field",
				send(this.decode.uri().resolve("/generate"), "POST", "{\"prompt\":\"a\",\"agent\":1}"));
		answers.put("decode POST /generate empty prompt", generate(new GenerateRequest(null, "", null, 8, null)));
		answers.put("decode POST /generate too long",
				generate(new GenerateRequest(null, "x".repeat(9000), null, 8, null)));
		answers.put("decode POST /generate chosen id",
				generate(new GenerateRequest("chosen-id", "a prompt", null, 8, null)));
		answers.put("decode POST /generate over the caller's share",
				generate(new GenerateRequest(null, "o".repeat(129 * 16), null, 8, null)));
		answers.put("decode POST /generate body too large",
				send(this.decode.uri().resolve("/generate"), "POST", "{\"prompt\":\"" + "b".repeat(300_000) + "\"}"));
		// the prefill worker's refusal, which names the decode worker's agent, passed on:
		// leases that nobody reads fill the decode worker's share of the prefill worker
		String decodeAgent = decodeAgent(withToken);
		for (int i = 0; i < 3; i++) {
			HttpResponse<String> lease = this.prefill.post("/prefill",
					new PrefillRequest("fill-share-" + i, "f".repeat(128 * 16), null, decodeAgent), REQUEST_TIMEOUT,
					SampleWorker.WORKER_AUTHORIZATION);
			assertThat(lease.statusCode()).as(lease.body()).isEqualTo(200);
		}
		HttpResponse<String> passedOn = generate(new GenerateRequest(null, "over the consumer's share", null, 8, null));
		assertThat(passedOn.statusCode()).as(passedOn.body()).isEqualTo(429);
		assertThat(passedOn.body()).contains("its consumer '(hidden)'", "(sample.prefill.max-blocks-per-consumer)");
		assertThat(passedOn.headers().firstValue("Retry-After")).hasValue("1");
		answers.put("decode POST /generate refused by the prefill worker", passedOn);

		List<String> leaks = new ArrayList<>();
		answers.forEach((request, answer) -> {
			String everything = answer.headers().map() + " " + answer.body();
			for (String secret : secrets) {
				if (everything.contains(secret)) {
					leaks.add(request + " (" + answer.statusCode() + ") shows '" + secret + "': "
							+ abbreviate(answer.body()));
				}
			}
		});
		System.out.printf("%d answers to callers without a token, %d names, paths and session details looked for: "
				+ "%d shown%n", answers.size(), secrets.size(), leaks.size());
		answers.forEach((request, answer) -> System.out.printf("  %s: %d %s%n", request, answer.statusCode(),
				abbreviate(answer.body())));
		assertThat(leaks).isEmpty();
		// what a caller without a token still gets
		assertThat(anonymous.body()).contains("\"verified\":true", "\"producerAgent\":\"(hidden)\"",
				"\"decodeAgent\":\"(hidden)\"");
		assertThat(SampleWorker.JSON.readTree(this.decode.get("/actuator/health").body()).path("status").asString())
			.isEqualTo("UP");
		assertThat(this.decode.get("/actuator/health/readiness").statusCode()).isEqualTo(200);
		assertThat(SampleWorker.JSON.readTree(this.decode.get("/actuator/nixl").body()).path("agent").asString())
			.isEqualTo("(hidden)");
	}

	/**
	 * Reads, with the decode worker's token, what a caller without one must not see:
	 * names, KV session details and the library's path and source.
	 */
	private Set<String> secretsSeenWithTheToken(GenerateResponse answer) {
		Set<String> secrets = new LinkedHashSet<>();
		secrets.add(answer.producerAgent());
		secrets.add(answer.decodeAgent());
		for (SampleWorker worker : List.of(this.prefill, this.decode)) {
			JsonNode nixl = SampleWorker.JSON
				.readTree(worker.get("/actuator/nixl", SampleWorker.WORKER_AUTHORIZATION).body());
			secrets.add(nixl.path("agent").asString());
			nixl.path("peers").forEach((peer) -> secrets.add(peer.asString()));
			JsonNode health = SampleWorker.JSON
				.readTree(worker.get("/actuator/health", SampleWorker.WORKER_AUTHORIZATION).body())
				.path("components")
				.path("nixl")
				.path("details");
			assertThat(health.path("agent").asString()).as("health details with the token")
				.isEqualTo(nixl.path("agent").asString());
			JsonNode library = health.path("library");
			if (!library.isMissingNode() && !library.isNull()) {
				secrets.add(library.path("path").asString());
				secrets.add(library.path("source").asString());
			}
			health.path("kvSessions").forEach((session) -> {
				secrets.add(session.path("producer").asString());
				secrets.add(session.path("incarnation").asString());
			});
		}
		assertThat(secrets).as("the decode worker's KV session with the prefill worker")
			.contains(answer.producerAgent());
		secrets.removeIf(String::isBlank);
		System.out.println("what callers without a token must not see: " + secrets);
		return secrets;
	}

	private static String decodeAgent(HttpResponse<String> answer) {
		return SampleWorker.JSON.readValue(answer.body(), GenerateResponse.class).decodeAgent();
	}

	private HttpResponse<String> generate(GenerateRequest request) {
		return this.decode.post("/generate", request, REQUEST_TIMEOUT);
	}

	private HttpResponse<String> send(URI uri, String method, String body) throws Exception {
		return this.http.send(HttpRequest.newBuilder(uri)
			.timeout(REQUEST_TIMEOUT)
			.header("Content-Type", "application/json")
			.method(method, HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private static String abbreviate(String body) {
		String flat = body.replaceAll("\\s+", " ");
		return (flat.length() > 200) ? flat.substring(0, 200) + "..." : flat;
	}

}
