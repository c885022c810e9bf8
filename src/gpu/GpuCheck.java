import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaDevice;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.cuda.GpuMemory;
import dev.nixl4j.json.JsonWriter;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.PagedKvCache;

/**
 * The GPU check ({@code src/gpu/check.sh run}): moves VRAM through the native engine on
 * one CUDA device and prints one JSON summary.
 * <p>
 * Checks, each with every byte compared on the host after a copy back: VRAM to VRAM READ
 * and WRITE between two agents of this process and between this process and a child JVM
 * (CUDA IPC), DRAM to VRAM and back, and a KV pull of the default request shape (32
 * layers, K and V, 128 blocks of 16 tokens, 8 KV heads of 128 fp16 elements: 8,192
 * descriptors of 32 KiB, 256 MiB) between two {@link PagedKvCache}s on the device.
 * Beside them: the bandwidth of {@code cudaMemcpy} device to device (and host to device
 * and back) in the same run, the latency of 4 KiB READs, and the UCX transports named in
 * UCX's log.
 * <p>
 * Exit codes: {@value #EXIT_OK} every check passed; {@value #EXIT_FAILED} a check failed
 * or the check itself broke (the summary says which); {@value #EXIT_USAGE} usage;
 * {@value #EXIT_NO_GPU} no usable GPU (no {@code libcudart}, no device, or a driver too
 * old): the summary is then {@code {"gpu": false, "reason": "..."}}.
 * <p>
 * Everything CUDA goes through nixl-core's {@code dev.nixl4j.cuda}: {@link Cuda#report()}
 * finds {@code libcudart} ({@code -Dnixl.cuda.library} names a file) and the devices,
 * {@link GpuMemory} holds the device buffers, and {@link PagedKvCache}s on the device
 * ({@link PagedKvCache.Builder#device(int)}) the KV caches.
 */
public final class GpuCheck {

	static final int EXIT_OK = 0;

	static final int EXIT_FAILED = 1;

	static final int EXIT_USAGE = 2;

	static final int EXIT_NO_GPU = 3;

	static final long MIB = 1L << 20;

	/** Bytes of each bandwidth transfer. */
	static final long BULK = 256 * MIB;

	static final int BULK_REPEATS = 10;

	static final int LATENCY_SIZE = 4096;

	static final int LATENCY_WARMUP = 100;

	static final int LATENCY_REPEATS = 2000;

	/** The default KV request's cache: 32 layers, K and V, 16 tokens of 8 heads of 128 fp16. */
	static final KvCacheLayout KV_LAYOUT = KvCacheLayout.builder()
		.layers(32)
		.splitKv(true)
		.blocks(256)
		.blockSize(16)
		.kvHeads(8)
		.headDim(128)
		.dtypeSize(2)
		.build();

	static final int KV_REQUEST_BLOCKS = 128;

	static final int KV_REPEATS = 5;

	static final String KV_FINGERPRINT = "gpucheck";

	static final Duration WAIT = Duration.ofSeconds(60);

	static final String PEER_PREFIX = "GPUCHECK ";

	/**
	 * How "device" memory is registered: VRAM, or DRAM for a dry run of the whole check on
	 * a host without a GPU against a stand-in {@code libcudart} that allocates host memory
	 * ({@code -Dgpucheck.memoryType=DRAM}; the summary says so). The KV caches of a dry run
	 * are {@link PagedKvCache}s in host memory, as that is what the stand-in's memory is.
	 */
	static final MemoryType DEVICE_MEMORY = MemoryType.valueOf(System.getProperty("gpucheck.memoryType", "VRAM"));

	private final int device;

	private final Arena arena = Arena.ofShared();

	private final List<Map<String, Object>> checks = new ArrayList<>();

	/** Host memory for the expected bytes, reused by every check. */
	private final MemorySegment expected;

	/** Host memory that device memory is copied back into, reused by every check. */
	private final MemorySegment actual;

	private GpuCheck(int device) {
		this.device = device;
		this.expected = this.arena.allocate(BULK, 4096);
		this.actual = this.arena.allocate(BULK, 4096);
	}

	public static void main(String[] args) {
		String mode = (args.length > 0) ? args[0] : "check";
		if (mode.equals("peer")) {
			System.exit(peer());
		}
		if (!mode.equals("check") || args.length > 1) {
			System.err.println("usage: GpuCheck [check | peer]");
			System.exit(EXIT_USAGE);
		}
		long start = System.nanoTime();
		Map<String, Object> summary = new LinkedHashMap<>();
		int exit;
		try {
			exit = check(summary);
		}
		catch (Throwable ex) {
			summary.put("ok", false);
			summary.put("error", describe(ex));
			exit = EXIT_FAILED;
		}
		if (exit != EXIT_NO_GPU) {
			summary.put("elapsed_s", round((System.nanoTime() - start) / 1e9));
		}
		emit(summary);
		System.exit(exit);
	}

	private static int check(Map<String, Object> summary) {
		CudaReport report = Cuda.report();
		if (!report.usable()) {
			summary.put("gpu", false);
			summary.put("reason", report.summary());
			summary.put("attempts", report.attempts());
			return EXIT_NO_GPU;
		}
		int device = Integer.getInteger("gpucheck.device", 0);
		if (device < 0 || device >= report.devices().size()) {
			throw new IllegalArgumentException("-Dgpucheck.device=" + device + " is not a device: there are "
					+ report.devices().size() + " (" + report.summary() + ")");
		}
		CudaDevice cuda = report.devices().get(device);
		summary.put("gpu", true);
		summary.put("ok", false);
		Map<String, Object> info = new LinkedHashMap<>();
		info.put("name", cuda.name());
		info.put("compute_capability", cuda.computeCapability());
		info.put("count", report.devices().size());
		info.put("device", device);
		info.put("memory_total_bytes", cuda.totalMemory());
		info.put("driver_version", report.driverVersion());
		info.put("runtime_version", report.runtimeVersion());
		info.put("cudart", report.library());
		info.put("cudart_source", report.source());
		summary.put("cuda", info);
		if (DEVICE_MEMORY != MemoryType.VRAM) {
			summary.put("device_memory_registered_as", DEVICE_MEMORY.name());
		}
		GpuCheck check = new GpuCheck(device);
		summary.put("cuda_memcpy", check.memcpyBaseline());
		Map<String, Object> latency = new LinkedHashMap<>();
		check.run(summary, latency);
		summary.put("latency_4k", latency);
		summary.put("checks", check.checks);
		summary.put("ucx_transports", ucxTransports());
		boolean ok = check.checks.stream().allMatch((result) -> Boolean.TRUE.equals(result.get("ok")));
		summary.put("ok", ok);
		return ok ? EXIT_OK : EXIT_FAILED;
	}

	private void run(Map<String, Object> summary, Map<String, Object> latency) {
		// the agents close first, deregistering the memory before it is freed
		try (GpuMemory aVram = Cuda.allocate(this.device, BULK);
				GpuMemory bVram = Cuda.allocate(this.device, BULK);
				NixlAgent a = agent("gpucheck-a");
				NixlAgent b = agent("gpucheck-b")) {
			a.nativeLibrary().ifPresent((library) -> summary.put("nixl", Map.of("version", library.version(), "source",
					library.source(), "path", library.path().toString())));
			MemorySegment aDram = this.arena.allocate(BULK, 4096);
			a.register(vram(aVram.address(), BULK));
			a.register(aDram);
			b.register(vram(bVram.address(), BULK));
			a.loadRemoteMetadata(b.localMetadata());
			Buffer remote = Buffer.local(bVram);
			attempt("vram-vram-read-in-process", () -> moveVram(a, "gpucheck-b", XferOp.READ, aVram, remote, 1));
			attempt("vram-vram-write-in-process", () -> moveVram(a, "gpucheck-b", XferOp.WRITE, aVram, remote, 2));
			attempt("vram-to-dram-read-in-process", () -> moveDram(a, "gpucheck-b", XferOp.READ, aDram, remote, 3));
			attempt("dram-to-vram-write-in-process",
					() -> moveDram(a, "gpucheck-b", XferOp.WRITE, aDram, remote, 4));
			attempt("latency-4k-in-process", () -> {
				Map<String, Object> result = latency(a, "gpucheck-b", aVram, remote);
				latency.put("in_process", result);
				return result;
			});
			attempt("kv-pull-vram-vram-in-process", () -> kvPull(a, b));
			attempt("vram-vram-two-processes", () -> twoProcesses(a, aVram, latency));
		}
	}

	private static NixlAgent agent(String name) {
		return NixlAgent.create(AgentConfig.builder(name).engine(Engine.NATIVE).build());
	}

	/**
	 * Describes device memory as it is registered: VRAM with the device ordinal, or, in a
	 * dry run, DRAM.
	 */
	private DescriptorList vram(long address, long length) {
		return DescriptorList.of(DEVICE_MEMORY,
				new MemoryDescriptor(address, length, (DEVICE_MEMORY == MemoryType.VRAM) ? this.device : 0));
	}

	private void attempt(String name, Step step) {
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("name", name);
		try {
			result.putAll(step.run());
			result.putIfAbsent("ok", true);
		}
		catch (Throwable ex) {
			result.put("ok", false);
			result.put("error", describe(ex));
		}
		this.checks.add(result);
	}

	/**
	 * Moves {@link #BULK} bytes between local VRAM and a peer's VRAM: once into cleared
	 * memory, checked byte for byte, then {@link #BULK_REPEATS} times timed.
	 */
	private Map<String, Object> moveVram(NixlAgent agent, String peer, XferOp op, GpuMemory local, Buffer remote,
			long seed) {
		long mismatches;
		DescriptorList localList = vram(local.address(), BULK);
		DescriptorList remoteList = vram(remote.address, BULK);
		if (op == XferOp.READ) {
			remote.fill(this, seed, BULK);
			local.fill(0, BULK, (byte) 0);
			transfer(agent, op, localList, remoteList, peer);
			mismatches = mismatches(local, pattern(BULK, seed));
		}
		else {
			local.copyFrom(pattern(BULK, seed), 0);
			remote.clear();
			transfer(agent, op, localList, remoteList, peer);
			mismatches = remote.verify(this, seed);
		}
		Map<String, Object> result = timed(agent, op, localList, remoteList, peer);
		result.put("verified_bytes", BULK);
		result.put("mismatched_bytes", mismatches);
		result.put("ok", mismatches == 0);
		return result;
	}

	/** Moves {@link #BULK} bytes between local DRAM and a peer's VRAM. */
	private Map<String, Object> moveDram(NixlAgent agent, String peer, XferOp op, MemorySegment local, Buffer remote,
			long seed) {
		long mismatches;
		DescriptorList localList = DescriptorList.of(local);
		DescriptorList remoteList = vram(remote.address, BULK);
		if (op == XferOp.READ) {
			remote.fill(this, seed, BULK);
			local.fill((byte) 0);
			transfer(agent, op, localList, remoteList, peer);
			mismatches = countMismatches(local, pattern(BULK, seed));
		}
		else {
			MemorySegment.copy(pattern(BULK, seed), 0, local, 0, BULK);
			remote.clear();
			transfer(agent, op, localList, remoteList, peer);
			mismatches = remote.verify(this, seed);
		}
		Map<String, Object> result = timed(agent, op, localList, remoteList, peer);
		result.put("verified_bytes", BULK);
		result.put("mismatched_bytes", mismatches);
		result.put("ok", mismatches == 0);
		return result;
	}

	private Map<String, Object> timed(NixlAgent agent, XferOp op, DescriptorList local, DescriptorList remote,
			String peer) {
		long start = System.nanoTime();
		for (int i = 0; i < BULK_REPEATS; i++) {
			transfer(agent, op, local, remote, peer);
		}
		double seconds = (System.nanoTime() - start) / 1e9;
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("op", op.name());
		result.put("bytes", local.totalBytes());
		result.put("repeats", BULK_REPEATS);
		result.put("gb_per_s", round(local.totalBytes() * BULK_REPEATS / seconds / 1e9));
		return result;
	}

	private Map<String, Object> latency(NixlAgent agent, String peer, GpuMemory local, Buffer remote) {
		remote.fill(this, 5, LATENCY_SIZE);
		local.fill(0, LATENCY_SIZE, (byte) 0);
		DescriptorList localList = vram(local.address(), LATENCY_SIZE);
		DescriptorList remoteList = vram(remote.address, LATENCY_SIZE);
		for (int i = 0; i < LATENCY_WARMUP; i++) {
			transfer(agent, XferOp.READ, localList, remoteList, peer);
		}
		long[] nanos = new long[LATENCY_REPEATS];
		for (int i = 0; i < LATENCY_REPEATS; i++) {
			long start = System.nanoTime();
			transfer(agent, XferOp.READ, localList, remoteList, peer);
			nanos[i] = System.nanoTime() - start;
		}
		Arrays.sort(nanos);
		long mismatches = mismatches(local, pattern(LATENCY_SIZE, 5));
		Map<String, Object> result = new LinkedHashMap<>();
		result.put("op", "READ");
		result.put("bytes", LATENCY_SIZE);
		result.put("repeats", LATENCY_REPEATS);
		result.put("p50_us", round(nanos[LATENCY_REPEATS / 2] / 1e3));
		result.put("p99_us", round(nanos[LATENCY_REPEATS * 99 / 100] / 1e3));
		result.put("mean_us", round(Arrays.stream(nanos).average().orElse(0) / 1e3));
		result.put("mismatched_bytes", mismatches);
		result.put("ok", mismatches == 0);
		return result;
	}

	/**
	 * Pulls a request of {@link #KV_REQUEST_BLOCKS} blocks from a producer's
	 * {@link PagedKvCache} to a consumer's, both on the device (one {@code cudaMalloc} per
	 * layer and K or V), blocks picked at random on both sides (as a block allocator hands
	 * them out), with the descriptors {@link PagedKvCache#descriptors(int...)} gives. A dry
	 * run's caches are in host memory: the stand-in's "device" memory is host memory, and
	 * the engine is told what the memory is.
	 */
	private Map<String, Object> kvPull(NixlAgent consumer, NixlAgent producer) {
		boolean onDevice = DEVICE_MEMORY == MemoryType.VRAM;
		try (PagedKvCache produced = kvCache(producer, onDevice); PagedKvCache consumed = kvCache(consumer, onDevice)) {
			long regionLength = KV_LAYOUT.regionLength();
			long blockLength = KV_LAYOUT.blockLength();
			for (int r = 0; r < KV_LAYOUT.regionCount(); r++) {
				MemorySegment source = pattern(regionLength, 100 + r);
				if (onDevice) {
					produced.deviceRegion(r).copyFrom(source, 0);
					consumed.deviceRegion(r).fill(0, regionLength, (byte) 0);
				}
				else {
					produced.region(r).copyFrom(source);
					consumed.region(r).fill((byte) 0);
				}
			}
			consumer.loadRemoteMetadata(producer.localMetadata());
			Random random = new Random(42);
			int[] from = pick(random);
			int[] to = pick(random);
			DescriptorList localList = consumed.descriptors(to);
			DescriptorList remoteList = produced.descriptors(from);
			transfer(consumer, XferOp.READ, localList, remoteList, producer.name());
			long mismatches = 0;
			for (int r = 0; r < KV_LAYOUT.regionCount(); r++) {
				MemorySegment source = pattern(regionLength, 100 + r);
				MemorySegment host;
				if (onDevice) {
					host = this.actual.asSlice(0, regionLength);
					consumed.deviceRegion(r).copyTo(0, host);
				}
				else {
					host = consumed.region(r);
				}
				for (int i = 0; i < KV_REQUEST_BLOCKS; i++) {
					mismatches += countMismatches(host.asSlice(to[i] * blockLength, blockLength),
							source.asSlice(from[i] * blockLength, blockLength));
				}
			}
			long[] nanos = new long[KV_REPEATS];
			for (int i = 0; i < KV_REPEATS; i++) {
				long start = System.nanoTime();
				transfer(consumer, XferOp.READ, localList, remoteList, producer.name());
				nanos[i] = System.nanoTime() - start;
			}
			Arrays.sort(nanos);
			long bytes = localList.totalBytes();
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("op", "READ");
			result.put("cache_memory", consumed.memoryType().name());
			if (!onDevice) {
				result.put("note", "dry run: the stand-in's device memory is host memory, so both caches are "
						+ "PagedKvCache in host memory, registered as DRAM");
			}
			result.put("layers", KV_LAYOUT.numLayers());
			result.put("blocks", KV_REQUEST_BLOCKS);
			result.put("descriptors", localList.size());
			result.put("bytes", bytes);
			result.put("repeats", KV_REPEATS);
			result.put("median_ms", round(nanos[KV_REPEATS / 2] / 1e6));
			result.put("gb_per_s", round(bytes / (nanos[KV_REPEATS / 2] / 1e9) / 1e9));
			result.put("verified_bytes", bytes);
			result.put("mismatched_bytes", mismatches);
			result.put("ok", mismatches == 0);
			return result;
		}
	}

	/** A cache of {@link #KV_LAYOUT} on the checked device, or in host memory. */
	private PagedKvCache kvCache(NixlAgent agent, boolean onDevice) {
		PagedKvCache.Builder builder = PagedKvCache.builder(agent, KV_LAYOUT).modelFingerprint(KV_FINGERPRINT);
		return (onDevice ? builder.device(this.device) : builder).build();
	}

	private static int[] pick(Random random) {
		List<Integer> ids = new ArrayList<>();
		for (int i = 0; i < KV_LAYOUT.numBlocks(); i++) {
			ids.add(i);
		}
		Collections.shuffle(ids, random);
		return ids.subList(0, KV_REQUEST_BLOCKS).stream().mapToInt(Integer::intValue).toArray();
	}

	/**
	 * READ and WRITE between this process's agent and a child JVM's, whose VRAM UCX reaches
	 * through CUDA IPC; the child checks what was written into its memory.
	 */
	private Map<String, Object> twoProcesses(NixlAgent agent, GpuMemory local, Map<String, Object> latency)
			throws IOException, InterruptedException {
		Optional<String> javaCommand = ProcessHandle.current().info().command();
		List<String> command = new ArrayList<>();
		command.add(javaCommand.orElseThrow());
		command.add("--enable-native-access=ALL-UNNAMED");
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		System.getProperties()
			.stringPropertyNames()
			.stream()
			.filter((name) -> (name.startsWith("gpucheck.") || name.startsWith("nixl."))
					&& !name.equals("gpucheck.summary"))
			.forEach((name) -> command.add("-D" + name + "=" + System.getProperty(name)));
		command.add(GpuCheck.class.getName());
		command.add("peer");
		Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
		try (BufferedReader in = new BufferedReader(
				new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
				PrintStream out = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8)) {
			Peer peer = new Peer(in, out);
			String[] meta = peer.answer("META");
			String name = agent.loadRemoteMetadata(AgentMetadata.of(Base64.getDecoder().decode(meta[0])));
			Buffer remote = Buffer.child(Long.parseLong(meta[1]), peer);
			Map<String, Object> result = new LinkedHashMap<>();
			result.put("read", moveVram(agent, name, XferOp.READ, local, remote, 6));
			result.put("write", moveVram(agent, name, XferOp.WRITE, local, remote, 7));
			Map<String, Object> slow = latency(agent, name, local, remote);
			latency.put("two_processes", slow);
			result.put("latency_4k", slow);
			peer.answer("QUIT");
			result.put("ok", List.of("read", "write", "latency_4k")
				.stream()
				.allMatch((key) -> Boolean.TRUE.equals(((Map<?, ?>) result.get(key)).get("ok"))));
			return result;
		}
		finally {
			if (!child.waitFor(30, TimeUnit.SECONDS)) {
				child.destroyForcibly();
			}
		}
	}

	/**
	 * The child process of {@link #twoProcesses}: one agent with {@link #BULK} bytes of VRAM;
	 * answers its parent's requests on stdin, one line each.
	 */
	private static int peer() {
		int device = Integer.getInteger("gpucheck.device", 0);
		try (GpuMemory buffer = Cuda.allocate(device, BULK); NixlAgent agent = agent("gpucheck-peer")) {
			GpuCheck check = new GpuCheck(device);
			agent.register(check.vram(buffer.address(), BULK));
			reply("META", Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()),
					Long.toString(buffer.address()));
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			for (String line = in.readLine(); line != null; line = in.readLine()) {
				String[] words = line.strip().split(" ");
				switch (words[0]) {
					case "FILL" -> {
						buffer.copyFrom(check.pattern(Long.parseLong(words[2]), Long.parseLong(words[1])), 0);
						reply("FILL");
					}
					case "CLEAR" -> {
						buffer.fill(0, BULK, (byte) 0);
						reply("CLEAR");
					}
					case "VERIFY" -> reply("VERIFY", Long.toString(
							check.mismatches(buffer, check.pattern(Long.parseLong(words[2]), Long.parseLong(words[1])))));
					case "QUIT" -> {
						reply("QUIT");
						return EXIT_OK;
					}
					default -> reply("ERROR", "unknown request " + words[0]);
				}
			}
			return EXIT_OK;
		}
		catch (Throwable ex) {
			reply("ERROR", describe(ex).toString().replace('\n', ' '));
			return EXIT_FAILED;
		}
	}

	private static void reply(String kind, String... words) {
		System.out.println(PEER_PREFIX + kind + (words.length == 0 ? "" : " " + String.join(" ", words)));
		System.out.flush();
	}

	/**
	 * The bandwidth of {@code cudaMemcpy} on the device: each copy of {@link GpuMemory}
	 * waits for itself, and {@link Cuda#synchronize(int)} before and after each timed loop
	 * keeps other work out of the figure.
	 */
	private Map<String, Object> memcpyBaseline() {
		Map<String, Object> result = new LinkedHashMap<>();
		MemorySegment host = this.actual;
		try (GpuMemory source = Cuda.allocate(this.device, BULK); GpuMemory target = Cuda.allocate(this.device, BULK)) {
			source.fill(0, BULK, (byte) 1);
			target.copyFrom(source, 0, 0, BULK);
			Cuda.synchronize(this.device);
			long start = System.nanoTime();
			for (int i = 0; i < BULK_REPEATS; i++) {
				target.copyFrom(source, 0, 0, BULK);
			}
			Cuda.synchronize(this.device);
			result.put("d2d_gb_per_s", round(BULK * BULK_REPEATS / ((System.nanoTime() - start) / 1e9) / 1e9));
			start = System.nanoTime();
			for (int i = 0; i < BULK_REPEATS; i++) {
				target.copyFrom(host, 0);
			}
			Cuda.synchronize(this.device);
			result.put("h2d_pageable_gb_per_s",
					round(BULK * BULK_REPEATS / ((System.nanoTime() - start) / 1e9) / 1e9));
			start = System.nanoTime();
			for (int i = 0; i < BULK_REPEATS; i++) {
				source.copyTo(0, host);
			}
			Cuda.synchronize(this.device);
			result.put("d2h_pageable_gb_per_s",
					round(BULK * BULK_REPEATS / ((System.nanoTime() - start) / 1e9) / 1e9));
			result.put("bytes", BULK);
			result.put("repeats", BULK_REPEATS);
			result.put("note", "GB/s of bytes copied (not read plus written)");
		}
		return result;
	}

	private static void transfer(NixlAgent agent, XferOp op, DescriptorList local, DescriptorList remote,
			String peer) {
		try (Transfer transfer = agent.transfer(op, local, remote, peer, null)) {
			transfer.await(WAIT);
		}
	}

	/** Copies device memory to the host and counts the bytes that differ. */
	private long mismatches(GpuMemory memory, MemorySegment expected) {
		MemorySegment host = this.actual.asSlice(0, expected.byteSize());
		memory.copyTo(0, host);
		return countMismatches(host, expected);
	}

	/**
	 * Counts the bytes that differ, in chunks that are compared whole first, so that a
	 * buffer that differs everywhere is counted in a second, not byte by byte through
	 * {@code mismatch}.
	 */
	private static long countMismatches(MemorySegment actual, MemorySegment expected) {
		long count = 0;
		long size = expected.byteSize();
		long chunk = 64 * 1024;
		for (long offset = 0; offset < size; offset += chunk) {
			long length = Math.min(chunk, size - offset);
			MemorySegment got = actual.asSlice(offset, length);
			MemorySegment want = expected.asSlice(offset, length);
			if (got.mismatch(want) < 0) {
				continue;
			}
			for (long i = 0; i < length; i++) {
				if (got.get(ValueLayout.JAVA_BYTE, i) != want.get(ValueLayout.JAVA_BYTE, i)) {
					count++;
				}
			}
		}
		return count;
	}

	/**
	 * Writes a repeatable pattern into the host memory for expected bytes: every 8 bytes a
	 * splitmix64 value of the seed and the index.
	 */
	MemorySegment pattern(long size, long seed) {
		MemorySegment segment = this.expected.asSlice(0, size);
		long words = size / 8;
		for (long i = 0; i < words; i++) {
			long z = seed * 0x9E3779B97F4A7C15L + i * 0xBF58476D1CE4E5B9L;
			z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
			z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
			segment.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, z ^ (z >>> 31));
		}
		return segment;
	}

	/**
	 * What UCX chose, from the folder {@code check.sh} gives: the protocols of its
	 * {@code UCX_PROTO_INFO} tables in UCX's log ({@code UCX_LOG_FILE}), each operation with
	 * the transports that served it (such as {@code cuda_ipc/cuda} or {@code cuda_copy/cuda}),
	 * and how often each transport name appears there and in {@code ucx_info -d}.
	 */
	private static Map<String, Object> ucxTransports() {
		Map<String, Object> result = new LinkedHashMap<>();
		String logs = System.getProperty("gpucheck.logs");
		if (logs == null) {
			result.put("note", "no log folder given (-Dgpucheck.logs)");
			return result;
		}
		Pattern names = Pattern.compile("\\b(cuda_ipc|cuda_copy|gdr_copy|rc_mlx5|rc_verbs|dc_mlx5|ud_mlx5|ud_verbs|"
				+ "tcp|posix|sysv|cma|knem|xpmem|self)\\b");
		Map<String, Integer> inLogs = new TreeMap<>();
		Map<String, Integer> inInfo = new TreeMap<>();
		Map<String, SortedSet<String>> protocols = new TreeMap<>();
		try (DirectoryStream<Path> files = Files.newDirectoryStream(Path.of(logs))) {
			for (Path file : files) {
				String fileName = file.getFileName().toString();
				if (fileName.endsWith(".json")) {
					continue;
				}
				boolean info = fileName.startsWith("ucx_info");
				String operation = null;
				boolean title = false;
				try (BufferedReader reader = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1)) {
					for (String line = reader.readLine(); line != null; line = reader.readLine()) {
						Matcher matcher = names.matcher(line);
						while (matcher.find()) {
							(info ? inInfo : inLogs).merge(matcher.group(1), 1, Integer::sum);
						}
						int bar = line.indexOf('|');
						int border = line.indexOf("+-");
						if (info || (bar < 0 && border < 0)) {
							continue;
						}
						if (border >= 0 && (bar < 0 || border < bar)) {
							title = true;
							continue;
						}
						List<String> cells = Arrays.stream(line.substring(bar + 1).split("\\|"))
							.map(String::strip)
							.filter((cell) -> !cell.isEmpty())
							.toList();
						if (cells.size() == 1 && title) {
							if (!cells.get(0).contains("cfg#")) {
								operation = cells.get(0);
							}
						}
						else if (cells.size() >= 2 && operation != null && !cells.get(0).equals("Range")) {
							title = false;
							protocols.computeIfAbsent(operation, (key) -> new TreeSet<>())
								.add(cells.get(cells.size() - 1));
						}
					}
				}
			}
		}
		catch (IOException | UncheckedIOException ex) {
			result.put("error", ex.toString());
		}
		Map<String, Object> chosen = new LinkedHashMap<>();
		protocols.forEach((operation, configs) -> chosen.put(operation, List.copyOf(configs)));
		result.put("protocols", chosen);
		result.put("in_ucx_log", inLogs);
		result.put("ucx_info", inInfo);
		result.put("logs", logs);
		return result;
	}

	private static Map<String, Object> describe(Throwable ex) {
		Map<String, Object> error = new LinkedHashMap<>();
		error.put("type", ex.getClass().getName());
		error.put("message", String.valueOf(ex.getMessage()));
		if (ex instanceof NixlException nixl) {
			error.put("status", nixl.status().name());
			error.put("operation", nixl.operation());
		}
		if (ex.getCause() != null) {
			error.put("cause", String.valueOf(ex.getCause()));
		}
		return error;
	}

	private static double round(double value) {
		return Math.round(value * 1000) / 1000.0;
	}

	private static void emit(Map<String, Object> summary) {
		String json = JsonWriter.write(summary);
		String file = System.getProperty("gpucheck.summary");
		if (file != null) {
			try {
				Files.writeString(Path.of(file), json + "\n");
				return;
			}
			catch (IOException ex) {
				System.err.println("gpucheck: cannot write " + file + ": " + ex);
			}
		}
		System.out.println(json);
	}

	private interface Step {

		Map<String, Object> run() throws Exception;

	}

	/** VRAM on the other side of a transfer: this process's, or the child's. */
	private static final class Buffer {

		final long address;

		/** This process's memory, or {@code null} for the child's. */
		final GpuMemory memory;

		/** The child, or {@code null} for this process's memory. */
		final Peer peer;

		private Buffer(long address, GpuMemory memory, Peer peer) {
			this.address = address;
			this.memory = memory;
			this.peer = peer;
		}

		static Buffer local(GpuMemory memory) {
			return new Buffer(memory.address(), memory, null);
		}

		static Buffer child(long address, Peer peer) {
			return new Buffer(address, null, peer);
		}

		void fill(GpuCheck check, long seed, long size) {
			if (this.memory != null) {
				this.memory.copyFrom(check.pattern(size, seed), 0);
			}
			else {
				this.peer.answer("FILL " + seed + " " + size);
			}
		}

		void clear() {
			if (this.memory != null) {
				this.memory.fill(0, BULK, (byte) 0);
			}
			else {
				this.peer.answer("CLEAR");
			}
		}

		long verify(GpuCheck check, long seed) {
			if (this.memory != null) {
				return check.mismatches(this.memory, check.pattern(BULK, seed));
			}
			return Long.parseLong(this.peer.answer("VERIFY " + seed + " " + BULK)[0]);
		}

	}

	/** The parent's end of the child's stdin and stdout. */
	private record Peer(BufferedReader in, PrintStream out) {

		String[] answer(String request) {
			if (!request.equals("META")) {
				this.out.println(request);
			}
			String kind = request.split(" ")[0];
			try {
				for (String line = this.in.readLine(); line != null; line = this.in.readLine()) {
					if (!line.startsWith(PEER_PREFIX)) {
						System.err.println("peer: " + line);
						continue;
					}
					String[] words = line.substring(PEER_PREFIX.length()).split(" ");
					if (words[0].equals("ERROR")) {
						throw new IllegalStateException("peer: " + line);
					}
					if (words[0].equals(kind)) {
						return Arrays.copyOfRange(words, 1, words.length);
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			throw new IllegalStateException("peer ended before answering " + kind);
		}

	}

}
