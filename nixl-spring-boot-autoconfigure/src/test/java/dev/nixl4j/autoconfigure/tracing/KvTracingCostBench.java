package dev.nixl4j.autoconfigure.tracing;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvObserver;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.LeaseOutcome;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.micrometer.tracing.ObservationKvObserver;
import io.micrometer.observation.ObservationHandler.FirstMatchingCompositeObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;

/**
 * What KV tracing costs per request, in one process: a producer and a consumer agent per
 * mode on one engine, each request a lease on the producer and a pull (READ and the
 * producer's confirmation) on the consumer, with the three modes measured in the same
 * run, in rounds whose order alternates:
 * <ul>
 * <li>{@code a}: no observer ({@link KvObserver#NONE}), what an application that does not
 * trace runs;</li>
 * <li>{@code b}: {@link ObservationKvObserver} over an {@link ObservationRegistry} with
 * the OpenTelemetry bridge, as Spring Boot wires it, and an SDK tracer that samples every
 * trace; spans go through a {@link BatchSpanProcessor} to an in-memory exporter that is
 * cleared after each round (what a traced service pays in its own process, without the
 * network export);</li>
 * <li>{@code c}: the same with the sampler off: observations and the W3C context carried,
 * no span recorded (the requests a service samples out).</li>
 * </ul>
 * The producer and the consumer of modes {@code b} and {@code c} have a tracing each, as
 * two services do. Per mode and round it prints requests per second, the mean, p50 and
 * p99 of a request (lease + pull until the producer's confirmation), the bytes allocated
 * per request by all the JVM's threads ({@code getTotalThreadAllocatedBytes} of
 * {@link com.sun.management.ThreadMXBean}, which counts the producer's thread and the
 * span processors' too) and by the requesting thread alone, and the process's CPU time
 * per request; then the medians over the rounds and the differences {@code b - a} and
 * {@code c - a}, paired within each round, with their spread. No timed assertion: it
 * checks only that every request completed, that the last request's blocks arrived byte
 * for byte, and that the modes trace as they should (mode {@code b}: five spans sharing
 * one trace per request, nested as documented; {@code a}: no context in the leases;
 * {@code c}: a context in every lease, no span). A done message the consumer resends
 * because the producer's answer is late (a loaded machine) gets a second
 * {@value ObservationKvObserver#CONFIRM} span; the resends are counted and printed. A
 * failed check exits with status 1.
 * <p>
 * Run it with {@code src/bench/kv-tracing-cost.sh}; options: {@code --engine
 * embedded|native}, {@code --blocks N} (per request, of kv-bench's layout: 32 layers x K
 * and V of 32 KiB blocks, 2 MiB per block; default 1), {@code --rounds N},
 * {@code --requests N} (per mode and round), {@code --warmup N} (per mode).
 */
public final class KvTracingCostBench implements AutoCloseable {

	/** kv-bench's layout: 32 layers, K and V, 32 KiB per layer per K or V block. */
	static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(32)
		.blocks(1)
		.blockSize(16)
		.kvHeads(8)
		.headDim(128)
		.dtypeSize(2)
		.build();

	static final int MAX_BLOCKS = 1024;

	static final int MAX_REQUESTS = 1_000_000;

	private static final Duration WAIT = Duration.ofSeconds(60);

	/** The spans of one traced request: two on the producer, three on the consumer. */
	static final List<String> SPANS = List.of(ObservationKvObserver.LEASE, ObservationKvObserver.CONFIRM,
			ObservationKvObserver.PULL, ObservationKvObserver.READ, ObservationKvObserver.CONFIRMATION);

	private static final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory
		.getThreadMXBean();

	private static final com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory
		.getOperatingSystemMXBean();

	/**
	 * How a request is observed.
	 */
	enum Mode {

		/** No observer. */
		NONE("a", "no observer"),

		/** Observations and spans, every trace sampled. */
		TRACED("b", "traced, every trace sampled"),

		/** Observations and the context carried, the sampler off. */
		UNSAMPLED("c", "traced, sampler off");

		final String letter;

		final String description;

		Mode(String letter, String description) {
			this.letter = letter;
			this.description = description;
		}

	}

	private final List<AutoCloseable> resources = new ArrayList<>();

	private final InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();

	private final int blocks;

	private final PagedKvCache producerCache;

	private final Map<Mode, Side> sides = new EnumMap<>(Mode.class);

	private final Random random = new Random(42);

	private final String engineDescription;

	private int requestCounter;

	/**
	 * Starts a producer and a consumer per mode.
	 * @param engine the engine of every agent
	 * @param blocks blocks per request
	 * @param requestsPerRound the most requests a round will run (the span processors
	 * queue a round's spans)
	 */
	KvTracingCostBench(Engine engine, int blocks, int requestsPerRound) {
		this.blocks = blocks;
		try {
			String base = "kv-tracing-cost-" + ProcessHandle.current().pid();
			NixlAgent prefill = track(NixlAgent.create(AgentConfig.builder(base + "-prefill").engine(engine).build()));
			this.engineDescription = prefill.engineDescription();
			// twice the request's blocks, leased at random as kv-bench does
			this.producerCache = track(PagedKvCache.allocate(prefill, LAYOUT.withNumBlocks(2 * blocks)));
			int[] all = this.producerCache.allocator().allocate(2 * blocks);
			for (int region = 0; region < LAYOUT.regionCount(); region++) {
				for (int block : all) {
					Bytes.fill(this.producerCache.block(region, block), region * 1_000_003L + block);
				}
			}
			track(MetadataPublication.builder(this.exchange, prefill).build()).publish();
			for (Mode mode : Mode.values()) {
				Tracing prefillTracing = (mode != Mode.NONE) ? track(new Tracing(mode == Mode.TRACED, requestsPerRound))
						: null;
				Tracing decodeTracing = (mode != Mode.NONE) ? track(new Tracing(mode == Mode.TRACED, requestsPerRound))
						: null;
				NixlAgent decode = track(
						NixlAgent.create(AgentConfig.builder(base + "-decode-" + mode.letter).engine(engine).build()));
				PagedKvCache cache = track(PagedKvCache.allocate(decode, LAYOUT.withNumBlocks(blocks)));
				track(MetadataPublication.builder(this.exchange, decode).build()).publish();
				// one producer per mode on the one cache (an observer is fixed when a
				// producer
				// is built), each with its own message prefix so that each answers its
				// own
				// consumer only
				String prefix = KvProducer.DEFAULT_PREFIX + mode.letter + "/";
				KvProducer producer = track(KvProducer.builder(this.producerCache)
					.peers(PeerLoader.of(this.exchange))
					.prefix(prefix)
					.observer((prefillTracing != null) ? prefillTracing.observer() : KvObserver.NONE)
					.build());
				KvConsumer consumer = KvConsumer.builder(cache)
					.peers(PeerLoader.of(this.exchange))
					.prefix(prefix)
					.observer((decodeTracing != null) ? decodeTracing.observer() : KvObserver.NONE)
					.build();
				consumer.connect(producer.handle());
				this.sides.put(mode, new Side(producer, cache, consumer, cache.allocator().allocate(blocks),
						prefillTracing, decodeTracing));
			}
		}
		catch (RuntimeException | Error ex) {
			try {
				close();
			}
			catch (Exception suppressed) {
				ex.addSuppressed(suppressed);
			}
			throw ex;
		}
	}

	private <T extends AutoCloseable> T track(T resource) {
		this.resources.add(resource);
		return resource;
	}

	String engineDescription() {
		return this.engineDescription;
	}

	/**
	 * Runs requests one after the other in a mode.
	 * @param mode the mode
	 * @param count how many requests
	 * @return what they took and what they traced
	 */
	Round round(Mode mode, int count) {
		Side side = this.sides.get(mode);
		KvProducer producer = side.producer();
		String[] requestIds = new String[count];
		int[][] leased = new int[count][];
		for (int i = 0; i < count; i++) {
			requestIds[i] = "req-" + mode.letter + "-" + (this.requestCounter++);
			leased[i] = randomBlocks();
		}
		for (int region = 0; region < LAYOUT.regionCount(); region++) {
			for (int block : side.local()) {
				side.cache().block(region, block).fill((byte) 0);
			}
		}
		long completedBefore = producer.endedLeases(LeaseOutcome.COMPLETED);
		long resendsBefore = side.consumer().confirmationResends();
		long[] nanos = new long[count];
		int withContext = 0;
		Thread caller = Thread.currentThread();
		long allocatedBefore = threads.getTotalThreadAllocatedBytes();
		long callerBefore = threads.getThreadAllocatedBytes(caller.threadId());
		long cpuBefore = os.getProcessCpuTime();
		long start = System.nanoTime();
		for (int i = 0; i < count; i++) {
			long begin = System.nanoTime();
			// blocks are leased again in later rounds: each lease takes over a reference
			// of
			// its own
			producer.cache().allocator().retain(leased[i]);
			KvLease lease = producer.lease(requestIds[i], leased[i]);
			side.consumer().pull(lease.params(), side.local(), WAIT);
			nanos[i] = System.nanoTime() - begin;
			if (!lease.params().traceparent().isEmpty()) {
				withContext++;
			}
		}
		long wallNanos = System.nanoTime() - start;
		long callerAllocated = threads.getThreadAllocatedBytes(caller.threadId()) - callerBefore;
		// the producer's answers and the lease spans end after the pulls return
		boolean ended = producer.awaitLeasesEnded(WAIT);
		if (side.prefillTracing() != null) {
			side.prefillTracing().flush();
			side.decodeTracing().flush();
		}
		long allocated = threads.getTotalThreadAllocatedBytes() - allocatedBefore;
		long cpuNanos = os.getProcessCpuTime() - cpuBefore;
		long completed = producer.endedLeases(LeaseOutcome.COMPLETED) - completedBefore;
		long resends = side.consumer().confirmationResends() - resendsBefore;
		boolean verified = ended && arrived(side, leased[count - 1]);
		Traces traces = (side.prefillTracing() != null)
				? Traces.of(side.prefillTracing().drain(), side.decodeTracing().drain()) : Traces.NONE;
		Arrays.sort(nanos);
		return new Round(mode, nanos, wallNanos, allocated, callerAllocated, cpuNanos, completed, resends, verified,
				withContext, traces);
	}

	private int[] randomBlocks() {
		int[] ids = new int[2 * this.blocks];
		Arrays.setAll(ids, (i) -> i);
		for (int i = 0; i < this.blocks; i++) {
			int j = i + this.random.nextInt(ids.length - i);
			int swap = ids[i];
			ids[i] = ids[j];
			ids[j] = swap;
		}
		return Arrays.copyOf(ids, this.blocks);
	}

	/** Whether the consumer's blocks hold the producer's blocks of the last request. */
	private boolean arrived(Side side, int[] remote) {
		for (int region = 0; region < LAYOUT.regionCount(); region++) {
			for (int i = 0; i < remote.length; i++) {
				MemorySegment local = side.cache().block(region, side.local()[i]);
				if (!Bytes.same(local, this.producerCache.block(region, remote[i]))) {
					return false;
				}
			}
		}
		return true;
	}

	@Override
	public void close() throws Exception {
		Exception failure = null;
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			try {
				this.resources.get(i).close();
			}
			catch (Exception ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		this.exchange.close();
		if (failure != null) {
			throw failure;
		}
	}

	/**
	 * Runs the benchmark and prints its figures.
	 * @param args {@code --engine embedded|native}, {@code --blocks N},
	 * {@code --rounds N}, {@code --requests N}, {@code --warmup N}
	 * @throws Exception when it cannot run
	 */
	public static void main(String[] args) throws Exception {
		Options options;
		try {
			options = Options.parse(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println("kv-tracing-cost: " + ex.getMessage());
			System.err.println(Options.USAGE);
			System.exit(2);
			return;
		}
		boolean ok;
		try (KvTracingCostBench bench = new KvTracingCostBench(options.engine(), options.blocks(),
				Math.max(options.requests(), options.warmup()))) {
			ok = bench.run(options);
		}
		System.exit(ok ? 0 : 1);
	}

	/**
	 * Warms every mode up, then runs the rounds and prints them and their summary.
	 * @return whether every check held
	 */
	boolean run(Options options) {
		long bytes = this.blocks * (long) LAYOUT.regionCount() * LAYOUT.blockLength();
		System.out.printf(Locale.ROOT, "KV tracing cost: %s engine (%s)%n",
				options.engine().name().toLowerCase(Locale.ROOT), this.engineDescription);
		System.out.printf(Locale.ROOT,
				"per request: a lease on the producer, a pull of %d block(s) = %d descriptors of %d KiB = %.1f MiB"
						+ " (one READ) and the producer's confirmation; integrity %s; one process, one request at a time%n",
				this.blocks, this.blocks * LAYOUT.regionCount(), LAYOUT.blockLength() >> 10, bytes / 1048576.0,
				this.sides.get(Mode.NONE).producer().integrity().name().toLowerCase(Locale.ROOT));
		System.out.printf(Locale.ROOT,
				"%d rounds x %d requests per mode, after %d warm-up requests per mode; order a b c, then c b a, ...;"
						+ " %d cores, load %s%n",
				options.rounds(), options.requests(), options.warmup(), Runtime.getRuntime().availableProcessors(),
				load());
		for (Mode mode : Mode.values()) {
			System.out.printf(Locale.ROOT, "  (%s) %s%n", mode.letter, mode.description);
		}
		boolean ok = true;
		if (options.warmup() > 0) {
			for (Mode mode : Mode.values()) {
				ok &= check(round(mode, options.warmup()), "warm-up");
			}
		}
		List<List<Round>> rounds = new ArrayList<>();
		System.out.println();
		System.out.printf(Locale.ROOT, "%-6s %-5s %10s %10s %10s %10s %12s %12s %10s %8s%n", "round", "mode", "req/s",
				"mean us", "p50 us", "p99 us", "alloc B/req", "caller B/req", "cpu us/req", "resends");
		for (int r = 0; r < options.rounds(); r++) {
			List<Mode> order = new ArrayList<>(List.of(Mode.values()));
			if (r % 2 == 1) {
				order = order.reversed();
			}
			List<Round> round = new ArrayList<>();
			for (Mode mode : order) {
				Round result = round(mode, options.requests());
				ok &= check(result, "round " + (r + 1));
				System.out.printf(Locale.ROOT, "%-6d %-5s %10.0f %10.1f %10.1f %10.1f %12.0f %12.0f %10.1f %8d%n",
						r + 1, mode.letter, result.requestsPerSecond(), result.meanMicros(),
						result.percentileMicros(0.50), result.percentileMicros(0.99), result.allocatedPerRequest(),
						result.callerAllocatedPerRequest(), result.cpuMicrosPerRequest(), result.resends());
				round.add(result);
			}
			round.sort((x, y) -> x.mode().compareTo(y.mode()));
			rounds.add(round);
		}
		summarize(rounds);
		System.out.printf(Locale.ROOT, "%nload at the end %s; checks %s%n", load(), ok ? "passed" : "FAILED");
		return ok;
	}

	private static void summarize(List<List<Round>> rounds) {
		System.out.println();
		System.out.println("Medians over the rounds:");
		System.out.println();
		System.out.println(
				"| Mode | Requests/s | Mean (us) | p50 (us) | p99 (us) | Allocated B/request (all threads) | B/request (caller) | CPU us/request |");
		System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|");
		for (Mode mode : Mode.values()) {
			List<Round> of = rounds.stream().map((round) -> round.get(mode.ordinal())).toList();
			System.out.printf(Locale.ROOT, "| (%s) %s | %.0f | %.1f | %.1f | %.1f | %.0f | %.0f | %.1f |%n",
					mode.letter, mode.description, median(of, Round::requestsPerSecond), median(of, Round::meanMicros),
					median(of, (r) -> r.percentileMicros(0.50)), median(of, (r) -> r.percentileMicros(0.99)),
					median(of, Round::allocatedPerRequest), median(of, Round::callerAllocatedPerRequest),
					median(of, Round::cpuMicrosPerRequest));
		}
		System.out.println();
		System.out.println("Per request, against (a) in the same round: median [min .. max] over the rounds");
		for (Mode mode : List.of(Mode.TRACED, Mode.UNSAMPLED)) {
			System.out.printf(Locale.ROOT, "  (%s) - (a): mean %s us, p50 %s us, allocated %s B, cpu %s us%n",
					mode.letter, spread(rounds, mode, Round::meanMicros, "%+.1f"),
					spread(rounds, mode, (r) -> r.percentileMicros(0.50), "%+.1f"),
					spread(rounds, mode, Round::allocatedPerRequest, "%+.0f"),
					spread(rounds, mode, Round::cpuMicrosPerRequest, "%+.1f"));
		}
	}

	private static String spread(List<List<Round>> rounds, Mode mode, Figure figure, String format) {
		double[] differences = rounds.stream()
			.mapToDouble((round) -> figure.of(round.get(mode.ordinal())) - figure.of(round.get(Mode.NONE.ordinal())))
			.sorted()
			.toArray();
		return String.format(Locale.ROOT, format + " [" + format + " .. " + format + "]", median(differences),
				differences[0], differences[differences.length - 1]);
	}

	private static double median(List<Round> rounds, Figure figure) {
		return median(rounds.stream().mapToDouble(figure::of).sorted().toArray());
	}

	private static double median(double[] sorted) {
		int n = sorted.length;
		return (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	}

	private static boolean check(Round round, String where) {
		List<String> problems = round.problems();
		for (String problem : problems) {
			System.out.printf(Locale.ROOT, "CHECK FAILED (%s, mode %s): %s%n", where, round.mode().letter, problem);
		}
		return problems.isEmpty();
	}

	private static String load() {
		double load = os.getSystemLoadAverage();
		return (load < 0) ? "unknown" : String.format(Locale.ROOT, "%.2f", load);
	}

	@FunctionalInterface
	private interface Figure {

		double of(Round round);

	}

	/**
	 * One mode's producer (on the one producer cache) and consumer.
	 */
	private record Side(KvProducer producer, PagedKvCache cache, KvConsumer consumer, int[] local,
			Tracing prefillTracing, Tracing decodeTracing) {
	}

	/**
	 * One service's tracing as Spring Boot wires it over OpenTelemetry: the SDK (W3C
	 * propagation, a parent-based sampler, a batch span processor to an in-memory
	 * exporter) bridged to Micrometer Observation by micrometer-tracing's handlers.
	 */
	static final class Tracing implements AutoCloseable {

		private final InMemorySpanExporter exporter = InMemorySpanExporter.create();

		private final SdkTracerProvider provider;

		private final ObservationRegistry registry = ObservationRegistry.create();

		private final ObservationKvObserver observer;

		/**
		 * Creates a service's tracing.
		 * @param sampled whether every trace is sampled (else none is)
		 * @param requestsPerRound the most requests a round will run
		 */
		Tracing(boolean sampled, int requestsPerRound) {
			// Spring Boot's defaults (management.opentelemetry.tracing.export.*: 5 s, 512
			// spans a batch), with a queue that holds a round's spans, so that none is
			// dropped and the check can count them
			this.provider = SdkTracerProvider.builder()
				.setSampler(Sampler.parentBased(sampled ? Sampler.traceIdRatioBased(1.0) : Sampler.alwaysOff()))
				.addSpanProcessor(BatchSpanProcessor.builder(this.exporter)
					.setScheduleDelay(Duration.ofSeconds(5))
					.setMaxExportBatchSize(512)
					.setMaxQueueSize(Math.max(2048, 3 * requestsPerRound))
					.build())
				.build();
			OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
				.setTracerProvider(this.provider)
				.setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
				.build();
			io.opentelemetry.api.trace.Tracer otelTracer = sdk.getTracer("nixl4j-kv-tracing-cost");
			OtelCurrentTraceContext current = new OtelCurrentTraceContext();
			OtelTracer tracer = new OtelTracer(otelTracer, current, (event) -> {
			}, new OtelBaggageManager(current, List.of(), List.of()));
			OtelPropagator propagator = new OtelPropagator(sdk.getPropagators(), otelTracer);
			this.registry.observationConfig()
				.observationHandler(new FirstMatchingCompositeObservationHandler(
						new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
						new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
						new DefaultTracingObservationHandler(tracer)));
			this.observer = new ObservationKvObserver(this.registry, propagator);
		}

		ObservationKvObserver observer() {
			return this.observer;
		}

		void flush() {
			this.provider.forceFlush().join(WAIT.toSeconds(), TimeUnit.SECONDS);
		}

		/** The spans exported since the last call. */
		List<SpanData> drain() {
			List<SpanData> spans = this.exporter.getFinishedSpanItems();
			this.exporter.reset();
			return spans;
		}

		@Override
		public void close() {
			this.provider.close();
		}

	}

	/**
	 * The spans of a round, by trace.
	 *
	 * @param spans how many spans were exported
	 * @param traces how many traces of requests they belong to (traces with more than a
	 * {@value ObservationKvObserver#CONFIRM} span)
	 * @param complete how many of those hold the five spans of a request, nested as
	 * documented: the lease, the pull under it, the read, the confirmation and the
	 * producer's confirm under the pull, once each, but for the confirm, which a resent
	 * done message repeats
	 * @param repeatedConfirms the confirm spans of resent done messages in those traces
	 * @param strays confirm spans alone in their trace: the producer's answers to done
	 * messages resent after their round had ended
	 */
	record Traces(int spans, int traces, int complete, int repeatedConfirms, int strays) {

		static final Traces NONE = new Traces(0, 0, 0, 0, 0);

		static Traces of(List<SpanData> producer, List<SpanData> consumer) {
			Map<String, List<SpanData>> byTrace = new HashMap<>();
			int spans = 0;
			for (List<SpanData> side : List.of(producer, consumer)) {
				for (SpanData span : side) {
					byTrace.computeIfAbsent(span.getTraceId(), (id) -> new ArrayList<>()).add(span);
					spans++;
				}
			}
			int traces = 0;
			int complete = 0;
			int repeatedConfirms = 0;
			int strays = 0;
			for (List<SpanData> trace : byTrace.values()) {
				List<SpanData> confirms = named(trace, ObservationKvObserver.CONFIRM);
				if (confirms.size() == trace.size()) {
					strays += confirms.size();
					continue;
				}
				traces++;
				if (nested(trace, confirms)) {
					complete++;
					repeatedConfirms += confirms.size() - 1;
				}
			}
			return new Traces(spans, traces, complete, repeatedConfirms, strays);
		}

		private static List<SpanData> named(List<SpanData> trace, String name) {
			return trace.stream().filter((span) -> span.getName().equals(name)).toList();
		}

		private static boolean nested(List<SpanData> trace, List<SpanData> confirms) {
			Map<String, SpanData> once = new HashMap<>();
			for (String name : SPANS) {
				List<SpanData> spans = named(trace, name);
				if (!name.equals(ObservationKvObserver.CONFIRM) && spans.size() != 1) {
					return false;
				}
				once.put(name, spans.getFirst());
			}
			if (trace.size() != SPANS.size() - 1 + confirms.size()) {
				return false;
			}
			String lease = once.get(ObservationKvObserver.LEASE).getSpanId();
			String pull = once.get(ObservationKvObserver.PULL).getSpanId();
			return once.get(ObservationKvObserver.PULL).getParentSpanId().equals(lease)
					&& once.get(ObservationKvObserver.READ).getParentSpanId().equals(pull)
					&& once.get(ObservationKvObserver.CONFIRMATION).getParentSpanId().equals(pull)
					&& confirms.stream().allMatch((confirm) -> confirm.getParentSpanId().equals(pull));
		}

	}

	/**
	 * What one mode's requests of one round took.
	 *
	 * @param mode the mode
	 * @param nanos each request's time, sorted
	 * @param wallNanos the round's time, first lease to last pull
	 * @param allocated bytes allocated by all threads from the first lease until the
	 * producer had answered every request and the spans were exported
	 * @param callerAllocated bytes allocated by the requesting thread
	 * @param cpuNanos the process's CPU time over the same span as {@code allocated}
	 * @param completed leases that ended completed
	 * @param resends done messages the consumer sent again, its producer's answer late
	 * @param verified whether the last request's blocks arrived byte for byte
	 * @param withContext leases whose parameters carried a trace context
	 * @param traces the spans exported
	 */
	record Round(Mode mode, long[] nanos, long wallNanos, long allocated, long callerAllocated, long cpuNanos,
			long completed, long resends, boolean verified, int withContext, Traces traces) {

		int count() {
			return this.nanos.length;
		}

		double requestsPerSecond() {
			return count() / (this.wallNanos / 1e9);
		}

		double meanMicros() {
			return Arrays.stream(this.nanos).average().orElse(0) / 1e3;
		}

		/**
		 * A percentile as kv-bench reads it: index floor(n * p) of the sorted samples.
		 */
		double percentileMicros(double fraction) {
			return this.nanos[Math.min((int) (count() * fraction), count() - 1)] / 1e3;
		}

		double allocatedPerRequest() {
			return this.allocated / (double) count();
		}

		double callerAllocatedPerRequest() {
			return this.callerAllocated / (double) count();
		}

		double cpuMicrosPerRequest() {
			return this.cpuNanos / 1e3 / count();
		}

		/** What is wrong with the round, if anything. */
		List<String> problems() {
			List<String> problems = new ArrayList<>();
			if (this.completed != count()) {
				problems.add(this.completed + " of " + count() + " leases completed");
			}
			if (!this.verified) {
				problems.add("the last request's blocks did not arrive as the producer holds them");
			}
			int expectedContexts = (this.mode == Mode.NONE) ? 0 : count();
			if (this.withContext != expectedContexts) {
				problems.add(this.withContext + " leases carried a trace context, expected " + expectedContexts);
			}
			Traces traces = this.traces;
			boolean expected = (this.mode == Mode.TRACED)
					? traces.traces() == count() && traces.complete() == count()
							&& traces.spans() == SPANS.size() * count() + traces.repeatedConfirms() + traces.strays()
					: traces.traces() == 0 && traces.spans() == traces.strays();
			if (!expected) {
				problems.add("exported " + traces + ", expected " + ((this.mode == Mode.TRACED)
						? count() + " complete traces of " + SPANS.size() + " spans" : "no trace of a request"));
			}
			return problems;
		}

	}

	/**
	 * The command line.
	 */
	record Options(Engine engine, int blocks, int rounds, int requests, int warmup) {

		static final String USAGE = "usage: KvTracingCostBench [--engine embedded|native] [--blocks N (1.." + MAX_BLOCKS
				+ ", default 1)] [--rounds N (default 6)] [--requests N per mode and round (default 2000)]"
				+ " [--warmup N per mode (default 1000)]";

		static Options parse(String[] args) {
			Engine engine = Engine.NATIVE;
			int blocks = 1;
			int rounds = 6;
			int requests = 2000;
			int warmup = 1000;
			for (int i = 0; i < args.length; i++) {
				String name = args[i];
				if (!List.of("--engine", "--blocks", "--rounds", "--requests", "--warmup").contains(name)) {
					throw new IllegalArgumentException("unknown option " + name);
				}
				if (i + 1 >= args.length) {
					throw new IllegalArgumentException(name + " needs a value");
				}
				String value = args[++i];
				switch (name) {
					case "--engine" -> engine = switch (value) {
						case "embedded" -> Engine.EMBEDDED;
						case "native" -> Engine.NATIVE;
						default -> throw new IllegalArgumentException("--engine must be embedded or native");
					};
					case "--blocks" -> blocks = number(name, value, 1, MAX_BLOCKS);
					case "--rounds" -> rounds = number(name, value, 1, 1000);
					case "--requests" -> requests = number(name, value, 1, MAX_REQUESTS);
					case "--warmup" -> warmup = number(name, value, 0, MAX_REQUESTS);
					default -> throw new IllegalStateException(name);
				}
			}
			return new Options(engine, blocks, rounds, requests, warmup);
		}

		private static int number(String name, String value, int min, int max) {
			int number;
			try {
				number = Integer.parseInt(value);
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException(name + " must be a whole number, got '" + value + "'");
			}
			if (number < min || number > max) {
				throw new IllegalArgumentException(name + " must be within " + min + ".." + max + ", got " + number);
			}
			return number;
		}

	}

}
