package dev.nixl4j.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.nixl4j.sample.load.LoadGenerator;
import dev.nixl4j.sample.load.LoadGenerator.RequestResult;
import dev.nixl4j.sample.load.LoadOptions;
import dev.nixl4j.sample.load.LoadReport;
import dev.nixl4j.testsupport.EtcdServer;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The prefill and decode workers on two "hosts": network namespaces joined by a veth
 * pair, made by {@code bin/sample-two-hosts up} and removed by its {@code down}. Native
 * NIXL moves the KV blocks with UCX's TCP transport on that link, the metadata goes
 * through etcd, every answer is checked, and a link that fails for a few seconds fails
 * requests clearly and briefly. Skips locally where namespaces cannot be made (not root,
 * no iproute2); fails in CI.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TwoHostPrefillDecodeIT {

	private static final Path SCRIPT = Path.of("..", "bin", "sample-two-hosts").toAbsolutePath().normalize();

	/** The decode worker's deadlines: shorter than the link's outage. */
	private static final Duration DEADLINE = Duration.ofSeconds(2);

	private static final Duration OUTAGE = Duration.ofSeconds(3);

	/** UCX's protocol tables: a row's Config column names transport/device. */
	private static final Pattern UCX_LINE = Pattern.compile("^\\[\\d+\\.\\d+\\] \\[[^\\]]+\\]\\s+\\|(.*)\\|\\s*$");

	private static final Pattern LANE = Pattern.compile("\\b([a-z][a-z0-9_]*)/([A-Za-z0-9_.-]+)");

	private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final String id = HexFormat.of().formatHex(new SecureRandom().generateSeed(3));

	private final Map<String, String> hosts = new LinkedHashMap<>();

	private EtcdServer etcd;

	private SampleWorker prefill;

	private SampleWorker decode;

	@BeforeAll
	@Timeout(value = 240, unit = TimeUnit.SECONDS)
	void startOnTwoHosts() {
		NativeNixl.require();
		EtcdServer.require();
		makeHosts();
		this.etcd = EtcdServer.startAlsoListeningOn(host("TO_PREFILL"), host("TO_DECODE"));
		this.prefill = SampleWorker.start(
				new SampleWorker.Host(host("PREFILL_NS"), host("PREFILL_MGMT"), ucx(host("PREFILL_DEV"))),
				"two-hosts-prefill", "prefill", SampleWorker.freePort(), SampleWorker.TOKEN,
				"--nixl.agent.engine=native", "--nixl.agent.name=" + agent("prefill"), "--nixl.metadata.exchange=etcd",
				etcdEndpoint("TO_PREFILL"));
		this.decode = SampleWorker.start(
				new SampleWorker.Host(host("DECODE_NS"), host("DECODE_MGMT"), ucx(host("DECODE_DEV"))),
				"two-hosts-decode", "decode", SampleWorker.freePort(), SampleWorker.TOKEN, "--nixl.agent.engine=native",
				"--nixl.agent.name=" + agent("decode"), "--nixl.metadata.exchange=etcd", etcdEndpoint("TO_DECODE"),
				"--sample.decode.prefill-url=http://" + host("PREFILL_ADDR") + ":" + this.prefill.port(),
				"--sample.decode.connect-timeout=1s", "--sample.decode.prefill-timeout=" + DEADLINE.toSeconds() + "s",
				"--sample.decode.transfer-timeout=" + DEADLINE.toSeconds() + "s");
	}

	@AfterAll
	@Timeout(value = 120, unit = TimeUnit.SECONDS)
	void removeHosts() {
		List<String> problems = SampleWorker.stopAll(this.decode, this.prefill);
		if (this.etcd != null) {
			this.etcd.close();
		}
		ScriptResult down = script("down", this.id);
		if (down.exit() != 0) {
			problems.add("bin/sample-two-hosts down " + this.id + " failed: " + down.output());
		}
		assertThat(problems).isEmpty();
	}

	@Test
	@Order(1)
	void loadCrossesTheLinkOnUcxTcpWithMetadataThroughEtcd() throws InterruptedException {
		// with the decode worker's token, as bin/sample-two-hosts runs its load: a
		// worker's
		// requests, held to the decode worker's total only
		long rxBefore = counter(host("DECODE_NS"), host("DECODE_DEV"), "rx");
		long txBefore = counter(host("PREFILL_NS"), host("PREFILL_DEV"), "tx");
		LoadReport report = new LoadGenerator(LoadOptions.parse(new String[] { "--url", this.decode.uri().toString(),
				"--prefill", this.prefill.uri().toString(), "--requests", "16", "--concurrency", "4", "--prompt-tokens",
				"128", "--warmup", "1", "--wait", "60", "--timeout", "30" }), SampleWorker.TOKEN)
			.run();
		long rx = counter(host("DECODE_NS"), host("DECODE_DEV"), "rx") - rxBefore;
		long tx = counter(host("PREFILL_NS"), host("PREFILL_DEV"), "tx") - txBefore;

		assertThat(report.failed()).as("failed requests").isEmpty();
		assertThat(report.answers()).hasSize(16)
			.allSatisfy((answer) -> assertThat(answer.engine()).startsWith("native"));
		assertThat(report.bytes()).isPositive();
		assertThat(rx).as("bytes received by the decode host's " + host("DECODE_DEV"))
			.isGreaterThanOrEqualTo(report.bytes());
		assertThat(tx).as("bytes sent by the prefill host's " + host("PREFILL_DEV"))
			.isGreaterThanOrEqualTo(report.bytes());

		assertThat(interNodeLanes(this.decode.log(), agent("decode")))
			.as("the transports/devices of UCX's protocols from the decode worker to the prefill worker")
			.containsExactly("tcp/" + host("DECODE_DEV"));

		assertThat(etcdKeys()).as("agents' keys in etcd")
			.anyMatch((key) -> key.startsWith("/nixl/agents/") && key.contains(agent("prefill")))
			.anyMatch((key) -> key.startsWith("/nixl/agents/") && key.contains(agent("decode")));
	}

	@Test
	@Order(2)
	void aFailedLinkFailsRequestsClearlyWithinTheirDeadlinesAndTheyRecover() throws Exception {
		LoadGenerator load = new LoadGenerator(LoadOptions
			.parse(new String[] { "--url", this.decode.uri().toString(), "--prompt-tokens", "128", "--timeout", "20" }),
				SampleWorker.TOKEN);
		ConcurrentLinkedQueue<Timed> results = new ConcurrentLinkedQueue<>();
		long start = System.nanoTime();
		long[] downUp = new long[2];
		AtomicLong upAt = new AtomicLong(-1);
		try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
			List<Future<?>> senders = new ArrayList<>();
			for (int t = 0; t < 2; t++) {
				int thread = t;
				senders.add(pool.submit(() -> {
					// bounded: at most 200 requests per thread, until the link is back
					for (int i = 0; i < 200 && upAt.get() < 0
							&& System.nanoTime() - start < Duration.ofSeconds(30).toNanos(); i++) {
						long sent = System.nanoTime() - start;
						RequestResult result = load.send(thread * 1000 + i);
						results.add(new Timed(sent, System.nanoTime() - start, result));
					}
				}));
			}
			SampleWorker.pause(Duration.ofSeconds(1));
			link("down");
			downUp[0] = System.nanoTime() - start;
			SampleWorker.pause(OUTAGE);
			link("up");
			downUp[1] = System.nanoTime() - start;
			upAt.set(downUp[1]);
			for (Future<?> sender : senders) {
				sender.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			link("up");
		}

		List<Timed> failed = results.stream().filter((r) -> !r.result().ok()).toList();
		assertThat(failed).as("requests caught by the outage").isNotEmpty();
		assertThat(failed).allSatisfy((r) -> {
			assertThat(r.result().error()).as("a failure is the worker's error, not wrong data")
				.matches("status 50[23]: .*")
				.doesNotContain("corrupted")
				.doesNotContain("CRC32C");
			assertThat(Duration.ofNanos(r.result().nanos()))
				.as("a failed request's time: the worker's deadline (" + DEADLINE + ") and slack")
				.isLessThan(DEADLINE.multipliedBy(3));
		});
		assertThat(results).filteredOn((r) -> r.result().ok())
			.allSatisfy((r) -> assertThat(r.result().answer().verified()).isTrue());

		// requests succeed again, by themselves, soon after the link is back
		long recovered = -1;
		for (int i = 0; i < 100 && recovered < 0; i++) {
			RequestResult result = load.send(5000 + i);
			if (result.ok()) {
				recovered = System.nanoTime() - start - downUp[1];
			}
			else {
				assertThat(result.error()).matches("status 50[23]: .*");
				SampleWorker.pause(Duration.ofMillis(200));
			}
		}
		assertThat(recovered).as("a request succeeded after the link came back").isNotNegative();
		for (int i = 0; i < 8; i++) {
			RequestResult result = load.send(6000 + i);
			assertThat(result.error()).as("request after the recovery").isNull();
		}
		System.out.printf(
				"link down %.1f s; %d requests during the flap, %d failed (%s); first success %.2f s after"
						+ " the link came up%n",
				(downUp[1] - downUp[0]) / 1e9, results.size(), failed.size(),
				failed.stream()
					.map((r) -> r.result().error().substring(0, Math.min(120, r.result().error().length())))
					.distinct()
					.toList(),
				recovered / 1e9);
	}

	private record Timed(long sentNanos, long doneNanos, RequestResult result) {
	}

	private void makeHosts() {
		ScriptResult up = script("up", this.id);
		if (up.exit() != 0) {
			String message = "cannot make two network namespaces joined by a veth pair (bin/sample-two-hosts up): "
					+ up.output().strip();
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError("two network namespaces are required in CI: " + message);
			}
			Assumptions.abort(message + "; skipping");
		}
		for (String line : up.output().split("\n")) {
			int equals = line.indexOf('=');
			if (equals > 0 && line.substring(0, equals).matches("[A-Z_]+")) {
				this.hosts.put(line.substring(0, equals), line.substring(equals + 1).strip());
			}
		}
	}

	private String host(String key) {
		String value = this.hosts.get(key);
		assertThat(value).as(key + " from bin/sample-two-hosts up").isNotNull();
		return value;
	}

	private String agent(String role) {
		return role + "-two-hosts-" + this.id;
	}

	private String etcdEndpoint(String address) {
		return "--nixl.metadata.etcd.endpoints=http://" + host(address) + ":" + this.etcd.clientPort();
	}

	/** UCX on the host's link only, with TCP, and its protocol choices in the log. */
	private static Map<String, String> ucx(String device) {
		return Map.of("UCX_TLS", "tcp", "UCX_NET_DEVICES", device, "UCX_PROTO_INFO", "y");
	}

	/**
	 * The transport/device pairs of the protocol tables UCX printed for the agent's
	 * endpoints to another node.
	 */
	static TreeSet<String> interNodeLanes(String log, String agent) {
		TreeSet<String> lanes = new TreeSet<>();
		boolean interNode = false;
		for (String line : log.split("\n")) {
			Matcher row = UCX_LINE.matcher(line);
			if (!row.matches()) {
				continue;
			}
			String cells = row.group(1);
			if (cells.contains(" cfg#")) {
				interNode = cells.strip().startsWith(agent + " inter-node ");
			}
			else if (interNode) {
				String[] columns = cells.split("\\|");
				Matcher lane = LANE.matcher(columns[columns.length - 1]);
				while (lane.find()) {
					lanes.add(lane.group());
				}
			}
		}
		return lanes;
	}

	private List<String> etcdKeys() {
		Base64.Encoder base64 = Base64.getEncoder();
		String body = "{\"key\":\"" + base64.encodeToString("/nixl/".getBytes(StandardCharsets.UTF_8))
				+ "\",\"range_end\":\"" + base64.encodeToString("/nixl0".getBytes(StandardCharsets.UTF_8))
				+ "\",\"keys_only\":true}";
		try {
			HttpResponse<String> response = HTTP
				.send(HttpRequest.newBuilder(URI.create(this.etcd.endpoint() + "/v3/kv/range"))
					.timeout(Duration.ofSeconds(10))
					.POST(HttpRequest.BodyPublishers.ofString(body))
					.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).as("etcd's range answer: " + response.body()).isEqualTo(200);
			List<String> keys = new ArrayList<>();
			for (JsonNode kv : SampleWorker.JSON.readTree(response.body()).path("kvs")) {
				keys.add(new String(Base64.getDecoder().decode(kv.path("key").asString()), StandardCharsets.UTF_8));
			}
			return keys;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private void link(String state) {
		ScriptResult result = run(List.of("ip", "-n", host("DECODE_NS"), "link", "set", host("DECODE_DEV"), state));
		assertThat(result.exit()).as("ip link set " + state + ": " + result.output()).isZero();
	}

	private static long counter(String namespace, String device, String direction) {
		ScriptResult result = run(List.of("ip", "netns", "exec", namespace, "cat",
				"/sys/class/net/" + device + "/statistics/" + direction + "_bytes"));
		assertThat(result.exit()).as(result.output()).isZero();
		return Long.parseLong(result.output().strip());
	}

	private static ScriptResult script(String... args) {
		List<String> command = new ArrayList<>(List.of("bash", SCRIPT.toString()));
		command.addAll(List.of(args));
		return run(command);
	}

	private static ScriptResult run(List<String> command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			if (!process.waitFor(60, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				throw new AssertionError(command + " did not end within 60 s");
			}
			return new ScriptResult(process.exitValue(),
					new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			return new ScriptResult(-1, "cannot run " + command.getFirst() + ": " + ex.getMessage());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private record ScriptResult(int exit, String output) {
	}

}
