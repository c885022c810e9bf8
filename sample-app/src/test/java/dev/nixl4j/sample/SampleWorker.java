package dev.nixl4j.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One worker of the sample, started from the packaged jar ({@code sample.jar}, set by the
 * failsafe plugin) as a separate JVM, with its output in {@code target/sample-workers/}.
 */
final class SampleWorker implements AutoCloseable {

	/**
	 * The decode worker's token ({@code NIXL_DECODE_TOKEN}): its registry client's token,
	 * what it sends to the prefill worker, and what both workers accept from a caller
	 * that may see names and use the parts of the API reserved to workers.
	 */
	static final String TOKEN = "sample-test-token-0123456789";

	/**
	 * The prefill worker's own token ({@code NIXL_PREFILL_TOKEN}): its registry client's
	 * token, accepted by the prefill worker only.
	 */
	static final String PREFILL_TOKEN = "sample-test-prefill-token-0123456789";

	/**
	 * The header of a caller that holds the decode worker's token: the decode worker
	 * takes a chosen {@code requestId} and a {@code decodeDelayMillis} only with it, and
	 * both workers show it names.
	 */
	static final String[] WORKER_AUTHORIZATION = { "Authorization", "Bearer " + TOKEN };

	static final JsonMapper JSON = JsonMapper.builder()
		.disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
		.build();

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

	private final String name;

	private final String token;

	private final String address;

	private final int port;

	private final Path log;

	private final Process process;

	private SampleWorker(String name, String address, int port, String token, Path log, Process process) {
		this.name = name;
		this.token = token;
		this.address = address;
		this.port = port;
		this.log = log;
		this.process = process;
	}

	/**
	 * Starts a worker and waits until it is ready.
	 * @param name a name for its log file
	 * @param role prefill or decode
	 * @param port its HTTP port
	 * @param token the decode worker's token, which both roles get through
	 * {@code NIXL_DECODE_TOKEN}; the prefill worker's own is {@link #PREFILL_TOKEN}
	 * ({@code NIXL_PREFILL_TOKEN})
	 * @param args more Spring Boot arguments ({@code --nixl.kv.blocks=...} replaces the
	 * default of 64)
	 * @return the ready worker
	 */
	static SampleWorker start(String name, String role, int port, String token, String... args) {
		return start(Host.LOCAL, name, role, port, token, args);
	}

	/**
	 * Starts a worker on a host and waits until it is ready.
	 * @param host where it runs
	 * @param name a name for its log file
	 * @param role prefill or decode
	 * @param port its HTTP port
	 * @param token the decode worker's token, which both roles get through
	 * {@code NIXL_DECODE_TOKEN}
	 * @param args more Spring Boot arguments
	 * @return the ready worker
	 */
	static SampleWorker start(Host host, String name, String role, int port, String token, String... args) {
		String jar = System.getProperty("sample.jar");
		if (jar == null || !Files.isRegularFile(Path.of(jar))) {
			throw new IllegalStateException("the packaged sample (system property sample.jar = " + jar
					+ ") is missing: run these tests with Maven's verify phase (failsafe), after package");
		}
		List<String> command = new ArrayList<>();
		if (host.namespace() != null) {
			command.addAll(List.of("ip", "netns", "exec", host.namespace()));
		}
		command.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"--enable-native-access=ALL-UNNAMED", "--add-modules", "jdk.incubator.vector", "-Xmx256m",
				"-XX:+UseSerialGC", "-jar", jar, "--spring.profiles.active=" + role, "--server.port=" + port));
		if (Arrays.stream(args).noneMatch(arg -> arg.startsWith("--nixl.kv.blocks="))) {
			command.add("--nixl.kv.blocks=64");
		}
		command.addAll(List.of(args));
		try {
			Path dir = Files.createDirectories(Path.of("target", "sample-workers"));
			Path log = dir.resolve(name + "-" + port + ".log");
			ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
			Map<String, String> environment = builder.environment();
			environment.put("NIXL_DECODE_TOKEN", token);
			environment.put("NIXL_PREFILL_TOKEN", PREFILL_TOKEN);
			environment.putAll(host.environment());
			SampleWorker worker = new SampleWorker(name, host.address(), port, token, log, builder.start());
			worker.awaitReady();
			return worker;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	URI uri() {
		return URI.create("http://" + this.address + ":" + this.port);
	}

	int port() {
		return this.port;
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
		while (System.nanoTime() - deadline < 0) {
			if (!this.process.isAlive()) {
				throw new AssertionError(
						this.name + " exited with " + this.process.exitValue() + " before it was ready:\n" + logTail());
			}
			try {
				if (get("/actuator/health/readiness").statusCode() == 200) {
					return;
				}
			}
			catch (UncheckedIOException ex) {
				// not listening yet
			}
			pause(Duration.ofMillis(200));
		}
		this.process.destroyForcibly();
		throw new AssertionError(this.name + " was not ready within " + START_TIMEOUT + ":\n" + logTail());
	}

	HttpResponse<String> get(String path, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri().resolve(path)).timeout(Duration.ofSeconds(10)).GET();
		if (headers.length > 0) {
			request.headers(headers);
		}
		return send(request.build());
	}

	/**
	 * The header of a caller holding this worker's token, which the sample asks for on
	 * {@code /actuator/metrics} and {@code /actuator/prometheus}.
	 */
	String[] authorization() {
		return new String[] { "Authorization", "Bearer " + this.token };
	}

	/**
	 * Returns this worker's agent name, as {@code /actuator/nixl} shows it to a holder of
	 * the decode worker's token (to others it shows none).
	 */
	String agentName() {
		HttpResponse<String> response = get("/actuator/nixl", WORKER_AUTHORIZATION);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return JSON.readTree(response.body()).path("agent").asString();
	}

	JsonNode getJson(String path) {
		HttpResponse<String> response = get(path);
		if (response.statusCode() != 200) {
			throw new AssertionError(
					"GET " + path + " on " + this.name + " answered " + response.statusCode() + ": " + response.body());
		}
		return JSON.readTree(response.body());
	}

	HttpResponse<String> post(String path, Object body, Duration timeout, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri().resolve(path))
			.timeout(timeout)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
		if (headers.length > 0) {
			request.headers(headers);
		}
		return send(request.build());
	}

	/**
	 * Returns a meter's first measurement, or 0 when the meter has not been registered
	 * yet.
	 */
	double meter(String name, String... tags) {
		StringBuilder path = new StringBuilder("/actuator/metrics/").append(name);
		for (int i = 0; i < tags.length; i++) {
			path.append((i == 0) ? '?' : '&').append("tag=").append(tags[i]);
		}
		HttpResponse<String> response = get(path.toString(), authorization());
		if (response.statusCode() == 404) {
			return 0;
		}
		JsonNode measurements = JSON.readTree(response.body()).path("measurements");
		return measurements.path(0).path("value").asDouble();
	}

	/** Waits, at most 30 s, until a meter shows a value, then asserts it. */
	void awaitMeter(String name, double expected, String... tags) {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		double value = meter(name, tags);
		while (value != expected && System.nanoTime() - deadline < 0) {
			pause(Duration.ofMillis(20));
			value = meter(name, tags);
		}
		assertThat(value).as(name + " " + List.of(tags) + " on " + this).isEqualTo(expected);
	}

	private static HttpResponse<String> send(HttpRequest request) {
		try {
			return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	String logTail() {
		try {
			List<String> lines = Files.readAllLines(this.log, StandardCharsets.UTF_8);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
		}
		catch (IOException ex) {
			return "(no log: " + ex + ")";
		}
	}

	String log() {
		try {
			return Files.readString(this.log, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	/** Kills the worker at once (SIGKILL), as a crash would. */
	void kill() {
		this.process.destroyForcibly();
		waitFor();
	}

	/** Stops the worker gracefully (SIGTERM) and returns its exit code. */
	int stop() {
		this.process.destroy();
		return waitFor();
	}

	/**
	 * Stops the workers gracefully, in order, skipping {@code null} ones.
	 * @param workers the workers
	 * @return what went wrong: each worker that exited with another code than 0 or 143
	 * (the JVM ended on SIGTERM after Spring's graceful shutdown ran), with its log's
	 * tail
	 */
	static List<String> stopAll(@Nullable SampleWorker... workers) {
		List<String> problems = new ArrayList<>();
		for (SampleWorker worker : workers) {
			if (worker != null) {
				int exit = worker.stop();
				if (exit != 0 && exit != 143) {
					problems.add(worker + " exited with " + exit + ":\n" + worker.logTail());
				}
			}
		}
		return problems;
	}

	private int waitFor() {
		try {
			if (!this.process.waitFor(60, TimeUnit.SECONDS)) {
				this.process.destroyForcibly();
				this.process.waitFor(10, TimeUnit.SECONDS);
				throw new AssertionError(this.name + " did not stop within 60 s:\n" + logTail());
			}
			return this.process.exitValue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	static void pause(Duration duration) {
		try {
			Thread.sleep(duration);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public void close() {
		if (this.process.isAlive()) {
			this.process.destroy();
			waitFor();
		}
	}

	/**
	 * Where a worker runs.
	 *
	 * @param namespace the network namespace to run it in ({@code ip netns exec}), or
	 * {@code null} for this process's
	 * @param address the address this process reaches it at
	 * @param environment more environment variables
	 */
	record Host(@Nullable String namespace, String address, Map<String, String> environment) {

		static final Host LOCAL = new Host(null, "127.0.0.1", Map.of());

	}

	@Override
	public String toString() {
		return this.name + " on port " + this.port;
	}

}
