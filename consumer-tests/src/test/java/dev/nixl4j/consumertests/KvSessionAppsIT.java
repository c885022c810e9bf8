package dev.nixl4j.consumertests;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The KV session between two processes of the consumer project {@code kv-session-app}
 * (built by maven-invoker-plugin from the installed starter), started with
 * {@code java -jar} on loopback: a producer that leases blocks of the starter's paged KV
 * cache, and a consumer, the long-lived side that serves the metadata registry, that
 * pulls them with the starter's KV consumer knowing nothing but the lease's parameters.
 * The engine is whatever the starter picks (native NIXL from the native artifact when it
 * loads, else embedded); the tests print which.
 *
 * <p>
 * One consumer lives through all tests, in order; producers are killed (SIGKILL) and
 * started again on the same port. Every wait has a deadline. The registry's entry TTL is
 * {@value #ENTRY_TTL_SECONDS} s.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class KvSessionAppsIT {

	private static final Path JAR = Path.of(System.getProperty("consumer.projects", "target/it"))
		.resolve("kv-session-app/target/kv-session-app.jar");

	private static final Duration START_DEADLINE = Duration.ofSeconds(120);

	private static final int ENTRY_TTL_SECONDS = 3;

	private static final String MODEL = "kv-session-app-model/1";

	/** Blocks per fetch: 8 blocks of 32 KiB (4 layers, K and V, 4 KiB each). */
	private static final int BLOCKS = 8;

	private static final long BLOCK_BYTES = 4 * 2 * 16 * 2 * 64 * 2;

	/** The bound on a fetch that must fail fast (the consumer's pull timeout is 10 s). */
	private static final Duration FAIL_FAST = Duration.ofSeconds(5);

	private static final Duration RECOVERY = Duration.ofSeconds(5);

	/** The consumer's pull timeout ({@code app.pull-timeout}). */
	private static final Duration PULL_TIMEOUT = Duration.ofSeconds(10);

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private static final ObjectMapper JSON = new ObjectMapper();

	@TempDir
	static Path temp;

	private final List<String> figures = new ArrayList<>();

	private String token;

	private int consumerPort;

	private int producerPort;

	private ConsumerProcess consumer;

	private ConsumerProcess producer;

	private String engine;

	private long baselineThreads = -1;

	private long seed = 1;

	private int starts;

	@BeforeAll
	void startConsumerAndProducer() throws Exception {
		this.token = token();
		this.consumerPort = ConsumerProcess.freePort();
		this.producerPort = ConsumerProcess.freePort();
		this.consumer = ConsumerProcess.start("kv-consumer", JAR, home("consumer"), logs(),
				"--spring.profiles.active=consumer", "--server.port=" + this.consumerPort,
				"--nixl.metadata.http.token=" + this.token,
				"--nixl.metadata.http.registry.entry-ttl=" + ENTRY_TTL_SECONDS + "s",
				"--app.producer-url=http://127.0.0.1:" + this.producerPort,
				"--app.pull-timeout=" + PULL_TIMEOUT.toSeconds() + "s");
		ConsumerProcess.Healthy up = this.consumer.awaitHealthUp(this.consumerPort, START_DEADLINE);
		this.engine = up.nixl().path("engine").asString();
		assertThat(this.engine).as("engine of the consumer: %s", up.nixl()).isIn("NATIVE", "EMBEDDED");
		startProducer();
	}

	@AfterAll
	void stopAll() {
		try {
			if (this.producer != null) {
				this.producer.close();
			}
		}
		finally {
			if (this.consumer != null) {
				this.consumer.close();
			}
		}
		System.out.println("kv-session-app on " + this.engine + ":\n  " + String.join("\n  ", this.figures));
	}

	@Test
	@Order(1)
	void verifiedBlocksMoveFromProducerToConsumer() throws Exception {
		String producerName = producerAgent();
		String incarnation = null;
		long maxMillis = 0;
		for (int i = 0; i < 10; i++) {
			Reply fetch = fetch(false);
			assertVerified(fetch);
			assertThat(fetch.json().path("producer").asString()).isEqualTo(producerName);
			assertThat(fetch.json().path("bytes").asLong()).isEqualTo(BLOCKS * BLOCK_BYTES);
			assertThat(fetch.json().path("engine").asString()).isEqualTo(this.engine);
			if (incarnation == null) {
				incarnation = fetch.json().path("incarnation").asString();
				assertThat(incarnation).isNotEmpty();
			}
			assertThat(fetch.json().path("incarnation").asString()).isEqualTo(incarnation);
			maxMillis = Math.max(maxMillis, fetch.json().path("millis").asLong());
		}
		assertThat(session(producerName).path("state").asString()).isEqualTo("CONNECTED");
		assertThat(session(producerName).path("incarnation").asString()).isEqualTo(incarnation);
		this.baselineThreads = threads();
		this.figures.add(String.format(Locale.ROOT,
				"10 fetches of %d blocks (%d bytes each) verified byte for byte; slowest pull %d ms", BLOCKS,
				BLOCKS * BLOCK_BYTES, maxMillis));
	}

	@Test
	@Order(2)
	void corruptedBlockIsRefusedAndCounted() throws Exception {
		double before = integrityFailures();
		Reply corrupted = fetch(true);
		assertProblem(corrupted, "KvIntegrityException", 422);
		assertThat(corrupted.json().has("verified")).as("nothing served: %s", corrupted).isFalse();
		assertThat(integrityFailures()).isEqualTo(before + 1);
		assertVerified(fetch(false));
	}

	@Test
	@Order(3)
	void killedProducerFailsFastAndItsSuccessorServesAtOnce() throws Exception {
		String oldName = producerAgent();
		Reply lease = post(this.producerPort, "/lease",
				Map.of("requestId", "taken-before-the-kill", "blocks", BLOCKS, "seed", 42));
		assertThat(lease.status()).as("lease: %s", lease).isEqualTo(200);
		String oldIncarnation = lease.json().path("producerIncarnation").asString();
		assertVerified(fetch(false));
		assertThat(session(oldName).path("state").asString()).isEqualTo("CONNECTED");

		long killed = System.nanoTime();
		this.producer.kill(Duration.ofSeconds(10));

		Reply down = fetch(false);
		assertProblem(down, "LeaseUnavailable", 503);
		assertThat(down.elapsed()).as("a fetch while the producer is down").isLessThan(FAIL_FAST);

		Reply stale = post(this.consumerPort, "/pull", Map.of("params", lease.json(), "seed", 42));
		assertThat(stale.status()).as("a pull of a lease of the killed producer: %s", stale).isNotEqualTo(200);
		assertThat(stale.json().path("type").asString()).as("%s", stale)
			.isIn("KvProducerUnavailableException", "NixlException", "KvLeaseLostException");
		assertThat(stale.elapsed()).as("a pull of the killed producer's lease: %s", stale).isLessThan(FAIL_FAST);
		this.figures.add(String.format(Locale.ROOT,
				"producer killed: /fetch failed in %d ms (%s); a pull of its earlier lease failed in %d ms (%s, %s)",
				down.elapsed().toMillis(), down.json().path("type").asString(), stale.elapsed().toMillis(),
				stale.json().path("type").asString(), stale.json().path("nixlStatus").asString()));

		JsonNode failed = session(oldName);
		assertThat(failed.path("state").asString()).as("session after the failed pull: %s", failed)
			.isEqualTo("RECONNECTING");
		assertThat(Duration.ofNanos(System.nanoTime() - killed)).as("health shows the failure").isLessThan(FAIL_FAST);

		// The registry expires the dead producer's entry within a tenth of its TTL after
		// the TTL (on a timer), and the session, knowing the producer, asks for it once
		// per
		// pull: GONE within the entry TTL and a few seconds.
		long goneBy = killed + Duration.ofSeconds(ENTRY_TTL_SECONDS).plus(FAIL_FAST).toNanos();
		String state = failed.path("state").asString();
		Duration slowest = Duration.ZERO;
		while (!"GONE".equals(state) && System.nanoTime() - goneBy < 0) {
			Reply retried = post(this.consumerPort, "/pull", Map.of("params", lease.json(), "seed", 42));
			assertThat(retried.status()).as("%s", retried).isNotEqualTo(200);
			assertThat(retried.json().path("type").asString()).as("%s", retried)
				.isIn("KvProducerUnavailableException", "NixlException");
			slowest = (retried.elapsed().compareTo(slowest) > 0) ? retried.elapsed() : slowest;
			state = session(oldName).path("state").asString();
			if (!"GONE".equals(state)) {
				Thread.sleep(200);
			}
		}
		Duration gone = Duration.ofNanos(System.nanoTime() - killed);
		assertThat(state).as("session with the killed producer %s: %s", oldName, session(oldName)).isEqualTo("GONE");
		Reply whileGone = post(this.consumerPort, "/pull", Map.of("params", lease.json(), "seed", 42));
		assertProblem(whileGone, "KvProducerUnavailableException", 503);
		assertThat(whileGone.json().path("state").asString()).isEqualTo("GONE");
		assertThat(whileGone.elapsed()).as("a pull while the session is GONE").isLessThan(FAIL_FAST);
		this.figures.add(String.format(Locale.ROOT,
				"consumer health: RECONNECTING at once, GONE %d ms after the kill (entry TTL %d s; the slowest pull "
						+ "on the way took %d ms); pulls while GONE fail in %d ms (%s)",
				gone.toMillis(), ENTRY_TTL_SECONDS, slowest.toMillis(), whileGone.elapsed().toMillis(),
				whileGone.json().path("type").asString()));

		long restarted = System.nanoTime();
		startProducer();
		long up = System.nanoTime();
		Reply recovered = awaitVerifiedFetch(up, RECOVERY);
		assertThat(recovered.json().path("producer").asString()).as("a fresh agent name per start")
			.isNotEqualTo(oldName)
			.isEqualTo(producerAgent());
		assertThat(recovered.json().path("incarnation").asString()).isNotEqualTo(oldIncarnation).isNotEmpty();
		assertThat(session(producerAgent()).path("state").asString()).isEqualTo("CONNECTED");
		this.figures.add(String.format(Locale.ROOT,
				"new producer (fresh name): first verified fetch %d ms after it was UP (its start took %.1f s); "
						+ "%.1f s from the kill",
				Duration.ofNanos(System.nanoTime() - up).toMillis(), seconds(up - restarted),
				seconds(System.nanoTime() - killed)));
	}

	@Test
	@Order(4)
	void producerRestartedUnderTheSameNameIsServedWithinTheEntryTtl() throws Exception {
		String name = "kv-producer-fixed";
		this.producer.kill(Duration.ofSeconds(10));
		startProducer("--nixl.agent.name=" + name);
		Reply first = awaitVerifiedFetch(System.nanoTime(), RECOVERY);
		assertThat(first.json().path("producer").asString()).isEqualTo(name);
		String oldIncarnation = first.json().path("incarnation").asString();

		long killed = System.nanoTime();
		this.producer.kill(Duration.ofSeconds(10));
		this.producer = ConsumerProcess.start("kv-producer-" + (++this.starts), JAR, home("producer-" + this.starts),
				logs(), producerArguments("--nixl.agent.name=" + name));
		long listening = awaitListening(this.producerPort, START_DEADLINE);
		Duration bound = Duration.ofSeconds(ENTRY_TTL_SECONDS).plus(RECOVERY);
		Reply recovered = awaitVerifiedFetch(listening, bound);
		assertThat(recovered.json().path("producer").asString()).isEqualTo(name);
		assertThat(recovered.json().path("incarnation").asString()).isNotEqualTo(oldIncarnation);
		this.producer.awaitHealthUp(this.producerPort, Duration.ofSeconds(ENTRY_TTL_SECONDS + 5));
		this.figures.add(String.format(Locale.ROOT,
				"producer restarted under its fixed name: first verified fetch %d ms after its HTTP port answered "
						+ "(bound: entry TTL %d s + 5 s), %.1f s from the kill",
				Duration.ofNanos(System.nanoTime() - listening).toMillis(), ENTRY_TTL_SECONDS,
				seconds(System.nanoTime() - killed)));
	}

	@Test
	@Order(5)
	void producerOfAnotherModelIsRefusedNamingBothFingerprints() throws Exception {
		this.producer.kill(Duration.ofSeconds(10));
		startProducer("--nixl.kv.model-fingerprint=other-model/2");
		Reply refused = fetch(false);
		assertProblem(refused, "KvIncompatibleException", 409);
		String producerFingerprint = refused.json().path("producerFingerprint").asString();
		String consumerFingerprint = refused.json().path("consumerFingerprint").asString();
		assertThat(producerFingerprint).contains("other-model/2");
		assertThat(consumerFingerprint).contains(MODEL);
		assertThat(refused.json().path("detail").asString()).contains(producerFingerprint)
			.contains(consumerFingerprint);
		assertThat(session(producerAgent()).path("state").asString()).isEqualTo("INCOMPATIBLE");
		this.figures.add("producer of another model: " + refused.json().path("detail").asString());
	}

	@Test
	@Order(6)
	void consumerThreadsAreBackNearTheirBaselineAfterTheFaults() throws Exception {
		assertThat(this.baselineThreads).as("baseline taken by the first test").isPositive();
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		long threads = threads();
		while (threads > this.baselineThreads + 10 && System.nanoTime() - deadline < 0) {
			Thread.sleep(200);
			threads = threads();
		}
		assertThat(threads).as("live threads of the consumer, baseline %d", this.baselineThreads)
			.isLessThanOrEqualTo(this.baselineThreads + 10);
		this.figures.add("consumer live threads: " + this.baselineThreads + " after the first fetches, " + threads
				+ " after the fault tests");
	}

	private void startProducer(String... extra) throws Exception {
		this.producer = ConsumerProcess.start("kv-producer-" + (++this.starts), JAR, home("producer-" + this.starts),
				logs(), producerArguments(extra));
		ConsumerProcess.Healthy up = this.producer.awaitHealthUp(this.producerPort, START_DEADLINE);
		assertThat(up.nixl().path("engine").asString()).as("engine of the producer").isEqualTo(this.engine);
	}

	private String[] producerArguments(String... extra) {
		List<String> arguments = new ArrayList<>(List.of("--spring.profiles.active=producer",
				"--server.port=" + this.producerPort, "--nixl.metadata.http.token=" + this.token,
				"--nixl.metadata.http.endpoint=http://127.0.0.1:" + this.consumerPort + "/nixl",
				"--app.allow-corruption=true"));
		arguments.addAll(List.of(extra));
		return arguments.toArray(String[]::new);
	}

	private String producerAgent() throws Exception {
		return this.producer.getJson(this.producerPort, "/actuator/health")
			.path("components")
			.path("nixl")
			.path("details")
			.path("agent")
			.asString();
	}

	/** Fetches until one is verified, at most {@code within} from {@code from}. */
	private Reply awaitVerifiedFetch(long from, Duration within) throws Exception {
		long deadline = from + within.toNanos();
		Reply last;
		do {
			last = fetch(false);
			if (last.status() == 200) {
				assertVerified(last);
				return last;
			}
			Thread.sleep(100);
		}
		while (System.nanoTime() - deadline < 0);
		throw new AssertionError("no verified fetch within " + within + "; last answer: " + last + "\n"
				+ this.consumer.logTail() + "\n" + this.producer.logTail());
	}

	/** Waits until the port answers HTTP (any status); returns when. */
	private long awaitListening(int port, Duration within) throws Exception {
		long deadline = System.nanoTime() + within.toNanos();
		while (System.nanoTime() - deadline < 0) {
			try {
				HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
					.timeout(Duration.ofSeconds(2))
					.build(), HttpResponse.BodyHandlers.discarding());
				return System.nanoTime();
			}
			catch (IOException ex) {
				Thread.sleep(50);
			}
		}
		throw new AssertionError("port " + port + " did not answer within " + within + "\n" + this.producer.logTail());
	}

	private Reply fetch(boolean corrupt) throws Exception {
		return post(this.consumerPort, "/fetch", Map.of("blocks", BLOCKS, "seed", this.seed++, "corrupt", corrupt));
	}

	private void assertVerified(Reply reply) {
		assertThat(reply.status()).as("%s\n%s", reply, this.consumer.logTail()).isEqualTo(200);
		assertThat(reply.json().path("verified").asBoolean()).as("%s", reply).isTrue();
	}

	private void assertProblem(Reply reply, String type, int status) {
		assertThat(reply.json().path("type").asString()).as("%s\n%s", reply, this.consumer.logTail()).isEqualTo(type);
		assertThat(reply.status()).as("%s", reply).isEqualTo(status);
	}

	/** The consumer's session with a producer, from its health; missing when none. */
	private JsonNode session(String producer) throws Exception {
		JsonNode sessions = this.consumer.getJson(this.consumerPort, "/actuator/health")
			.path("components")
			.path("nixl")
			.path("details")
			.path("kvSessions");
		for (JsonNode session : sessions) {
			if (producer.equals(session.path("producer").asString())) {
				return session;
			}
		}
		return sessions.path("none for " + producer);
	}

	private long threads() throws Exception {
		return (long) metric("jvm.threads.live");
	}

	private double integrityFailures() throws Exception {
		return metric("nixl.kv.integrity.failures");
	}

	private double metric(String name) throws Exception {
		JsonNode metric = this.consumer.getJson(this.consumerPort, "/actuator/metrics/" + name);
		return metric.path("measurements").get(0).path("value").asDouble();
	}

	private Reply post(int port, String path, Object document) throws Exception {
		long start = System.nanoTime();
		HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Authorization", "Bearer " + this.token)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(document)))
			.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
		Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
		return new Reply(path, response.statusCode(), JSON.readTree(response.body()), elapsed);
	}

	private Path home(String name) throws IOException {
		return Files.createDirectory(temp.resolve("home-" + name));
	}

	private Path logs() {
		return temp.resolve("logs");
	}

	private static String token() {
		byte[] bytes = new byte[24];
		new SecureRandom().nextBytes(bytes);
		return HexFormat.of().formatHex(bytes);
	}

	private static double seconds(long nanos) {
		return nanos / 1e9;
	}

	/**
	 * An answer of one of the applications.
	 *
	 * @param path the path posted to
	 * @param status the HTTP status
	 * @param json its body
	 * @param elapsed the time from the request to the answer
	 */
	record Reply(String path, int status, JsonNode json, Duration elapsed) {

		@Override
		public String toString() {
			return "POST " + this.path + " -> " + this.status + " in " + this.elapsed.toMillis() + " ms: " + this.json;
		}

	}

}
