package dev.nixl4j.sample;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample's metadata registry runs on per-client tokens, with real worker processes on
 * the embedded engine: the prefill worker grants its own token the agent names
 * {@code nixl-sample-prefill-*} and the decode worker's token
 * {@code nixl-sample-decode-*}, and takes no shared token. So nobody but the decode
 * worker can take its name, not before its first publication and not while it restarts,
 * and a decode worker that restarts under a fixed name ({@code nixl.agent.name}) has its
 * requests verified again within {@link #BOUND} of being ready: after a graceful stop,
 * which withdraws its entry, and after a crash, which leaves its entry behind until the
 * entry TTL (30 s), so that the restarted worker must replace it with its client's token.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SampleRegistryClientsIT {

	private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

	/** How soon a restarted decode worker must have a request verified again. */
	private static final Duration BOUND = Duration.ofSeconds(10);

	private static final String FIXED_NAME = "nixl-sample-decode-fixed";

	private static final String EMBEDDED = "--nixl.agent.engine=embedded";

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private SampleWorker prefill;

	private SampleWorker decode;

	private final List<String> figures = new ArrayList<>();

	@BeforeAll
	void startWorkers() {
		this.prefill = SampleWorker.start("prefill-registry-clients", "prefill", SampleWorker.freePort(),
				SampleWorker.TOKEN, EMBEDDED);
		this.decode = startDecode("decode-fixed-1");
	}

	@AfterAll
	void stopWorkers() {
		this.figures.forEach(System.out::println);
		assertThat(SampleWorker.stopAll(this.decode, this.prefill)).isEmpty();
	}

	private SampleWorker startDecode(String name) {
		return SampleWorker.start(name, "decode", SampleWorker.freePort(), SampleWorker.TOKEN, EMBEDDED,
				"--nixl.agent.name=" + FIXED_NAME, "--sample.decode.prefill-url=" + this.prefill.uri());
	}

	@Test
	@Order(1)
	void nobodyButTheDecodeWorkerCanTakeItsNameBeforeItsFirstPublication() throws Exception {
		// no request yet: the decode worker has not published its entry
		assertThat(registry("GET", FIXED_NAME, SampleWorker.TOKEN, new byte[0]).statusCode()).isEqualTo(404);
		byte[] junk = "not even metadata".getBytes();
		// the prefill worker's token: only nixl-sample-prefill-* names
		HttpResponse<String> squat = registry("PUT", FIXED_NAME, SampleWorker.PREFILL_TOKEN, junk);
		assertThat(squat.statusCode()).as(squat.body()).isEqualTo(403);
		assertThat(squat.body()).contains("client 'prefill' may not change the entry of agent '" + FIXED_NAME + "'");
		// the former shared token is gone; an unknown one gets nothing
		assertThat(registry("PUT", FIXED_NAME, "a-token-the-registry-does-not-know", junk).statusCode()).isEqualTo(401);
		// the decode worker's token is held to its own prefix too
		HttpResponse<String> other = registry("PUT", "nixl-sample-prefill-squat", SampleWorker.TOKEN, junk);
		assertThat(other.statusCode()).as(other.body()).isEqualTo(403);

		assertVerifiedWithin(this.decode, "first request", System.nanoTime());
		assertThat(registry("GET", FIXED_NAME, SampleWorker.TOKEN, new byte[0]).statusCode()).isEqualTo(200);
	}

	@Test
	@Order(2)
	void aDecodeWorkerStoppedAndStartedAgainUnderItsNameIsVerifiedAgain() {
		assertVerifiedWithin(this.decode, "before the stop", System.nanoTime());
		assertThat(this.decode.stop()).isIn(0, 143);
		this.decode = startDecode("decode-fixed-2");
		long ready = System.nanoTime();
		Duration took = assertVerifiedWithin(this.decode, "after a graceful restart", ready);
		this.figures.add("decode worker restarted gracefully under '" + FIXED_NAME + "': first request verified "
				+ took.toMillis() + " ms after it was ready");
	}

	@Test
	@Order(3)
	void aDecodeWorkerThatCrashedAndStartsAgainUnderItsNameIsVerifiedAgain() {
		assertVerifiedWithin(this.decode, "before the crash", System.nanoTime());
		this.decode.kill();
		this.decode = startDecode("decode-fixed-3");
		long ready = System.nanoTime();
		Duration took = assertVerifiedWithin(this.decode, "after a crash", ready);
		this.figures.add("decode worker restarted after a crash under '" + FIXED_NAME + "': first request verified "
				+ took.toMillis() + " ms after it was ready");
	}

	/**
	 * Sends requests until one is verified, for at most {@link #BOUND} from
	 * {@code since}; fails with the last answer after it.
	 * @return how long it took from {@code since}
	 */
	private Duration assertVerifiedWithin(SampleWorker worker, String what, long since) {
		HttpResponse<String> last = null;
		int tries = 0;
		while (System.nanoTime() - since < BOUND.toNanos()) {
			String prompt = what + " " + tries++;
			last = worker.post("/generate", new GenerateRequest(null, prompt, null, 8, null), REQUEST_TIMEOUT);
			if (last.statusCode() == 200) {
				GenerateResponse answer = SampleWorker.JSON.readValue(last.body(), GenerateResponse.class);
				int[] tokens = ToyModel.tokens(prompt, null, Integer.MAX_VALUE);
				assertThat(answer.kvCrc32c())
					.isEqualTo(new ToyModel(answer.layout().toLayout()).expectedCrc32c(tokens));
				return Duration.ofNanos(System.nanoTime() - since);
			}
			SampleWorker.pause(Duration.ofMillis(200));
		}
		throw new AssertionError(
				"no request " + what + " was verified within " + BOUND + " (" + tries + " tries); the last answer: "
						+ ((last != null) ? last.statusCode() + " " + last.body() : "none") + "\n" + worker.logTail());
	}

	private HttpResponse<String> registry(String method, String agent, String token, byte[] body) throws Exception {
		return this.http.send(HttpRequest.newBuilder(this.prefill.uri().resolve("/nixl/agents/" + agent + "/metadata"))
			.timeout(REQUEST_TIMEOUT)
			.header("Authorization", "Bearer " + token)
			.header("Content-Type", "application/octet-stream")
			.method(method, HttpRequest.BodyPublishers.ofByteArray(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
