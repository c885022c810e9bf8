package dev.nixl4j.sample;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import dev.nixl4j.testsupport.ForgedMetadata;
import dev.nixl4j.sample.load.LoadGenerator;
import dev.nixl4j.sample.load.LoadGenerator.RequestResult;
import dev.nixl4j.sample.load.LoadOptions;
import org.assertj.core.api.SoftAssertions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.Executable;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The two-process sample on the embedded engine under continuous, verified load while it
 * is attacked in turn: the prefill worker killed and restarted, both registry entries
 * deleted, forged entries put over the agents' names, oversize request bodies, 1,000 idle
 * sockets to the prefill worker's embedded listener, and a few hundred slow connections
 * to its HTTP port.
 *
 * <p>
 * After each fault it measures how long the workers took to show it (through health, a
 * fast failure or a refusal), how long until requests succeeded again, and the workers'
 * live threads before, at the peak and after. All faults run even when an earlier one
 * missed its target; a pair that does not recover is repaired (the deleted or forged
 * entries put back, else both workers restarted) so that the next fault starts from a
 * working pair. Each fault is a test of its own; the figures of the whole run go to
 * stdout and to {@code target/fault-report.txt}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SampleFaultIT {

	private static final String EMBEDDED = "--nixl.agent.engine=embedded";

	/** The faults target the workers' registry entries, which the test finds by name. */
	private static final String SHOW_NAMES = "--nixl.endpoint.show-names=always";

	/**
	 * How soon a fault that stops data from moving must show, as health or a fast
	 * failure.
	 */
	private static final Duration DETECTION_LIMIT = Duration.ofSeconds(5);

	/**
	 * The bound on one test of the run: a fault, its recovery or repair (up to both
	 * workers restarted) and the settling of threads.
	 */
	private static final Duration TEST_LIMIT = Duration.ofMinutes(4);

	/** How soon after a fault ends requests must succeed again. */
	private static final Duration RECOVERY_LIMIT = Duration.ofSeconds(10);

	/** How long to wait for a recovery before the pair is repaired. */
	private static final Duration RECOVERY_WAIT = Duration.ofSeconds(15);

	/** How many live threads above its baseline a worker may keep after a fault. */
	private static final int THREAD_TOLERANCE = 5;

	private static final Duration THREAD_WAIT = Duration.ofSeconds(15);

	private static final int CLIENTS = 3;

	/** A bound on the requests of the whole run, far above what it sends. */
	private static final int MAX_REQUESTS = 20_000;

	private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(15);

	/** How long the prefill worker stays dead before it is started again. */
	private static final Duration DOWN_TIME = Duration.ofSeconds(6);

	private static final int OVERSIZE_REQUESTS = 4;

	private static final long OVERSIZE_BYTES = 64L << 20;

	private static final Duration OVERSIZE_WAIT = Duration.ofSeconds(40);

	private static final int IDLE_SOCKETS = 1000;

	/** How long idle sockets are held: well above any deadline for a peer's hello. */
	private static final Duration IDLE_WAIT = Duration.ofSeconds(20);

	/**
	 * A connection closed this soon after it opened was refused for being beyond the
	 * bound.
	 */
	private static final Duration AT_ONCE = Duration.ofSeconds(1);

	private static final int SLOW_CONNECTIONS = 300;

	/**
	 * How long slow connections trickle: well above any deadline for reading request
	 * headers.
	 */
	private static final Duration SLOW_WAIT = Duration.ofSeconds(25);

	private static final Duration TRICKLE_EVERY = Duration.ofSeconds(3);

	/** Connections opened at a time, every 10 ms. */
	private static final int BATCH = 16;

	private static final String WRONG_DATA = "WRONG DATA";

	private static final Pattern STATUS = Pattern.compile("^status (\\d{3}): ");

	private static final Pattern TITLE = Pattern.compile("\"title\"\\s*:\\s*\"([^\"]*)\"");

	private static final HttpClient HTTP = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(2))
		.build();

	private final long origin = System.nanoTime();

	private final int prefillPort = SampleWorker.freePort();

	private final int listenerPort = SampleWorker.freePort();

	private final int decodePort = SampleWorker.freePort();

	/** The assertions of the fault under test, checked at its end. */
	private SoftAssertions soft = new SoftAssertions();

	private final List<FaultRecord> faults = new ArrayList<>();

	private final List<String> deaths = Collections.synchronizedList(new ArrayList<>());

	private volatile @Nullable SampleWorker prefill;

	private volatile @Nullable SampleWorker decode;

	private @Nullable Load load;

	private @Nullable Monitor monitor;

	private int generation;

	@BeforeAll
	void startWorkers() {
		startPair();
	}

	@AfterAll
	void stopEverything() {
		if (this.load != null) {
			this.load.stop();
		}
		if (this.monitor != null) {
			this.monitor.stop();
		}
		for (SampleWorker worker : new SampleWorker[] { this.decode, this.prefill }) {
			if (worker != null) {
				worker.kill();
			}
		}
	}

	/**
	 * One test per fault, in this order, between a test that starts the load and one that
	 * checks the whole run: a fault that misses its target fails its own test, and the
	 * next one still runs.
	 */
	@TestFactory
	Stream<DynamicTest> underLoadNoFaultCorruptsDataKillsAWorkerOrLeavesItBroken() {
		return Stream.of(bounded("requests check out before the faults", this::startLoad),
				faultTest("1 SIGKILL + restart prefill", true, this::killAndRestartPrefill),
				faultTest("2 DELETE both entries", true, this::deleteBothEntries),
				faultTest("3 forged PUT over names", true, this::forgeEntries),
				faultTest("4 oversize bodies", true, this::sendOversizeBodies),
				faultTest("5 idle listener sockets", false, this::openIdleListenerSockets),
				faultTest("6 slow registry conns", false, this::holdSlowConnections),
				bounded("no answer carried wrong data and no worker died", this::checkWholeRun));
	}

	private DynamicTest faultTest(String name, boolean detectionApplies, FaultAction action) {
		return bounded(name, () -> {
			assertThat(this.load).as("the load of the earlier test").isNotNull();
			this.soft = new SoftAssertions();
			fault(name, detectionApplies, action);
			this.soft.assertAll();
		});
	}

	/** A test of the run that fails, rather than hangs, after {@link #TEST_LIMIT}. */
	private static DynamicTest bounded(String name, Executable body) {
		return DynamicTest.dynamicTest(name, () -> assertTimeoutPreemptively(TEST_LIMIT, body, name));
	}

	private void startLoad() {
		this.monitor = new Monitor();
		this.load = new Load();
		awaitSuccesses(3, Duration.ofSeconds(60));
		this.load.phase = "before the faults";
	}

	private void checkWholeRun() throws IOException {
		Load load = Objects.requireNonNull(this.load, "the load of the first test");
		try {
			load.stop();
			Objects.requireNonNull(this.monitor).stop();
		}
		finally {
			String report = report(load.samples());
			System.out.println(report);
			Files.writeString(Path.of("target", "fault-report.txt"), report, StandardCharsets.UTF_8);
		}
		List<Sample> all = load.samples();
		SoftAssertions run = new SoftAssertions();
		run.assertThat(all).as("answers that carried wrong data").noneMatch((s) -> s.kind().equals(WRONG_DATA));
		run.assertThat(all).as("verified answers").anyMatch(Sample::ok);
		run.assertThat(this.deaths).as("workers that died without being killed").isEmpty();
		run.assertAll();
	}

	// ---- the faults

	private void killAndRestartPrefill(FaultRecord fault) {
		fault.prefillRestarted = true;
		long killed = now();
		prefill().kill();
		pause(DOWN_TIME);
		this.prefill = startPrefill("prefill-restarted");
		fault.end = now();
		fault.note("restarted in " + seconds(fault.end - killed - DOWN_TIME.toNanos()));
		// Every request that failed while the prefill worker was gone or starting, up to
		// the first
		// success after the restart: how long it took to learn that the producer was
		// gone.
		awaitRecovery(fault.end, RECOVERY_WAIT);
		long worst = -1;
		int failed = 0;
		for (Sample sample : this.load.samples()) {
			if (!sample.ok() && sample.end() >= killed && sample.start() < fault.end) {
				failed++;
				worst = Math.max(worst, sample.end() - Math.max(sample.start(), killed));
			}
		}
		fault.detection = (failed > 0) ? worst : null;
		fault.note(failed + " requests failed while it was down or starting");
		Long health = firstHealth("decode", killed, fault.end, (status) -> !status.equals("UP"));
		fault.note("decode health " + ((health != null) ? "left UP after " + seconds(health - killed) : "stayed UP"));
	}

	private void deleteBothEntries(FaultRecord fault) {
		String prefillAgent = agentName(prefill());
		String decodeAgent = agentName(decode());
		Map<String, byte[]> saved = Map.of(prefillAgent, registryGet(prefillAgent).body(), decodeAgent,
				registryGet(decodeAgent).body());
		fault.repair = () -> saved.forEach(this::putBackIfAbsent);
		long start = now();
		int prefillStatus = registryDelete(prefillAgent);
		int decodeStatus = registryDelete(decodeAgent);
		fault.end = now();
		fault.note("DELETE answered " + prefillStatus + " (prefill) and " + decodeStatus + " (decode)");
		this.soft.assertThat(List.of(prefillStatus, decodeStatus))
			.as(fault.name + ": DELETE statuses (204, or 403 " + "when only the owner may delete)")
			.allMatch((s) -> s == 204 || s == 403);
		// A refused DELETE (403) leaves nothing to detect.
		Long prefillSeen = (prefillStatus == 403) ? Long.valueOf(start)
				: awaitRepublishedOrUnhealthy(prefillAgent, "prefill", null, start, fault);
		Long decodeSeen = (decodeStatus == 403) ? Long.valueOf(start)
				: awaitRepublishedOrUnhealthy(decodeAgent, "decode", null, start, fault);
		fault.detection = (prefillSeen != null && decodeSeen != null) ? Math.max(prefillSeen, decodeSeen) - start
				: null;
	}

	private void forgeEntries(FaultRecord fault) {
		String prefillAgent = agentName(prefill());
		String decodeAgent = agentName(decode());
		Map<String, byte[]> saved = Map.of(prefillAgent, registryGet(prefillAgent).body(), decodeAgent,
				registryGet(decodeAgent).body());
		fault.repair = () -> saved.forEach(this::putBack);
		long start = now();
		Map<String, Integer> statuses = new TreeMap<>();
		Map<String, byte[]> forged = Map.of(prefillAgent, ForgedMetadata.oneByteUcxConnection(prefillAgent),
				decodeAgent, ForgedMetadata.oneByteUcxConnection(decodeAgent));
		for (String role : List.of("decode", "prefill")) {
			String agent = role.equals("decode") ? decodeAgent : prefillAgent;
			statuses.put(role, registryPut(agent, forged.get(agent), otherWorkersToken(agent)));
		}
		fault.end = now();
		fault.note("PUT of a forged " + forged.get(decodeAgent).length
				+ "-byte blob (one-byte UCX connection) answered " + statuses);
		this.soft.assertThat(statuses)
			.as(fault.name + ": another worker's token holder's PUT over an agent's entry")
			.containsOnly(Map.entry("decode", 403), Map.entry("prefill", 403));
		long worst = fault.end - start;
		for (String role : List.of("decode", "prefill")) {
			String agent = role.equals("decode") ? decodeAgent : prefillAgent;
			if (statuses.get(role) == 403) {
				continue;
			}
			Long seen = awaitRepublishedOrUnhealthy(agent, role, forged.get(agent), start, fault);
			worst = (seen == null || worst < 0) ? -1 : Math.max(worst, seen - start);
		}
		fault.detection = (worst >= 0) ? worst : null;
		for (String role : List.of("decode", "prefill")) {
			String agent = role.equals("decode") ? decodeAgent : prefillAgent;
			HttpResponse<byte[]> entry = registryGet(agent);
			this.soft.assertThat(entry.statusCode() == 200 && !Arrays.equals(entry.body(), forged.get(agent)))
				.as(fault.name + ": the " + role + " agent's entry is its own again (status " + entry.statusCode()
						+ ")")
				.isTrue();
		}
	}

	private void sendOversizeBodies(FaultRecord fault) {
		List<CompletableFuture<Oversize>> sent = new ArrayList<>();
		for (int i = 0; i < OVERSIZE_REQUESTS; i++) {
			boolean chunked = (i % 2) == 1;
			sent.add(CompletableFuture.supplyAsync(() -> sendOversize(decode().port(), chunked),
					(task) -> Thread.ofPlatform().name("fault-oversize").start(task)));
		}
		List<Oversize> answers = sent.stream().map(CompletableFuture::join).toList();
		fault.end = now();
		fault.note("answers " + answers);
		boolean all413 = answers.stream().allMatch((a) -> a.status().equals("413"));
		fault.detection = all413 ? answers.stream().mapToLong(Oversize::nanos).max().orElseThrow() : null;
		this.soft.assertThat(answers)
			.as(fault.name + ": 413 within " + DETECTION_LIMIT)
			.allMatch((a) -> a.status().equals("413") && a.nanos() <= DETECTION_LIMIT.toNanos());
		for (SampleWorker worker : List.of(prefill(), decode())) {
			boolean oom = worker.log().contains("OutOfMemoryError");
			if (oom) {
				fault.note(worker + " logged OutOfMemoryError");
			}
			this.soft.assertThat(oom).as(fault.name + ": " + worker + " logged OutOfMemoryError").isFalse();
		}
	}

	private void openIdleListenerSockets(FaultRecord fault) {
		Sockets sockets = new Sockets(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.listenerPort),
				IDLE_SOCKETS, null, null);
		sockets.run(IDLE_WAIT, () -> fault.note("prefill live threads at the end of the hold: " + threads(prefill())));
		fault.end = now();
		fault.detection = sockets.stillOpen == 0 ? sockets.lastClosed - fault.start : null;
		fault.note(sockets.summary());
		this.soft.assertThat(sockets.stillOpen)
			.as(fault.name + ": idle sockets the listener kept open for " + IDLE_WAIT)
			.isZero();
		assertTrafficWentOn(fault);
		this.soft.assertThat(listenerClosesABadHello())
			.as(fault.name + ": the listener still serves a new connection (closes one with a bad hello within 5 s)")
			.isTrue();
	}

	private void holdSlowConnections(FaultRecord fault) {
		byte[] first = "GET /actuator/health HTTP/1.1\r\nHost: 127.0.0.1\r\n".getBytes(StandardCharsets.US_ASCII);
		Sockets sockets = new Sockets(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.prefillPort),
				SLOW_CONNECTIONS, first, (n) -> ("X-Trickle-" + n + ": x\r\n").getBytes(StandardCharsets.US_ASCII));
		sockets.run(SLOW_WAIT, () -> fault.note("prefill live threads at the end of the hold: " + threads(prefill())));
		fault.end = now();
		fault.detection = sockets.stillOpen == 0 ? sockets.lastClosed - fault.start : null;
		fault.note(sockets.summary());
		this.soft.assertThat(sockets.stillOpen)
			.as(fault.name + ": slow connections the HTTP server kept open for " + SLOW_WAIT)
			.isZero();
		assertTrafficWentOn(fault);
		Long unreachable = firstHealth("prefill", fault.start, fault.end, (status) -> status.equals("UNREACHABLE"));
		this.soft.assertThat(unreachable).as(fault.name + ": the prefill worker's health could not be read").isNull();
	}

	/**
	 * Sends the embedded listener a hello of zeros (a wrong magic number) on a new
	 * connection; a listener that still accepts and serves connections closes it at once.
	 */
	private boolean listenerClosesABadHello() {
		try (Socket socket = new Socket()) {
			try {
				socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.listenerPort), 2000);
			}
			catch (IOException ex) {
				return false;
			}
			socket.setSoTimeout(5000);
			// magic (4), version (1), token (16), name length (2)
			socket.getOutputStream().write(new byte[23]);
			return socket.getInputStream().read() < 0;
		}
		catch (SocketTimeoutException ex) {
			return false;
		}
		catch (IOException ex) {
			// reset by the listener: closed too
			return true;
		}
	}

	// ---- running a fault and measuring it

	/** What a fault does; it sets the record's end, detection and notes. */
	private interface FaultAction {

		void apply(FaultRecord fault);

	}

	private void fault(String name, boolean detectionApplies, FaultAction action) {
		FaultRecord fault = new FaultRecord(name);
		fault.prefillBefore = threads(prefill());
		fault.decodeBefore = threads(decode());
		fault.start = now();
		this.load.phase = name;
		action.apply(fault);
		if (fault.end == 0) {
			fault.end = now();
		}
		Long recovered = awaitRecovery(fault.end, RECOVERY_WAIT);
		fault.recovery = (recovered != null) ? recovered - fault.end : null;
		long windowEnd = (recovered != null) ? recovered : now();
		checkAlive(fault);
		if (recovered == null) {
			this.load.phase = "repair after " + name;
			repair(fault);
		}
		this.load.phase = "settling after " + name;
		fault.prefillAfter = awaitThreads(prefill(), fault.prefillBefore);
		fault.decodeAfter = awaitThreads(decode(), fault.decodeBefore);
		fault.prefillPeak = this.monitor.peak("prefill", fault.start, now());
		fault.decodePeak = this.monitor.peak("decode", fault.start, now());
		fault.healthSeen.put("prefill", this.monitor.statuses("prefill", fault.start, windowEnd));
		fault.healthSeen.put("decode", this.monitor.statuses("decode", fault.start, windowEnd));
		for (Sample sample : this.load.samples()) {
			if (sample.phase().equals(name)) {
				fault.answers.merge(sample.kind(), 1, Integer::sum);
			}
		}
		this.faults.add(fault);
		this.load.phase = "between faults";

		if (detectionApplies) {
			assertWithin(fault.detection, DETECTION_LIMIT, fault.name + ": time to detection");
		}
		assertWithin(fault.recovery, RECOVERY_LIMIT, fault.name + ": time to recovery");
		if (!fault.prefillRestarted && fault.repaired == null) {
			this.soft.assertThat(fault.prefillAfter)
				.as(fault.name + ": prefill live threads after, baseline " + fault.prefillBefore)
				.isLessThanOrEqualTo(fault.prefillBefore + THREAD_TOLERANCE);
		}
		if (fault.repaired == null || !fault.repaired.contains("restart")) {
			this.soft.assertThat(fault.decodeAfter)
				.as(fault.name + ": decode live threads after, baseline " + fault.decodeBefore)
				.isLessThanOrEqualTo(fault.decodeBefore + THREAD_TOLERANCE);
		}
	}

	private void assertWithin(@Nullable Long nanos, Duration limit, String what) {
		if (nanos == null) {
			this.soft.fail(what + ": not seen at all (at most " + limit.toSeconds() + " s expected)");
		}
		else {
			this.soft.assertThat(Duration.ofNanos(nanos)).as(what).isLessThanOrEqualTo(limit);
		}
	}

	/** Records each worker that died. */
	private void checkAlive(FaultRecord fault) {
		for (String role : List.of("prefill", "decode")) {
			SampleWorker worker = role.equals("prefill") ? prefill() : decode();
			if (!worker.isAlive()) {
				this.deaths.add(fault.name + ": " + worker + " died:\n" + worker.logTail());
				fault.note(role + " DIED");
			}
		}
	}

	/**
	 * Brings a pair that did not recover back: the fault's own repair first (entries put
	 * back), then, if requests still fail, both workers restarted.
	 */
	private void repair(FaultRecord fault) {
		if (fault.repair != null && prefill().isAlive() && decode().isAlive()) {
			long start = now();
			fault.repair.run();
			if (awaitRecovery(start, Duration.ofSeconds(10)) != null) {
				fault.repaired = "entries put back";
				return;
			}
		}
		fault.repaired = "both workers restarted";
		decode().kill();
		prefill().kill();
		startPair();
		long start = now();
		assertThat(awaitRecovery(start, Duration.ofSeconds(60))).as("requests after both workers were restarted")
			.isNotNull();
	}

	private void startPair() {
		this.generation++;
		this.prefill = startPrefill("prefill-faults-" + this.generation);
		this.decode = SampleWorker.start("decode-faults-" + this.generation, "decode", this.decodePort,
				SampleWorker.TOKEN, EMBEDDED, SHOW_NAMES, "--sample.decode.prefill-url=" + prefill().uri());
	}

	private SampleWorker startPrefill(String name) {
		return SampleWorker.start(name, "prefill", this.prefillPort, SampleWorker.TOKEN, EMBEDDED, SHOW_NAMES,
				"--nixl.embedded.port=" + this.listenerPort);
	}

	/**
	 * Waits for an answer that checked out, from a request sent at or after
	 * {@code since}.
	 * @return when it came, or {@code null} when none came in time
	 */
	private @Nullable Long awaitRecovery(long since, Duration wait) {
		long deadline = now() + wait.toNanos();
		while (true) {
			Long first = null;
			for (Sample sample : this.load.samples()) {
				if (sample.ok() && sample.start() >= since && (first == null || sample.end() < first)) {
					first = sample.end();
				}
			}
			if (first != null) {
				return first;
			}
			if (now() - deadline >= 0) {
				return null;
			}
			pause(Duration.ofMillis(50));
		}
	}

	private void awaitSuccesses(int count, Duration wait) {
		long deadline = now() + wait.toNanos();
		while (this.load.samples().stream().filter(Sample::ok).count() < count) {
			if (now() - deadline >= 0) {
				throw new AssertionError("no " + count + " verified answers within " + wait + ": "
						+ this.load.samples().stream().map(Sample::toString).toList() + "\n" + decode().logTail());
			}
			pause(Duration.ofMillis(100));
		}
	}

	/**
	 * Waits, at most 10 s, until an agent's entry is back in the registry (and, when
	 * {@code forged} is given, no longer the forged one), or its worker's health is not
	 * UP.
	 * @return when that was seen, or {@code null} when neither happened
	 */
	private @Nullable Long awaitRepublishedOrUnhealthy(String agent, String role, byte @Nullable [] forged, long start,
			FaultRecord fault) {
		long deadline = start + Duration.ofSeconds(10).toNanos();
		SampleWorker worker = role.equals("prefill") ? prefill() : decode();
		do {
			HttpResponse<byte[]> entry = registryGet(agent);
			if (entry.statusCode() == 200 && (forged == null || !Arrays.equals(entry.body(), forged))) {
				fault.note(role + " entry republished after " + seconds(now() - start));
				return now();
			}
			JsonNode health = health(worker);
			String status = (health != null) ? health.path("status").asString() : "UNREACHABLE";
			if (!status.equals("UP")) {
				fault.note(role + " health " + status + " after " + seconds(now() - start) + " ("
						+ abbreviate(String.valueOf(health), 300) + ")");
				return now();
			}
			pause(Duration.ofMillis(100));
		}
		while (now() - deadline < 0);
		fault.note(role + " entry not republished and health UP for 10 s");
		return null;
	}

	private void assertTrafficWentOn(FaultRecord fault) {
		List<Sample> during = this.load.samples()
			.stream()
			.filter((s) -> s.start() >= fault.start && s.end() <= fault.end)
			.toList();
		this.soft.assertThat(during).as(fault.name + ": verified answers while the fault lasted").anyMatch(Sample::ok);
		this.soft.assertThat(during).as(fault.name + ": failed requests while the fault lasted").allMatch(Sample::ok);
	}

	/**
	 * Waits until a worker's live threads are back within the tolerance of a baseline.
	 */
	private int awaitThreads(SampleWorker worker, int baseline) {
		long deadline = now() + THREAD_WAIT.toNanos();
		int threads = threads(worker);
		while ((threads < 0 || threads > baseline + THREAD_TOLERANCE) && now() - deadline < 0) {
			pause(Duration.ofMillis(500));
			threads = threads(worker);
		}
		return threads;
	}

	private @Nullable Long firstHealth(String role, long from, long to, Predicate<String> condition) {
		return this.monitor.probes()
			.stream()
			.filter((p) -> p.role().equals(role) && p.at() >= from && p.at() <= to && condition.test(p.health()))
			.map(Probe::at)
			.findFirst()
			.orElse(null);
	}

	// ---- the registry, health and meters, over HTTP

	private void putBackIfAbsent(String agent, byte[] metadata) {
		if (registryGet(agent).statusCode() == 404) {
			registryPut(agent, metadata, ownToken(agent));
		}
	}

	/**
	 * Puts a forged entry's value back; refused (and so harmless) while the entry is the
	 * owner's, as the forgery was.
	 */
	private void putBack(String agent, byte[] metadata) {
		registryPut(agent, metadata, otherWorkersToken(agent));
	}

	/**
	 * The registry client token whose prefixes cover the agent's name: a worker's own. It
	 * may take the name back from any holder but another client.
	 */
	private String ownToken(String agent) {
		return agent.equals(agentName(decode())) ? SampleWorker.TOKEN : SampleWorker.PREFILL_TOKEN;
	}

	/** The token of the other worker, whose prefixes do not cover the agent's name. */
	private String otherWorkersToken(String agent) {
		return agent.equals(agentName(decode())) ? SampleWorker.PREFILL_TOKEN : SampleWorker.TOKEN;
	}

	private URI registryUri(String agent) {
		return prefill().uri().resolve("/nixl/agents/" + encode(agent) + "/metadata");
	}

	private HttpResponse<byte[]> registryGet(String agent) {
		return send(registryRequest(agent).GET(), HttpResponse.BodyHandlers.ofByteArray());
	}

	private int registryDelete(String agent) {
		return send(registryRequest(agent).DELETE(), HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	private int registryPut(String agent, byte[] metadata, String token) {
		return send(registryRequest(agent, token).header("Content-Type", "application/octet-stream")
			.PUT(HttpRequest.BodyPublishers.ofByteArray(metadata)), HttpResponse.BodyHandlers.discarding())
			.statusCode();
	}

	private HttpRequest.Builder registryRequest(String agent) {
		return registryRequest(agent, SampleWorker.TOKEN);
	}

	private HttpRequest.Builder registryRequest(String agent, String token) {
		return HttpRequest.newBuilder(registryUri(agent))
			.timeout(Duration.ofSeconds(5))
			.header("Authorization", "Bearer " + token);
	}

	private static <T> HttpResponse<T> send(HttpRequest.Builder request, HttpResponse.BodyHandler<T> handler) {
		try {
			return HTTP.send(request.build(), handler);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Percent-encodes an agent name as one path segment, dots included (the registry's
	 * rule).
	 */
	private static String encode(String agent) {
		StringBuilder encoded = new StringBuilder();
		for (byte b : agent.getBytes(StandardCharsets.UTF_8)) {
			char c = (char) (b & 0xff);
			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
					|| c == '~') {
				encoded.append(c);
			}
			else {
				encoded.append(String.format(Locale.ROOT, "%%%02X", b & 0xff));
			}
		}
		return encoded.toString();
	}

	private static String agentName(SampleWorker worker) {
		return worker.getJson("/actuator/nixl").path("agent").asString();
	}

	/** A worker's health document, or {@code null} when it cannot be read within 2 s. */
	private static @Nullable JsonNode health(SampleWorker worker) {
		try {
			HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(worker.uri().resolve("/actuator/health"))
				.timeout(Duration.ofSeconds(2))
				.build(), HttpResponse.BodyHandlers.ofString());
			return SampleWorker.JSON.readTree(response.body());
		}
		catch (IOException | RuntimeException ex) {
			return null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return null;
		}
	}

	/** A worker's {@code jvm.threads.live}, or -1 when it cannot be read within 2 s. */
	private static int threads(SampleWorker worker) {
		try {
			HttpResponse<String> response = HTTP
				.send(HttpRequest.newBuilder(worker.uri().resolve("/actuator/metrics/jvm.threads.live"))
					.headers(worker.authorization())
					.timeout(Duration.ofSeconds(2))
					.build(), HttpResponse.BodyHandlers.ofString());
			if (response.statusCode() != 200) {
				return -1;
			}
			return (int) SampleWorker.JSON.readTree(response.body())
				.path("measurements")
				.path(0)
				.path("value")
				.asDouble();
		}
		catch (IOException | RuntimeException ex) {
			return -1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return -1;
		}
	}

	// ---- oversize bodies

	/**
	 * How an oversize request ended: the status of the answer, or what happened instead,
	 * and when, from the start of the request.
	 */
	record Oversize(String status, long nanos, boolean chunked) {

		@Override
		public String toString() {
			return this.status + (this.chunked ? " chunked " : " sized ") + seconds(this.nanos);
		}

	}

	/**
	 * Sends {@code POST /generate} with a JSON body of 64 MiB (a prompt of 'a's),
	 * streamed from a small buffer while the answer is read on this thread: the answer
	 * counts as soon as its status line arrives, even when the server stops reading the
	 * body.
	 */
	private static Oversize sendOversize(int port, boolean chunked) {
		long start = System.nanoTime();
		long deadline = start + OVERSIZE_WAIT.toNanos();
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
			socket.setSoTimeout(250);
			OutputStream out = socket.getOutputStream();
			String head = "POST /generate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
					+ (chunked ? "Transfer-Encoding: chunked\r\n" : "Content-Length: " + OVERSIZE_BYTES + "\r\n")
					+ "Connection: close\r\n\r\n";
			out.write(head.getBytes(StandardCharsets.US_ASCII));
			Thread writer = Thread.ofPlatform().name("fault-oversize-body").start(() -> writeBody(out, chunked));
			try {
				String status = readStatus(socket.getInputStream(), deadline);
				return new Oversize(status, System.nanoTime() - start, chunked);
			}
			finally {
				socket.close();
				writer.join(Duration.ofSeconds(5));
			}
		}
		catch (IOException ex) {
			return new Oversize(ex.getClass().getSimpleName(), System.nanoTime() - start, chunked);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return new Oversize("interrupted", System.nanoTime() - start, chunked);
		}
	}

	private static void writeBody(OutputStream out, boolean chunked) {
		byte[] prefix = "{\"prompt\":\"".getBytes(StandardCharsets.US_ASCII);
		byte[] suffix = "\"}".getBytes(StandardCharsets.US_ASCII);
		byte[] fill = new byte[64 << 10];
		Arrays.fill(fill, (byte) 'a');
		try {
			writePart(out, prefix, prefix.length, chunked);
			long left = OVERSIZE_BYTES - prefix.length - suffix.length;
			while (left > 0) {
				int n = (int) Math.min(fill.length, left);
				writePart(out, fill, n, chunked);
				left -= n;
			}
			writePart(out, suffix, suffix.length, chunked);
			if (chunked) {
				out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
			}
			out.flush();
		}
		catch (IOException ex) {
			// the server stopped reading, or the socket was closed once the answer came
		}
	}

	private static void writePart(OutputStream out, byte[] bytes, int length, boolean chunked) throws IOException {
		if (chunked) {
			out.write((Integer.toHexString(length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
		}
		out.write(bytes, 0, length);
		if (chunked) {
			out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
		}
	}

	/** Reads the status code of an HTTP answer, or says why there is none. */
	private static String readStatus(InputStream in, long deadline) throws IOException {
		StringBuilder line = new StringBuilder();
		while (System.nanoTime() - deadline < 0) {
			int b;
			try {
				b = in.read();
			}
			catch (SocketTimeoutException ex) {
				continue;
			}
			if (b < 0) {
				return "closed without an answer";
			}
			if (b == '\n') {
				String[] parts = line.toString().trim().split(" ");
				return (parts.length > 1) ? parts[1] : "bad status line";
			}
			if (line.length() < 200) {
				line.append((char) b);
			}
		}
		return "no answer in " + OVERSIZE_WAIT.toSeconds() + " s";
	}

	// ---- many sockets at once

	/**
	 * Many non-blocking connections to one address, held open until the server closes
	 * them or the wait ends; each optionally sends a first chunk, then another every
	 * {@link #TRICKLE_EVERY}.
	 */
	private final class Sockets {

		private final InetSocketAddress address;

		private final int count;

		private final byte @Nullable [] first;

		private final @Nullable IntFunction<byte[]> trickle;

		int connected;

		int refused;

		int closedAtOnce;

		int closedLater;

		int stillOpen;

		int neverConnected;

		int halfOpen;

		long lastClosed;

		Sockets(InetSocketAddress address, int count, byte @Nullable [] first, @Nullable IntFunction<byte[]> trickle) {
			this.address = address;
			this.count = count;
			this.first = first;
			this.trickle = trickle;
		}

		/** One connection: when it connected, or 0 before. */
		private static final class Held {

			long connectedAt;

		}

		void run(Duration wait, Runnable beforeRelease) {
			long deadline = now() + wait.toNanos();
			List<SocketChannel> channels = new ArrayList<>();
			try (Selector selector = Selector.open()) {
				ByteBuffer sink = ByteBuffer.allocate(4096);
				long nextTrickle = now() + TRICKLE_EVERY.toNanos();
				int round = 0;
				while (now() - deadline < 0 && (channels.size() < this.count || !selector.keys().isEmpty())) {
					// Batches below the servers' accept backlog, so that a connection
					// counts as open
					// when the server accepted it, not while the kernel holds it
					// half-open.
					for (int i = 0; i < BATCH && channels.size() < this.count; i++) {
						SocketChannel channel = SocketChannel.open();
						channels.add(channel);
						connect(channel, selector);
					}
					selector.select(10);
					for (SelectionKey key : selector.selectedKeys()) {
						SocketChannel channel = (SocketChannel) key.channel();
						Held held = (Held) key.attachment();
						try {
							if (key.isConnectable()) {
								channel.finishConnect();
								opened(channel, held);
								key.interestOps(SelectionKey.OP_READ);
							}
							else if (key.isReadable()) {
								sink.clear();
								if (channel.read(sink) < 0) {
									closed(key, held);
								}
							}
						}
						catch (IOException ex) {
							closed(key, held);
						}
					}
					selector.selectedKeys().clear();
					if (this.trickle != null && now() - nextTrickle >= 0) {
						round++;
						for (SelectionKey key : selector.keys()) {
							if (key.isValid() && ((Held) key.attachment()).connectedAt != 0) {
								try {
									((SocketChannel) key.channel()).write(ByteBuffer.wrap(this.trickle.apply(round)));
								}
								catch (IOException ex) {
									closed(key, (Held) key.attachment());
								}
							}
						}
						nextTrickle += TRICKLE_EVERY.toNanos();
					}
				}
				beforeRelease.run();
				Set<Integer> established = establishedServerSides(this.address.getPort());
				for (SelectionKey key : selector.keys()) {
					if (key.isValid()) {
						if (((Held) key.attachment()).connectedAt == 0) {
							this.neverConnected++;
						}
						else if (established.contains(localPort((SocketChannel) key.channel()))) {
							this.stillOpen++;
						}
						else {
							// the client completed the handshake but the server's accept
							// queue was
							// full: the kernel keeps it half-open and the server never
							// saw it
							this.halfOpen++;
						}
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			finally {
				for (SocketChannel channel : channels) {
					try {
						channel.close();
					}
					catch (IOException ex) {
						// closing is all that matters
					}
				}
			}
		}

		private void connect(SocketChannel channel, Selector selector) throws IOException {
			channel.configureBlocking(false);
			Held held = new Held();
			try {
				if (channel.connect(this.address)) {
					opened(channel, held);
					channel.register(selector, SelectionKey.OP_READ, held);
				}
				else {
					channel.register(selector, SelectionKey.OP_CONNECT, held);
				}
			}
			catch (IOException ex) {
				this.refused++;
				channel.close();
			}
		}

		private void opened(SocketChannel channel, Held held) throws IOException {
			held.connectedAt = now();
			this.connected++;
			if (this.first != null) {
				channel.write(ByteBuffer.wrap(this.first));
			}
		}

		private void closed(SelectionKey key, Held held) {
			key.cancel();
			long at = now();
			if (held.connectedAt == 0) {
				this.refused++;
			}
			else if (at - held.connectedAt <= AT_ONCE.toNanos()) {
				this.closedAtOnce++;
			}
			else {
				this.closedLater++;
			}
			this.lastClosed = Math.max(this.lastClosed, at);
			try {
				key.channel().close();
			}
			catch (IOException ex) {
				// closing is all that matters
			}
		}

		String summary() {
			return this.count + " sockets: " + this.connected + " connected, " + this.refused + " refused, "
					+ this.closedAtOnce + " closed by the server within " + AT_ONCE.toSeconds() + " s, "
					+ this.closedLater + " closed later, " + this.stillOpen + " still open when released, "
					+ this.halfOpen + " never established on the server's side (its accept queue was full), "
					+ this.neverConnected + " never connected";
		}

		private static int localPort(SocketChannel channel) {
			try {
				return ((InetSocketAddress) channel.getLocalAddress()).getPort();
			}
			catch (IOException ex) {
				return -1;
			}
		}

		/**
		 * The client ports of the connections to the given local server port that the
		 * kernel holds established on the server's side (accepted, or waiting in the
		 * accept queue), read from {@code /proc/net/tcp} and {@code /proc/net/tcp6}.
		 */
		private static Set<Integer> establishedServerSides(int serverPort) throws IOException {
			Set<Integer> clients = new HashSet<>();
			for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
				Path path = Path.of(table);
				if (!Files.isReadable(path)) {
					continue;
				}
				for (String line : Files.readAllLines(path, StandardCharsets.US_ASCII)) {
					String[] fields = line.trim().split("\\s+");
					// sl local_address rem_address st ...; addresses are hex
					// address:port, st 01 is ESTABLISHED
					if (fields.length < 4 || !fields[0].endsWith(":") || !fields[3].equals("01")) {
						continue;
					}
					int local = Integer.parseInt(fields[1].substring(fields[1].lastIndexOf(':') + 1), 16);
					if (local == serverPort) {
						clients.add(Integer.parseInt(fields[2].substring(fields[2].lastIndexOf(':') + 1), 16));
					}
				}
			}
			return clients;
		}

	}

	// ---- continuous load and monitoring

	/** One request of the load: when it was sent and answered, and what came back. */
	record Sample(String phase, long start, long end, RequestResult result) {

		boolean ok() {
			return this.result.ok();
		}

		/**
		 * The kind of outcome: {@code ok}, {@code HTTP <status> <problem title>}, the
		 * exception's class for a request that got no answer, or {@value #WRONG_DATA} for
		 * an answer of 200 whose data did not check out.
		 */
		String kind() {
			if (this.result.ok()) {
				return "ok";
			}
			String error = String.valueOf(this.result.error());
			Matcher status = STATUS.matcher(error);
			if (status.find()) {
				Matcher title = TITLE.matcher(error);
				return "HTTP " + status.group(1) + (title.find() ? " " + title.group(1) : "");
			}
			String failed = "POST /generate failed: ";
			if (error.startsWith(failed)) {
				String exception = error.substring(failed.length());
				int colon = exception.indexOf(':');
				String type = (colon < 0) ? exception : exception.substring(0, colon);
				return type.substring(type.lastIndexOf('.') + 1);
			}
			if (error.equals("interrupted")) {
				return error;
			}
			return WRONG_DATA;
		}

		@Override
		public String toString() {
			return seconds(this.start) + "+" + seconds(this.end - this.start) + " "
					+ (this.result.ok() ? "ok" : this.result.error());
		}

	}

	/**
	 * A few client threads sending verified requests until stopped; bounded in count and
	 * time.
	 */
	private final class Load {

		private final LoadGenerator client;

		private final List<Sample> samples = Collections.synchronizedList(new ArrayList<>());

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final AtomicInteger next = new AtomicInteger();

		private final List<Thread> threads = new ArrayList<>();

		private final long deadline = now() + Duration.ofMinutes(9).toNanos();

		/**
		 * What the pair is going through; each answer is counted under the phase it ended
		 * in.
		 */
		volatile String phase = "warm-up";

		Load() {
			this.client = new LoadGenerator(LoadOptions
				.parse(new String[] { "--url", "http://127.0.0.1:" + SampleFaultIT.this.decodePort, "--prompt-tokens",
						"48", "--max-tokens", "8", "--timeout", Long.toString(CLIENT_TIMEOUT.toSeconds()) }));
			for (int i = 0; i < CLIENTS; i++) {
				this.threads.add(Thread.ofPlatform().name("fault-load-" + i).start(this::loop));
			}
		}

		private void loop() {
			while (this.running.get() && now() - this.deadline < 0) {
				int index = this.next.getAndIncrement();
				if (index >= MAX_REQUESTS) {
					return;
				}
				long start = now();
				RequestResult result = this.client.send(index);
				this.samples.add(new Sample(this.phase, start, now(), result));
				// Leaves CPU to the workers and the faults on a small machine, and bounds
				// the
				// requests while a worker refuses them at once.
				pause(Duration.ofMillis(result.ok() ? 20 : 100));
			}
		}

		List<Sample> samples() {
			synchronized (this.samples) {
				return List.copyOf(this.samples);
			}
		}

		void stop() {
			this.running.set(false);
			for (Thread thread : this.threads) {
				try {
					thread.join(CLIENT_TIMEOUT.plusSeconds(5));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
			}
		}

	}

	/** One look at a worker: its health status and live threads. */
	record Probe(long at, String role, String health, int threads) {

	}

	/** Reads both workers' health and live threads four times a second. */
	private final class Monitor {

		private final List<Probe> probes = Collections.synchronizedList(new ArrayList<>());

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final Thread thread;

		private final long deadline = now() + Duration.ofMinutes(9).toNanos();

		Monitor() {
			this.thread = Thread.ofPlatform().name("fault-monitor").start(this::loop);
		}

		private void loop() {
			while (this.running.get() && now() - this.deadline < 0) {
				for (String role : List.of("prefill", "decode")) {
					SampleWorker worker = role.equals("prefill") ? SampleFaultIT.this.prefill
							: SampleFaultIT.this.decode;
					if (worker == null) {
						continue;
					}
					JsonNode health = health(worker);
					String status = (health != null) ? health.path("status").asString() : "UNREACHABLE";
					this.probes.add(new Probe(now(), role, status, threads(worker)));
				}
				pause(Duration.ofMillis(250));
			}
		}

		List<Probe> probes() {
			synchronized (this.probes) {
				return List.copyOf(this.probes);
			}
		}

		int peak(String role, long from, long to) {
			return probes().stream()
				.filter((p) -> p.role().equals(role) && p.at() >= from && p.at() <= to)
				.mapToInt(Probe::threads)
				.max()
				.orElse(-1);
		}

		Set<String> statuses(String role, long from, long to) {
			Set<String> seen = new LinkedHashSet<>();
			probes().stream()
				.filter((p) -> p.role().equals(role) && p.at() >= from && p.at() <= to)
				.forEach((p) -> seen.add(p.health()));
			return seen;
		}

		void stop() {
			this.running.set(false);
			try {
				this.thread.join(Duration.ofSeconds(10));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	/** What one fault did and what was measured. */
	private static final class FaultRecord {

		final String name;

		final List<String> notes = new ArrayList<>();

		final Map<String, Integer> answers = new TreeMap<>();

		final Map<String, Set<String>> healthSeen = new TreeMap<>();

		long start;

		long end;

		@Nullable Long detection;

		@Nullable Long recovery;

		int prefillBefore;

		int prefillPeak;

		int prefillAfter;

		int decodeBefore;

		int decodePeak;

		int decodeAfter;

		boolean prefillRestarted;

		@Nullable Runnable repair;

		@Nullable String repaired;

		FaultRecord(String name) {
			this.name = name;
		}

		void note(String note) {
			this.notes.add(note);
		}

	}

	// ---- the report

	private String report(List<Sample> all) {
		StringBuilder out = new StringBuilder();
		Map<String, Integer> kinds = new TreeMap<>();
		all.forEach((s) -> kinds.merge(s.kind(), 1, Integer::sum));
		long verified = all.stream().filter(Sample::ok).count();
		out.append("Fault test of the sample (embedded engine), ")
			.append(CLIENTS)
			.append(" clients, ")
			.append(all.size())
			.append(" requests in ")
			.append(seconds(now()))
			.append('\n');
		out.append("answers verified: ")
			.append(verified)
			.append("; wrong data: ")
			.append(kinds.getOrDefault(WRONG_DATA, 0))
			.append('\n');
		Map<String, String> examples = new TreeMap<>();
		all.forEach((s) -> examples.putIfAbsent(s.kind(), String.valueOf(s.result().error())));
		out.append("outcomes by kind (with the first error of each):\n");
		kinds.forEach((kind, n) -> out.append(String.format(Locale.ROOT, "  %6d  %s%s%n", n, kind,
				kind.equals("ok") ? "" : "\n          " + abbreviate(examples.get(kind), 300))));
		Map<String, Map<String, Integer>> phases = new java.util.LinkedHashMap<>();
		all.forEach((s) -> phases.computeIfAbsent(s.phase(), (p) -> new TreeMap<>()).merge(s.kind(), 1, Integer::sum));
		out.append("outcomes by phase (an answer counts in the phase it ended in):\n");
		phases.forEach((phase, byKind) -> out.append("  ").append(phase).append(": ").append(byKind).append('\n'));
		out.append(String.format(Locale.ROOT, "%n%-28s %10s %10s %18s %18s  %s%n", "fault", "detection", "recovery",
				"prefill thr b/p/a", "decode thr b/p/a", "answers during the fault / health seen"));
		for (FaultRecord fault : this.faults) {
			out.append(String.format(Locale.ROOT, "%-28s %10s %10s %18s %18s  %s / %s%n", fault.name,
					seconds(fault.detection), seconds(fault.recovery),
					fault.prefillBefore + "/" + fault.prefillPeak + "/" + fault.prefillAfter,
					fault.decodeBefore + "/" + fault.decodePeak + "/" + fault.decodeAfter, fault.answers,
					fault.healthSeen));
			for (String note : fault.notes) {
				out.append("      ").append(note).append('\n');
			}
			if (fault.repaired != null) {
				out.append("      NOT RECOVERED within ")
					.append(RECOVERY_WAIT.toSeconds())
					.append(" s; repaired: ")
					.append(fault.repaired)
					.append('\n');
			}
		}
		for (String death : this.deaths) {
			out.append("DIED: ").append(death).append('\n');
		}
		return out.toString();
	}

	private static String seconds(@Nullable Long nanos) {
		return (nanos == null) ? "none" : String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
	}

	private static String seconds(long nanos) {
		return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
	}

	private static String abbreviate(String text, int max) {
		return (text.length() > max) ? text.substring(0, max) + "..." : text;
	}

	private long now() {
		return System.nanoTime() - this.origin;
	}

	private SampleWorker prefill() {
		return Objects.requireNonNull(this.prefill, "prefill");
	}

	private SampleWorker decode() {
		return Objects.requireNonNull(this.decode, "decode");
	}

	private static void pause(Duration duration) {
		SampleWorker.pause(duration);
	}

}
