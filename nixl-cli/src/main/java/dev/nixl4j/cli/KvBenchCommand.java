package dev.nixl4j.cli;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.json.JsonWriter;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvIntegrity;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.RemoteCacheHandle;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nixl4j kv-bench}: KV blocks of a realistic model shape pulled from a producer in
 * a child JVM under leases, as a decode worker pulls a prefill worker's blocks; bandwidth
 * and per-request latency.
 */
@Command(name = "kv-bench", description = {
		"KV-cache blocks pulled under leases between two processes: GB/s and per-request latency.", "",
		"Moves KV-cache blocks the way a decode worker pulls a prefill worker's: a producer agent in a child JVM "
				+ "holds a paged cache of 32 layers x (K, V) of 16-token blocks of 8 KV heads x 128 fp16 elements "
				+ "(32 KiB per layer per K or V block) and twice --blocks blocks; per request it leases --blocks "
				+ "random blocks, and this process pulls them with one READ from prepared lists (64 regions x "
				+ "blocks descriptors of 32 KiB) into its own cache and waits for the producer's confirmation that "
				+ "the lease held. Every block of every request is checked against the producer's CRC32C; a failed "
				+ "check or lease fails the run.",
		"",
		"--integrity picks what the producer's leases let the pull check before it returns (none, generation or "
				+ "crc32c); with crc32c the producer computes a CRC32C per block when it leases and the timed pull "
				+ "compares it with what landed, so running the same request once with each shows the check's cost.",
		"",
		"--consumers N starts N - 1 more consumer processes (child JVMs, each with its own agent and cache) that "
				+ "pull from the same producer while this one does, their leases handed out by this process; "
				+ "--in-flight K keeps K requests outstanding in every consumer, one thread each. Every consumer "
				+ "runs --warmup and then --requests requests; latencies are taken over the timed requests of all "
				+ "consumers, and the aggregate bandwidth over the wall time of the timed phase." },
		footer = {
				"%nB/W = bytes of the timed requests / the sum of their latencies (GB = 10^9 bytes); a request's latency "
						+ "runs from the pull's start to the producer's confirmation (READ plus one notification back), without "
						+ "the control channel that hands out the lease. Aggregate = bytes of the timed requests of all "
						+ "consumers / the wall time of the timed phase, from its first lease to the check of its last request." },
		exitCodeList = { "0:every request verified and its lease completed", "1:a request or its lease failed",
				"2:usage error", "3:NIXL's native library cannot be loaded",
				"5:--memory vram and no CUDA device or driver was found" })
final class KvBenchCommand extends Subcommand {

	/**
	 * 32 layers, K and V, 16-token blocks of 8 KV heads of 128 fp16 elements: 32 KiB per
	 * layer per K or V block.
	 */
	static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(32)
		.blocks(1)
		.blockSize(16)
		.kvHeads(8)
		.headDim(128)
		.dtypeSize(2)
		.build();

	static final int MAX_BLOCKS = 1024;

	static final int MAX_CONSUMERS = 8;

	static final int MAX_IN_FLIGHT = 64;

	/** 2 GiB of cache per consumer. */
	static final int MAX_CONSUMER_BLOCKS = 1024;

	/** 4 GiB of cache over all consumers. */
	static final int MAX_TOTAL_BLOCKS = 2048;

	private static final int START_SECONDS = 120;

	private static final int ANSWER_SECONDS = 60;

	@Option(names = "--requests", paramLabel = "N", converter = Counts.AtLeastOne.class, defaultValue = "20",
			description = "timed requests of each consumer (default ${DEFAULT-VALUE})")
	private int requests;

	@Option(names = "--blocks", paramLabel = "N", defaultValue = "128", description = "blocks per request, 1 to "
			+ MAX_BLOCKS + " (default ${DEFAULT-VALUE}: a 2,048-token request, 8,192 descriptors, 256 MiB)")
	private int blocks;

	@Option(names = "--run", paramLabel = "N", converter = Counts.AtLeastOne.class, defaultValue = "1",
			description = "the producer leases its blocks in runs of N consecutive ids at random places, against"
					+ " consecutive local blocks (default ${DEFAULT-VALUE}: scattered ids; equal to --blocks: one"
					+ " contiguous run)")
	private int run;

	@Option(names = "--warmup", paramLabel = "N", converter = Counts.AtLeastZero.class, defaultValue = "2",
			description = "untimed requests of each consumer first (default ${DEFAULT-VALUE})")
	private int warmup;

	@Option(names = "--consumers", paramLabel = "N", defaultValue = "1",
			description = "consumer processes pulling from the one producer at once, 1 to " + MAX_CONSUMERS
					+ ": this one and N - 1 child JVMs, each with its own agent (default ${DEFAULT-VALUE})")
	private int consumers;

	@Option(names = "--in-flight", paramLabel = "K", defaultValue = "1",
			description = "requests each consumer has in flight, 1 to " + MAX_IN_FLIGHT
					+ ", one thread each with its own --blocks local blocks (default ${DEFAULT-VALUE})")
	private int inFlight;

	// picocli sets it, from defaultValue when the option is not given, before call() runs
	@SuppressWarnings("NullAway.Init")
	@Option(names = "--timeout", paramLabel = "DURATION", converter = DurationOption.class, defaultValue = "60s",
			description = "how long one pull may take (default ${DEFAULT-VALUE}), for example 500ms, 10s or 2m")
	private Duration pullTimeout;

	@Option(names = "--integrity", paramLabel = "MODE", defaultValue = "generation",
			description = "what each pull checks before it returns: none, generation or crc32c"
					+ " (default ${DEFAULT-VALUE})")
	private KvIntegrity integrity = KvIntegrity.GENERATION;

	@Option(names = "--memory", paramLabel = "WHERE", defaultValue = "dram",
			description = "where every cache lies: dram (default) or vram (CUDA device 0 of each process; blocks "
					+ "are written and checked through host copies, untimed); without a CUDA driver, runtime or "
					+ "device, exit status 5 and nothing measured")
	private BenchMemory.Kind memory = BenchMemory.Kind.DRAM;

	@Mixin
	private OutputOptions output = new OutputOptions();

	@Mixin
	private AgentOptions agentOptions = new AgentOptions();

	/**
	 * Returns the pattern seed of one block of one region, the same on the producer's
	 * side.
	 * @param region the region (layer and K or V)
	 * @param block the block
	 * @return the seed
	 */
	static long seed(int region, int block) {
		return region * 1_000_003L + block;
	}

	@Override
	public Integer call() throws Exception {
		if (this.blocks < 1 || this.blocks > MAX_BLOCKS) {
			throw usageError("--blocks must be within 1.." + MAX_BLOCKS + ", got " + this.blocks);
		}
		if (this.run > this.blocks) {
			throw usageError("--run must be at most --blocks (" + this.blocks + "), got " + this.run);
		}
		if (this.consumers < 1 || this.consumers > MAX_CONSUMERS) {
			throw usageError("--consumers must be within 1.." + MAX_CONSUMERS + ", got " + this.consumers);
		}
		if (this.inFlight < 1 || this.inFlight > MAX_IN_FLIGHT) {
			throw usageError("--in-flight must be within 1.." + MAX_IN_FLIGHT + ", got " + this.inFlight);
		}
		if (this.inFlight * this.blocks > MAX_CONSUMER_BLOCKS) {
			throw usageError("--in-flight x --blocks must be at most " + MAX_CONSUMER_BLOCKS
					+ " (2 GiB of cache per consumer), got " + this.inFlight + " x " + this.blocks);
		}
		if (this.consumers * this.inFlight * this.blocks > MAX_TOTAL_BLOCKS) {
			throw usageError("--consumers x --in-flight x --blocks must be at most " + MAX_TOTAL_BLOCKS
					+ " (4 GiB of consumer caches), got " + this.consumers + " x " + this.inFlight + " x "
					+ this.blocks);
		}
		if (this.memory == BenchMemory.Kind.VRAM) {
			String missing = BenchMemory.missingCuda();
			if (missing != null) {
				return noCuda(missing);
			}
		}
		PrintStream out = out();
		String memoryOption = this.memory.name().toLowerCase(Locale.ROOT);
		String base = "nixl4j-kv-bench-" + ProcessHandle.current().pid();
		AgentConfig config = this.agentOptions.config(base + "-decode");
		KvCacheLayout local = LAYOUT.withNumBlocks(this.inFlight * this.blocks);
		KvCacheLayout remote = LAYOUT.withNumBlocks(2 * this.blocks);
		List<String> childArguments = new ArrayList<>(List.of("kv-bench-producer", "--name", base + "-prefill",
				"--pool", Integer.toString(remote.numBlocks()), "--integrity", this.integrity.name(), "--memory",
				memoryOption));
		childArguments.addAll(this.agentOptions.tokens());
		List<ChildJvm> children = new ArrayList<>();
		try (NixlAgent agent = NixlAgent.create(config);
				PagedKvCache cache = KvBenchMemory.allocate(agent, local, this.memory);
				ChildJvm producer = new ChildJvm(base + "-prefill", childArguments);
				ExecutorService phases = Executors.newFixedThreadPool(this.consumers)) {
			for (int c = 1; c < this.consumers; c++) {
				List<String> arguments = new ArrayList<>(List.of("kv-bench-consumer", "--name", base + "-decode-" + c,
						"--blocks", Integer.toString(this.blocks), "--pool", Integer.toString(remote.numBlocks()),
						"--in-flight", Integer.toString(this.inFlight), "--timeout", this.pullTimeout.toMillis() + "ms",
						"--memory", memoryOption));
				arguments.addAll(this.agentOptions.tokens());
				children.add(new ChildJvm(base + "-decode-" + c, arguments));
			}
			String[] ready = producer.expect("READY", START_SECONDS);
			String producerName = agent.loadRemoteMetadata(AgentMetadata.of(Base64.getDecoder().decode(ready[1])));
			List<Long> bases = Arrays.stream(ready[2].split(",")).map(Long::valueOf).toList();
			String crcsLine = producer.expect("CRCS", START_SECONDS)[1];
			ByteBuffer crcs = ByteBuffer.wrap(Base64.getDecoder().decode(crcsLine));
			producer.send("PEER " + Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()));
			producer.expect("LOADED", ANSWER_SECONDS);
			for (ChildJvm child : children) {
				producer.send("PEER " + child.expect("READY", START_SECONDS)[1]);
				producer.expect("LOADED", ANSWER_SECONDS);
				child.send("PRODUCER " + ready[1] + " " + ready[2] + " " + crcsLine + " " + ready[3] + " " + ready[4]);
				child.expect("CONNECTED", ANSWER_SECONDS);
			}
			KvBenchPuller puller = new KvBenchPuller(cache, new RemoteCacheHandle(producerName, remote, bases,
					MemoryType.valueOf(ready[3]), Long.parseLong(ready[4])), crcs, this.blocks, this.inFlight,
					this.pullTimeout);
			KvBenchPuller.Leases leases = (requestId) -> lease(producer, requestId);
			List<KvBenchPuller.Result> warm = pullEverywhere(phases, puller, children, leases, "w", this.warmup);
			long start = System.nanoTime();
			List<KvBenchPuller.Result> timed = pullEverywhere(phases, puller, children, leases, "", this.requests);
			long wallNanos = System.nanoTime() - start;
			producer.send("SUMMARY");
			String[] summary = producer.expect("SUMMARY", ANSWER_SECONDS);
			int completed = Integer.parseInt(summary[1]);
			int expired = Integer.parseInt(summary[2]);
			Samples latencies = new Samples(this.requests * this.consumers);
			long timedBytes = 0;
			long timedNanos = 0;
			int verified = 0;
			for (KvBenchPuller.Result result : timed) {
				for (long nanos : result.nanos()) {
					latencies.add(nanos);
					timedNanos += nanos;
				}
				timedBytes += result.bytes();
				verified += result.verified();
			}
			for (KvBenchPuller.Result result : warm) {
				verified += result.verified();
			}
			double gbps = timedBytes / (double) timedNanos;
			double aggregateGbps = timedBytes / (double) wallNanos;
			String engine = agent.engineDescription();
			int posted = (this.warmup + this.requests) * this.consumers;
			boolean ok = verified == posted && completed == posted && expired == 0;
			if (this.output.json()) {
				Map<String, Object> document = new LinkedHashMap<>();
				document.put("tool", "nixl4j kv-bench");
				document.put("engine", agent.engine().toString());
				document.put("engineDescription", engine);
				document.put("layout", local.withNumBlocks(this.blocks).fingerprint());
				document.put("memory", cache.memoryType().toString());
				document.put("blocksPerRequest", this.blocks);
				document.put("blockRun", this.run);
				document.put("integrity", this.integrity.name().toLowerCase(Locale.ROOT));
				document.put("descriptorsPerRequest", this.blocks * local.regionCount());
				document.put("descriptorBytes", local.blockLength());
				document.put("bytesPerRequest", this.blocks * (long) local.regionCount() * local.blockLength());
				document.put("consumers", this.consumers);
				document.put("inFlight", this.inFlight);
				document.put("warmup", this.warmup);
				document.put("requests", this.requests);
				document.put("timedRequests", this.requests * this.consumers);
				document.put("bandwidthGBps", OutputOptions.figure(gbps));
				document.put("timedSeconds", OutputOptions.figure(wallNanos / 1e9));
				document.put("aggregateBandwidthGBps", OutputOptions.figure(aggregateGbps));
				document.put("meanLatencyUs", OutputOptions.figure(latencies.meanMicros()));
				document.put("p50LatencyUs", OutputOptions.figure(latencies.percentileMicros(0.50)));
				document.put("p99LatencyUs", OutputOptions.figure(latencies.percentileMicros(0.99)));
				document.put("postedRequests", posted);
				document.put("verifiedRequests", verified);
				document.put("completedLeases", completed);
				document.put("expiredLeases", expired);
				document.put("ok", ok);
				out.println(JsonWriter.write(document));
			}
			else {
				out.printf(Locale.ROOT, "KV cache: %s, %s%n", local.withNumBlocks(this.blocks).fingerprint(),
						cache.memoryType());
				out.printf(Locale.ROOT,
						"engine: %s; per request %d blocks in runs of %d = %d descriptors of %d KiB = %d MiB;"
								+ " integrity %s%n",
						engine, this.blocks, this.run, this.blocks * local.regionCount(), local.blockLength() >> 10,
						(this.blocks * (long) local.regionCount() * local.blockLength()) >> 20,
						this.integrity.name().toLowerCase(Locale.ROOT));
				out.printf(Locale.ROOT, "%-10s %-14s %-12s %-12s %-12s %-10s%n", "Requests", "B/W (GB/Sec)",
						"Mean (us)", "p50 (us)", "p99 (us)", "Verified");
				out.printf(Locale.ROOT, "%-10d %-14.3f %-12.1f %-12.1f %-12.1f %d/%d%n", this.requests * this.consumers,
						gbps, latencies.meanMicros(), latencies.percentileMicros(0.50),
						latencies.percentileMicros(0.99), verified, posted);
				out.printf(Locale.ROOT, "leases: %d completed, %d expired (warm-up included)%n", completed, expired);
				if (this.consumers > 1 || this.inFlight > 1) {
					out.printf(Locale.ROOT,
							"aggregate: %.3f GB/s over %.3f s; %d consumer processes x %d requests in flight,"
									+ " latencies over the requests of all%n",
							aggregateGbps, wallNanos / 1e9, this.consumers, this.inFlight);
				}
				if (!ok) {
					out.println("kv-bench: some requests were not verified or their leases did not complete");
				}
			}
			return ok ? Nixl4jCli.EXIT_OK : Nixl4jCli.EXIT_FAILURE;
		}
		finally {
			children.forEach(ChildJvm::close);
		}
	}

	/**
	 * Leases a request's blocks from the producer, one lease at a time for every
	 * consumer.
	 */
	private String[] lease(ChildJvm producer, String requestId) {
		synchronized (producer) {
			producer.send("LEASE " + requestId + " " + this.blocks + " " + this.run);
			return producer.expect("LEASED", ANSWER_SECONDS);
		}
	}

	/**
	 * Pulls {@code count} requests in every consumer at once, this process's and every
	 * child's, answering the children's leases, and returns when all are done.
	 */
	private List<KvBenchPuller.Result> pullEverywhere(ExecutorService phases, KvBenchPuller puller,
			List<ChildJvm> children, KvBenchPuller.Leases leases, String phase, int count) throws Exception {
		List<Future<KvBenchPuller.Result>> consumers = new ArrayList<>();
		consumers.add(phases.submit(() -> puller.pull("kv-bench-" + phase, count, leases)));
		int answerSeconds = ANSWER_SECONDS + (int) Math.min(this.pullTimeout.toSeconds(), Integer.MAX_VALUE / 2);
		for (int c = 0; c < children.size(); c++) {
			ChildJvm child = children.get(c);
			String prefix = "kv-bench-" + (c + 1) + "-" + phase;
			consumers.add(phases.submit(() -> {
				child.send("RUN " + prefix + " " + count);
				while (true) {
					String[] line = child.expect(answerSeconds, "LEASE", "DONE");
					if (line[0].equals("DONE")) {
						return KvBenchPuller.Result.of(line);
					}
					child.send(String.join(" ", leases.lease(line[1])));
				}
			}));
		}
		KvBenchPuller.awaitAll(consumers);
		List<KvBenchPuller.Result> results = new ArrayList<>();
		for (Future<KvBenchPuller.Result> consumer : consumers) {
			results.add(consumer.get());
		}
		return results;
	}

}
