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

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.json.JsonWriter;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvIntegrity;
import dev.nixl4j.kv.KvTransferParams;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.kv.RemoteCacheHandle;
import dev.nixl4j.readiness.Patterns;
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
				+ "compares it with what landed, so running the same request once with each shows the check's cost." },
		footer = {
				"%nB/W = bytes of the timed requests / the sum of their latencies (GB = 10^9 bytes); a request's latency "
						+ "runs from the pull's start to the producer's confirmation (READ plus one notification back), without "
						+ "the control channel that hands out the lease." },
		exitCodeList = { "0:every request verified and its lease completed", "1:a request or its lease failed",
				"2:usage error", "3:NIXL's native library cannot be loaded" })
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

	private static final int MAX_BLOCKS = 1024;

	private static final int START_SECONDS = 120;

	private static final int ANSWER_SECONDS = 60;

	@Option(names = "--requests", paramLabel = "N", converter = Counts.AtLeastOne.class, defaultValue = "20",
			description = "timed requests (default ${DEFAULT-VALUE})")
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
			description = "untimed requests first (default ${DEFAULT-VALUE})")
	private int warmup;

	// picocli sets it, from defaultValue when the option is not given, before call() runs
	@SuppressWarnings("NullAway.Init")
	@Option(names = "--timeout", paramLabel = "DURATION", converter = DurationOption.class, defaultValue = "60s",
			description = "how long one pull may take (default ${DEFAULT-VALUE}), for example 500ms, 10s or 2m")
	private Duration pullTimeout;

	@Option(names = "--integrity", paramLabel = "MODE", defaultValue = "generation",
			description = "what each pull checks before it returns: none, generation or crc32c"
					+ " (default ${DEFAULT-VALUE})")
	private KvIntegrity integrity = KvIntegrity.GENERATION;

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
		PrintStream out = out();
		String base = "nixl4j-kv-bench-" + ProcessHandle.current().pid();
		AgentConfig config = this.agentOptions.config(base + "-decode");
		KvCacheLayout local = LAYOUT.withNumBlocks(this.blocks);
		KvCacheLayout remote = LAYOUT.withNumBlocks(2 * this.blocks);
		List<String> childArguments = new ArrayList<>(List.of("kv-bench-producer", "--name", base + "-prefill",
				"--pool", Integer.toString(remote.numBlocks()), "--integrity", this.integrity.name()));
		childArguments.addAll(this.agentOptions.tokens());
		try (NixlAgent agent = NixlAgent.create(config);
				PagedKvCache cache = PagedKvCache.allocate(agent, local);
				ChildJvm producer = new ChildJvm(base + "-prefill", childArguments)) {
			String[] ready = producer.expect("READY", START_SECONDS);
			String producerName = agent.loadRemoteMetadata(AgentMetadata.of(Base64.getDecoder().decode(ready[1])));
			List<Long> bases = Arrays.stream(ready[2].split(",")).map(Long::valueOf).toList();
			ByteBuffer crcs = ByteBuffer.wrap(Base64.getDecoder().decode(producer.expect("CRCS", START_SECONDS)[1]));
			producer.send("PEER " + Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()));
			producer.expect("LOADED", ANSWER_SECONDS);
			KvConsumer consumer = new KvConsumer(cache, 0, PeerLoader.preloaded());
			consumer.connect(new RemoteCacheHandle(producerName, remote, bases, MemoryType.DRAM, 0));
			int[] localBlocks = cache.allocator().allocate(this.blocks);
			Samples latencies = new Samples(this.requests);
			long timedBytes = 0;
			long timedNanos = 0;
			int verified = 0;
			for (int i = 0; i < this.warmup + this.requests; i++) {
				String requestId = "kv-bench-" + i;
				producer.send("LEASE " + requestId + " " + this.blocks + " " + this.run);
				String[] leased = producer.expect("LEASED", ANSWER_SECONDS);
				List<Integer> ids = Arrays.stream(leased[2].split(",")).map(Integer::valueOf).toList();
				KvTransferParams params = new KvTransferParams(producerName, requestId, ids, remote.fingerprint(),
						Long.parseLong(leased[1]), 1, Long.parseUnsignedLong(leased[3], 16), checksums(leased[4]), "");
				for (int r = 0; r < local.regionCount(); r++) {
					cache.region(r).fill((byte) 0);
				}
				long start = System.nanoTime();
				long bytes = consumer.pull(params, localBlocks, this.pullTimeout);
				long nanos = System.nanoTime() - start;
				if (verify(cache, localBlocks, ids, crcs, remote.numBlocks())) {
					verified++;
				}
				if (i >= this.warmup) {
					latencies.add(nanos);
					timedBytes += bytes;
					timedNanos += nanos;
				}
			}
			producer.send("SUMMARY");
			String[] summary = producer.expect("SUMMARY", ANSWER_SECONDS);
			int completed = Integer.parseInt(summary[1]);
			int expired = Integer.parseInt(summary[2]);
			double gbps = timedBytes / (double) timedNanos;
			String engine = agent.engineDescription();
			int posted = this.warmup + this.requests;
			boolean ok = verified == posted && completed == posted && expired == 0;
			if (this.output.json()) {
				Map<String, Object> document = new LinkedHashMap<>();
				document.put("tool", "nixl4j kv-bench");
				document.put("engine", agent.engine().toString());
				document.put("engineDescription", engine);
				document.put("layout", local.fingerprint());
				document.put("blocksPerRequest", this.blocks);
				document.put("blockRun", this.run);
				document.put("integrity", this.integrity.name().toLowerCase(Locale.ROOT));
				document.put("descriptorsPerRequest", this.blocks * local.regionCount());
				document.put("descriptorBytes", local.blockLength());
				document.put("bytesPerRequest", this.blocks * (long) local.regionCount() * local.blockLength());
				document.put("warmup", this.warmup);
				document.put("requests", this.requests);
				document.put("bandwidthGBps", OutputOptions.figure(gbps));
				document.put("meanLatencyUs", OutputOptions.figure(latencies.meanMicros()));
				document.put("p50LatencyUs", OutputOptions.figure(latencies.percentileMicros(0.50)));
				document.put("p99LatencyUs", OutputOptions.figure(latencies.percentileMicros(0.99)));
				document.put("verifiedRequests", verified);
				document.put("completedLeases", completed);
				document.put("expiredLeases", expired);
				document.put("ok", ok);
				out.println(JsonWriter.write(document));
			}
			else {
				out.printf(Locale.ROOT, "KV cache: %s%n", local.fingerprint());
				out.printf(Locale.ROOT,
						"engine: %s; per request %d blocks in runs of %d = %d descriptors of %d KiB = %d MiB;"
								+ " integrity %s%n",
						engine, this.blocks, this.run, this.blocks * local.regionCount(), local.blockLength() >> 10,
						(this.blocks * (long) local.regionCount() * local.blockLength()) >> 20,
						this.integrity.name().toLowerCase(Locale.ROOT));
				out.printf(Locale.ROOT, "%-10s %-14s %-12s %-12s %-12s %-10s%n", "Requests", "B/W (GB/Sec)",
						"Mean (us)", "p50 (us)", "p99 (us)", "Verified");
				out.printf(Locale.ROOT, "%-10d %-14.3f %-12.1f %-12.1f %-12.1f %d/%d%n", this.requests, gbps,
						latencies.meanMicros(), latencies.percentileMicros(0.50), latencies.percentileMicros(0.99),
						verified, this.warmup + this.requests);
				out.printf(Locale.ROOT, "leases: %d completed, %d expired (warm-up included)%n", completed, expired);
				if (!ok) {
					out.println("kv-bench: some requests were not verified or their leases did not complete");
				}
			}
			return ok ? Nixl4jCli.EXIT_OK : Nixl4jCli.EXIT_FAILURE;
		}
	}

	/**
	 * Reads the checksums of a {@code LEASED} line: base64 of big-endian ints, {@code -}
	 * for none.
	 */
	private static List<Integer> checksums(String field) {
		if (field.equals("-")) {
			return List.of();
		}
		ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(field));
		List<Integer> checksums = new ArrayList<>(bytes.remaining() / Integer.BYTES);
		while (bytes.remaining() >= Integer.BYTES) {
			checksums.add(bytes.getInt());
		}
		return checksums;
	}

	/** Compares the CRC32C of every block of every region with the producer's. */
	private static boolean verify(PagedKvCache cache, int[] localBlocks, List<Integer> remoteBlocks, ByteBuffer crcs,
			int remoteNumBlocks) {
		for (int r = 0; r < cache.layout().regionCount(); r++) {
			for (int i = 0; i < localBlocks.length; i++) {
				long expected = crcs.getLong((r * remoteNumBlocks + remoteBlocks.get(i)) * Long.BYTES);
				if (Patterns.crc(cache.block(r, localBlocks[i])) != expected) {
					return false;
				}
			}
		}
		return true;
	}

}
