package dev.nixl4j.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.etcd.launcher.EtcdLauncher;
import dev.nixl4j.json.JsonWriter;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.http.MetadataRegistryHandler;
import dev.nixl4j.metadata.etcd.EtcdMetadataExchange;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code nixl4j registry-bench}: how long a consumer takes to resolve a peer, that is to
 * fetch one agent's metadata ({@link MetadataExchange#fetch}) and, when asked, its KV
 * handle document ({@link MetadataExchange#fetchDocument}), from the HTTP registry and
 * from etcd holding 10, 100 or 1,000 registered agents.
 *
 * <p>
 * The HTTP registry is a {@link dev.nixl4j.metadata.http.MetadataHttpServer} in a child
 * JVM ({@code registry-bench-server}) on loopback, with its defaults but for its entry
 * and byte caps, which are raised to hold every agent. etcd is the server at
 * {@code --etcd-endpoint}, or one this command starts on loopback with a temporary data
 * directory. For each number of agents a publishing exchange registers every agent (each
 * its own entry: over HTTP with its own owner secret, in etcd under the publisher's
 * lease), a second exchange in this JVM fetches random agents from 1 or more threads
 * after a warm-up, and every fetched value is compared with the bytes its agent
 * published; then the agents are withdrawn.
 */
@Command(name = "registry-bench",
		description = { "Fetch latency of the HTTP registry and of etcd with many registered agents.", "",
				"Registers --agents agents with metadata of --metadata-size bytes, then times fetches of random "
						+ "agents' metadata (and documents with --operations fetch,document) from --threads threads "
						+ "after --warmup untimed fetches, and checks every fetched value against what its agent "
						+ "published. The HTTP registry runs in a child JVM; etcd is started on loopback unless "
						+ "--etcd-endpoint names one." },
		exitCodeList = { "0:measured, every fetched value as published", "1:a failure or a value not as published",
				"2:usage error", "3:etcd asked for but not installed" })
final class RegistryBenchCommand extends Subcommand {

	/** How long one fetch may wait. */
	private static final Duration FETCH_TIMEOUT = Duration.ofSeconds(10);

	/**
	 * How long one etcd call may take: the first one also loads and starts jetcd's gRPC
	 * and Netty, which can take seconds on a busy host.
	 */
	private static final Duration ETCD_OPERATION_TIMEOUT = Duration.ofSeconds(30);

	/** The kind of the document published beside each agent's metadata. */
	static final String DOCUMENT_KIND = "kv-cache-handle";

	/** The most agents one row registers. */
	static final int MAX_AGENTS = 10_000;

	/** The most threads that fetch at once. */
	static final int MAX_THREADS = 64;

	/**
	 * The bound on all registered bytes of one row: the registry child's heap is 256 MiB.
	 */
	static final long MAX_REGISTERED_BYTES = 64L << 20;

	/** The largest metadata value: under etcd's default request limit of 1.5 MiB. */
	static final long MAX_METADATA_BYTES = 1L << 20;

	/** Room beyond the registered bytes that the registry is given. */
	private static final long REGISTRY_HEADROOM_BYTES = 1L << 20;

	private static final String AGENT_PREFIX = "registry-bench-agent-";

	@Option(names = "--exchange", paramLabel = "EXCHANGE", split = ",", defaultValue = "http,etcd",
			description = "the exchanges to measure, http and/or etcd (default ${DEFAULT-VALUE})")
	private List<Exchange> exchanges = List.of();

	@Option(names = "--agents", paramLabel = "N", split = ",", converter = AgentCount.class,
			defaultValue = "10,100,1000",
			description = "registered agents, 1 to " + MAX_AGENTS + ", one row each (default ${DEFAULT-VALUE})")
	private List<Integer> agents = List.of();

	@Option(names = "--threads", paramLabel = "T", split = ",", converter = ThreadCount.class, defaultValue = "1",
			description = "threads fetching at once, 1 to " + MAX_THREADS + ", one row each (default ${DEFAULT-VALUE})")
	private List<Integer> threads = List.of();

	@Option(names = "--operations", paramLabel = "OP", split = ",", defaultValue = "fetch",
			description = "what is timed: fetch (an agent's metadata) and/or document (its " + DOCUMENT_KIND
					+ " document) (default ${DEFAULT-VALUE})")
	private List<Operation> operations = List.of();

	@Option(names = "--fetches", paramLabel = "N", converter = FetchCount.class, defaultValue = "2000",
			description = "timed fetches per row, 1 to 10,000,000 (default ${DEFAULT-VALUE})")
	private int fetches;

	@Option(names = "--warmup", paramLabel = "N", converter = WarmupCount.class, defaultValue = "500",
			description = "untimed fetches before each row, 0 to 1,000,000 (default ${DEFAULT-VALUE})")
	private int warmup;

	// picocli sets it, from defaultValue when the option is not given, before call() runs
	@SuppressWarnings("NullAway.Init")
	@Option(names = "--warmup-time", paramLabel = "DURATION", converter = DurationOption.class, defaultValue = "1s",
			description = "the least time the warm-up of each row lasts, at most 1m: it goes on past --warmup "
					+ "fetches until then (default ${DEFAULT-VALUE})")
	private Duration warmupTime;

	// picocli sets it, from defaultValue when the option is not given, before call() runs
	@SuppressWarnings("NullAway.Init")
	@Option(names = "--prime-time", paramLabel = "DURATION", converter = DurationOption.class, defaultValue = "10s",
			description = "the least time the warm-up of each exchange's first row lasts, at most 5m, so that both "
					+ "JVMs have compiled the fetch path; shorter ones left that row slower than the rest on a busy "
					+ "host (default ${DEFAULT-VALUE})")
	private Duration primeTime;

	@Option(names = "--metadata-size", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "4k",
			description = "bytes of each agent's metadata, up to 1m; a UCX agent on a GPU host with RDMA devices has a "
					+ "few KiB (default ${DEFAULT-VALUE})")
	private long metadataSize;

	@Option(names = "--document-size", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "1k",
			description = "bytes of each agent's document, up to 64k, published with --operations document "
					+ "(default ${DEFAULT-VALUE})")
	private long documentSize;

	@Option(names = "--etcd-endpoint", paramLabel = "URL",
			description = "an etcd to use (keys under a namespace of this run's own, removed at the end); "
					+ "without it etcd is started on loopback")
	private @Nullable String etcdEndpoint;

	@Mixin
	private OutputOptions output = new OutputOptions();

	// picocli injects it before call() runs
	@Spec
	@SuppressWarnings("NullAway.Init")
	private CommandSpec spec;

	@Override
	public Integer call() throws Exception {
		checkOptions();
		Path etcdBinary = null;
		if (this.exchanges.contains(Exchange.ETCD) && this.etcdEndpoint == null) {
			etcdBinary = EtcdLauncher.binary();
			if (!Files.isExecutable(etcdBinary)) {
				err().println("registry-bench: etcd is not installed (no $ETCD_BINARY, no etcd on the PATH, no "
						+ "/usr/bin/etcd): install it with src/etcd/install-etcd.sh, name one with --etcd-endpoint, "
						+ "or measure only --exchange http");
				return Nixl4jCli.EXIT_ENVIRONMENT_NOT_READY;
			}
		}
		PrintStream out = out();
		if (!this.output.json()) {
			out.printf(Locale.ROOT, "registry-bench: metadata %d B, document %d B, %d timed fetches per row after %d "
					+ "warm-up (at least %d ms, %d ms before an exchange's first row), each checked against what its "
					+ "agent published%n", this.metadataSize, this.documentSize, this.fetches, this.warmup,
					this.warmupTime.toMillis(), this.primeTime.toMillis());
			out.printf("%-10s%-11s%-9s%-9s%-10s%-12s%-12s%-12s%-12s%n", "Exchange", "Operation", "Agents", "Threads",
					"Fetches", "p50 (us)", "p99 (us)", "Mean (us)", "Fetches/s");
		}
		List<Row> rows = new ArrayList<>();
		for (Exchange exchange : this.exchanges) {
			try (Registry registry = open(exchange, etcdBinary)) {
				for (int count : this.agents) {
					measure(registry, count, rows.isEmpty() || !rows.getLast().exchange.equals(registry.label()), rows,
							out);
				}
			}
		}
		long mismatched = rows.stream().mapToLong(Row::mismatched).sum();
		if (this.output.json()) {
			out.println(JsonWriter.write(document(rows)));
		}
		if (mismatched > 0) {
			out.flush();
			err()
				.println("registry-bench: " + mismatched + " fetched values were not the bytes their agents published");
			return Nixl4jCli.EXIT_FAILURE;
		}
		return Nixl4jCli.EXIT_OK;
	}

	private PrintWriter err() {
		return this.spec.commandLine().getErr();
	}

	private void checkOptions() {
		if (this.exchanges.isEmpty() || this.agents.isEmpty() || this.threads.isEmpty() || this.operations.isEmpty()) {
			throw usageError("--exchange, --agents, --threads and --operations need at least one value each");
		}
		if (this.metadataSize > MAX_METADATA_BYTES) {
			throw usageError("--metadata-size must be at most 1m (etcd's default request limit is 1.5 MiB), was "
					+ this.metadataSize);
		}
		int least = RegistryBenchMetadata.overhead(AGENT_PREFIX + (MAX_AGENTS - 1)) + 1;
		if (this.metadataSize < least) {
			throw usageError("--metadata-size must be at least " + least
					+ " bytes (NIXL's framing and the agent's name), was " + this.metadataSize);
		}
		if (this.documentSize > MetadataExchange.MAX_DOCUMENT_BYTES) {
			throw usageError("--document-size must be at most 64k, was " + this.documentSize);
		}
		int most = this.agents.stream().mapToInt(Integer::intValue).max().orElseThrow();
		long bytes = most
				* (this.metadataSize + (this.operations.contains(Operation.DOCUMENT) ? this.documentSize : 0));
		if (bytes > MAX_REGISTERED_BYTES) {
			throw usageError("--agents " + most + " with --metadata-size " + this.metadataSize
					+ " (and --document-size with documents) registers " + bytes + " bytes, over the bound of "
					+ MAX_REGISTERED_BYTES);
		}
		if (this.warmupTime.compareTo(Duration.ofMinutes(1)) > 0) {
			throw usageError("--warmup-time must be at most 1m, was " + this.warmupTime);
		}
		if (this.primeTime.compareTo(Duration.ofMinutes(5)) > 0) {
			throw usageError("--prime-time must be at most 5m, was " + this.primeTime);
		}
		int threadsMost = this.threads.stream().mapToInt(Integer::intValue).max().orElseThrow();
		if (this.fetches < threadsMost) {
			throw usageError("--fetches (" + this.fetches + ") must be at least --threads (" + threadsMost + ")");
		}
	}

	private Registry open(Exchange exchange, @Nullable Path etcdBinary) throws IOException {
		int most = this.agents.stream().mapToInt(Integer::intValue).max().orElseThrow();
		if (exchange == Exchange.HTTP) {
			long bytes = most * (this.metadataSize + this.documentSize) + REGISTRY_HEADROOM_BYTES;
			ChildJvm server = new ChildJvm("registry", List.of("registry-bench-server", "--max-entries",
					Integer.toString(most), "--max-total-bytes", Long.toString(bytes)));
			try {
				String[] ready = server.expect("READY", 60);
				URI base = URI.create("http://127.0.0.1:" + ready[1] + MetadataRegistryHandler.DEFAULT_BASE_PATH);
				String token = ready[2];
				return new Registry(exchange, () -> HttpMetadataExchange.builder(base).token(token).build(), server);
			}
			catch (RuntimeException ex) {
				server.kill();
				throw ex;
			}
		}
		// jetcd logs through SLF4J, which this tool has no provider for; without this it
		// prints three lines of warnings about that to standard error
		if (System.getProperty("slf4j.internal.verbosity") == null) {
			System.setProperty("slf4j.internal.verbosity", "ERROR");
		}
		EtcdLauncher started = (this.etcdEndpoint == null && etcdBinary != null)
				? EtcdLauncher.builder(etcdBinary).name("nixl4j-registry-bench").start() : null;
		String endpoint = (started != null) ? started.endpoint() : Objects.requireNonNull(this.etcdEndpoint);
		String namespace = "/nixl4j-registry-bench/" + ProcessHandle.current().pid() + "-" + System.nanoTime() + "/";
		return new Registry(exchange,
				() -> EtcdMetadataExchange.builder()
					.endpoints(endpoint)
					.namespace(namespace)
					.operationTimeout(ETCD_OPERATION_TIMEOUT)
					.build(),
				started);
	}

	private void measure(Registry registry, int count, boolean first, List<Row> rows, PrintStream out)
			throws Exception {
		boolean documents = this.operations.contains(Operation.DOCUMENT);
		String[] names = new String[count];
		byte[][] metadata = new byte[count][];
		byte[][] documentBytes = new byte[count][];
		try (MetadataExchange publisher = registry.exchange.get()) {
			try {
				for (int i = 0; i < count; i++) {
					names[i] = AGENT_PREFIX + i;
					metadata[i] = RegistryBenchMetadata.of(names[i], (int) this.metadataSize);
					publisher.publish(names[i], AgentMetadata.of(metadata[i]));
					if (documents) {
						documentBytes[i] = new byte[(int) this.documentSize];
						new Random(~i).nextBytes(documentBytes[i]);
						publisher.publishDocument(names[i], DOCUMENT_KIND, documentBytes[i]);
					}
				}
				int before = rows.size();
				try (MetadataExchange client = registry.exchange.get()) {
					for (Operation operation : this.operations) {
						byte[][] expected = (operation == Operation.FETCH) ? metadata : documentBytes;
						Fetch fetch = (operation == Operation.FETCH)
								? (name) -> client.fetch(name, FETCH_TIMEOUT).toByteArray()
								: (name) -> client.fetchDocument(name, DOCUMENT_KIND, FETCH_TIMEOUT);
						for (int threadCount : this.threads) {
							Duration warmupTime = (first && rows.size() == before) ? this.primeTime : this.warmupTime;
							Row row = run(registry.label(), operation, names, expected, fetch, threadCount, warmupTime);
							rows.add(row);
							if (!this.output.json()) {
								out.printf(Locale.ROOT, "%-10s%-11s%-9d%-9d%-10d%-12.1f%-12.1f%-12.1f%-12.0f%n",
										row.exchange, row.operation, row.agents, row.threads, row.fetches,
										row.p50Micros, row.p99Micros, row.meanMicros, row.perSecond);
								out.flush();
							}
						}
					}
				}
			}
			finally {
				for (String name : names) {
					if (name != null) {
						publisher.invalidate(name);
					}
				}
			}
		}
	}

	private Row run(String exchange, Operation operation, String[] names, byte[][] expected, Fetch fetch,
			int threadCount, Duration warmupTime) throws Exception {
		AtomicLong mismatched = new AtomicLong();
		fetchAll(names, expected, fetch, threadCount, this.warmup, warmupTime.toNanos(), mismatched);
		Timed timed = fetchAll(names, expected, fetch, threadCount, this.fetches, 0, mismatched);
		Samples samples = new Samples(this.fetches);
		for (long[] perThread : timed.nanos) {
			for (long nanos : perThread) {
				samples.add(nanos);
			}
		}
		long verified = this.fetches - timed.mismatched;
		return new Row(exchange, operation.name().toLowerCase(Locale.ROOT), names.length, threadCount, this.fetches,
				samples.percentileMicros(0.5), samples.percentileMicros(0.99), samples.meanMicros(),
				this.fetches / (timed.wallNanos / 1e9), verified, mismatched.get());
	}

	/**
	 * Fetches random agents from some threads at once, each thread its share of the
	 * fetches and then on until {@code leastNanos} have passed, and compares every value
	 * with the expected bytes; the durations of each thread's share are kept.
	 */
	private static Timed fetchAll(String[] names, byte[][] expected, Fetch fetch, int threadCount, int total,
			long leastNanos, AtomicLong mismatched) throws Exception {
		long[][] nanos = new long[threadCount][];
		AtomicLong timedMismatches = new AtomicLong();
		CountDownLatch start = new CountDownLatch(1);
		List<Future<?>> futures = new ArrayList<>();
		long began;
		long ended;
		try (ExecutorService pool = Executors.newFixedThreadPool(threadCount)) {
			for (int t = 0; t < threadCount; t++) {
				int share = total / threadCount + ((t < total % threadCount) ? 1 : 0);
				long[] mine = new long[share];
				nanos[t] = mine;
				futures.add(pool.submit(() -> {
					start.await();
					ThreadLocalRandom random = ThreadLocalRandom.current();
					long from = System.nanoTime();
					for (int i = 0; i < mine.length || System.nanoTime() - from < leastNanos; i++) {
						int agent = random.nextInt(names.length);
						long t0 = System.nanoTime();
						byte[] value = fetch.fetch(names[agent]);
						long took = System.nanoTime() - t0;
						boolean timed = i < mine.length;
						if (timed) {
							mine[i] = took;
						}
						if (!Arrays.equals(value, expected[agent])) {
							mismatched.incrementAndGet();
							if (timed) {
								timedMismatches.incrementAndGet();
							}
						}
					}
					return null;
				}));
			}
			began = System.nanoTime();
			start.countDown();
			for (Future<?> future : futures) {
				try {
					future.get();
				}
				catch (ExecutionException ex) {
					futures.forEach((other) -> other.cancel(true));
					if (ex.getCause() instanceof Exception cause) {
						throw cause;
					}
					throw ex;
				}
			}
			ended = System.nanoTime();
		}
		return new Timed(nanos, ended - began, timedMismatches.get());
	}

	private Map<String, Object> document(List<Row> rows) {
		Map<String, Object> document = new LinkedHashMap<>();
		document.put("tool", "nixl4j registry-bench");
		document.put("metadataBytes", this.metadataSize);
		document.put("documentBytes", this.documentSize);
		document.put("warmup", this.warmup);
		document.put("warmupMillis", this.warmupTime.toMillis());
		document.put("primeMillis", this.primeTime.toMillis());
		document.put("httpRegistry", "MetadataHttpServer in a child JVM on 127.0.0.1");
		document.put("etcd", (this.etcdEndpoint != null) ? this.etcdEndpoint : "started on 127.0.0.1");
		List<Map<String, Object>> results = new ArrayList<>();
		for (Row row : rows) {
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("exchange", row.exchange);
			result.put("operation", row.operation);
			result.put("agents", row.agents);
			result.put("threads", row.threads);
			result.put("fetches", row.fetches);
			result.put("p50Micros", OutputOptions.figure(row.p50Micros));
			result.put("p99Micros", OutputOptions.figure(row.p99Micros));
			result.put("meanMicros", OutputOptions.figure(row.meanMicros));
			result.put("fetchesPerSecond", OutputOptions.figure(row.perSecond));
			result.put("verified", row.verified);
			result.put("mismatched", row.mismatched);
			results.add(result);
		}
		document.put("results", results);
		return document;
	}

	/** The exchanges measured. */
	enum Exchange {

		/** The HTTP registry. */
		HTTP,

		/** etcd. */
		ETCD

	}

	/** What a timed fetch asks for. */
	enum Operation {

		/** An agent's metadata. */
		FETCH,

		/** An agent's {@value RegistryBenchCommand#DOCUMENT_KIND} document. */
		DOCUMENT

	}

	/** One timed fetch. */
	@FunctionalInterface
	private interface Fetch {

		byte[] fetch(String agentName);

	}

	/** The durations of one pass, per thread, and its wall time. */
	private record Timed(long[][] nanos, long wallNanos, long mismatched) {
	}

	/** One row of the table. */
	private record Row(String exchange, String operation, int agents, int threads, int fetches, double p50Micros,
			double p99Micros, double meanMicros, double perSecond, long verified, long mismatched) {
	}

	/**
	 * An exchange being measured: how to open a client of it, and what to close at the
	 * end (the registry's child JVM, or the etcd this command started).
	 */
	private static final class Registry implements AutoCloseable {

		private final Exchange name;

		private final Supplier<MetadataExchange> exchange;

		private final @Nullable AutoCloseable server;

		Registry(Exchange name, Supplier<MetadataExchange> exchange, @Nullable AutoCloseable server) {
			this.name = name;
			this.exchange = exchange;
			this.server = server;
		}

		/**
		 * Returns the exchange's name as the rows show it.
		 * @return {@code http} or {@code etcd}
		 */
		String label() {
			return this.name.name().toLowerCase(Locale.ROOT);
		}

		@Override
		public void close() throws Exception {
			if (this.server != null) {
				this.server.close();
			}
		}

	}

	private static int bounded(String text, int minimum, int maximum) {
		try {
			int value = Integer.parseInt(text.strip());
			if (value >= minimum && value <= maximum) {
				return value;
			}
		}
		catch (NumberFormatException ex) {
			// reported below, with the text as given
		}
		throw new TypeConversionException(
				String.format(Locale.ROOT, "'%s' is not a whole number from %,d to %,d", text, minimum, maximum));
	}

	/** A number of agents: 1 to {@value RegistryBenchCommand#MAX_AGENTS}. */
	static final class AgentCount implements ITypeConverter<Integer> {

		@Override
		public Integer convert(String text) {
			return bounded(text, 1, MAX_AGENTS);
		}

	}

	/** A number of threads: 1 to {@value RegistryBenchCommand#MAX_THREADS}. */
	static final class ThreadCount implements ITypeConverter<Integer> {

		@Override
		public Integer convert(String text) {
			return bounded(text, 1, MAX_THREADS);
		}

	}

	/** A number of timed fetches: 1 to 10,000,000. */
	static final class FetchCount implements ITypeConverter<Integer> {

		@Override
		public Integer convert(String text) {
			return bounded(text, 1, 10_000_000);
		}

	}

	/** A number of warm-up fetches: 0 to 1,000,000. */
	static final class WarmupCount implements ITypeConverter<Integer> {

		@Override
		public Integer convert(String text) {
			return bounded(text, 0, 1_000_000);
		}

	}

}
