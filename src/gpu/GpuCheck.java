import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
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
import java.util.NoSuchElementException;
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
import dev.nixl4j.json.JsonWriter;

/**
 * The GPU check ({@code src/gpu/check.sh run}): moves VRAM through the native engine on
 * one CUDA device and prints one JSON summary.
 * <p>
 * Checks, each with every byte compared on the host after a copy back: VRAM to VRAM READ
 * and WRITE between two agents of this process and between this process and a child JVM
 * (CUDA IPC), DRAM to VRAM and back, and a KV pull of the default request shape (32
 * layers, K and V, 128 blocks of 16 tokens, 8 KV heads of 128 fp16 elements: 8,192
 * descriptors of 32 KiB, 256 MiB) from VRAM to VRAM. Beside them: the bandwidth of
 * {@code cudaMemcpy} device to device (and host to device and back) in the same run, the
 * latency of 4 KiB READs, and the UCX transports named in UCX's log.
 * <p>
 * Exit codes: {@value #EXIT_OK} every check passed; {@value #EXIT_FAILED} a check failed
 * or the check itself broke (the summary says which); {@value #EXIT_USAGE} usage;
 * {@value #EXIT_NO_GPU} no usable GPU (no {@code libcudart}, no device, or a driver too
 * old): the summary is then {@code {"gpu": false, "reason": "..."}}.
 * <p>
 * The CUDA calls go through {@link Cuda}, this check's own minimal FFM shim over
 * {@code libcudart}; it is to be replaced by nixl-core's CUDA binding when that is merged.
 * The KV pull builds its descriptors the way {@code PagedKvCache} lays out vLLM's cache;
 * once {@code PagedKvCache} allocates on a device, the pull is to go through
 * {@code KvConsumer.pull} instead.
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

	static final int KV_LAYERS = 32;

	static final int KV_REGIONS = KV_LAYERS * 2;

	static final long KV_BLOCK = 16 * 8 * 128 * 2;

	static final int KV_CACHE_BLOCKS = 256;

	static final int KV_REQUEST_BLOCKS = 128;

	static final int KV_REPEATS = 5;

	static final Duration WAIT = Duration.ofSeconds(60);

	static final String PEER_PREFIX = "GPUCHECK ";

	/**
	 * How "device" memory is registered: VRAM, or DRAM for a dry run of the whole check on
	 * a host without a GPU against a stand-in {@code libcudart} that allocates host memory
	 * ({@code -Dgpucheck.memoryType=DRAM}; the summary says so).
	 */
	static final MemoryType DEVICE_MEMORY = MemoryType.valueOf(System.getProperty("gpucheck.memoryType", "VRAM"));

	private final Cuda cuda;

	private final int device;

	private final Arena arena = Arena.ofShared();

	private final List<Map<String, Object>> checks = new ArrayList<>();

	/** Host memory for the expected bytes, reused by every check. */
	private final MemorySegment expected;

	/** Host memory that device memory is copied back into, reused by every check. */
	private final MemorySegment actual;

	private GpuCheck(Cuda cuda, int device) {
		this.cuda = cuda;
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
		Cuda cuda;
		try {
			cuda = Cuda.load();
		}
		catch (Cuda.Unavailable ex) {
			return noGpu(summary, String.valueOf(ex.getMessage()));
		}
		int count;
		try {
			count = cuda.deviceCount();
		}
		catch (Cuda.Error ex) {
			return noGpu(summary, "cudaGetDeviceCount: " + ex.getMessage() + " (" + cuda.path + ")");
		}
		if (count < 1) {
			return noGpu(summary, "no CUDA device (" + cuda.path + ")");
		}
		int device = Integer.getInteger("gpucheck.device", 0);
		cuda.setDevice(device);
		summary.put("gpu", true);
		summary.put("ok", false);
		Map<String, Object> info = new LinkedHashMap<>();
		info.put("name", cuda.deviceName(device));
		info.put("count", count);
		info.put("device", device);
		info.put("memory_total_bytes", cuda.totalMemory());
		info.put("driver_version", cuda.driverVersion());
		info.put("runtime_version", cuda.runtimeVersion());
		info.put("cudart", cuda.path.toString());
		summary.put("cuda", info);
		if (DEVICE_MEMORY != MemoryType.VRAM) {
			summary.put("device_memory_registered_as", DEVICE_MEMORY.name());
		}
		GpuCheck check = new GpuCheck(cuda, device);
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

	private static int noGpu(Map<String, Object> summary, String reason) {
		summary.put("gpu", false);
		summary.put("reason", reason);
		return EXIT_NO_GPU;
	}

	private void run(Map<String, Object> summary, Map<String, Object> latency) {
		try (NixlAgent a = agent("gpucheck-a"); NixlAgent b = agent("gpucheck-b")) {
			a.nativeLibrary().ifPresent((library) -> summary.put("nixl", Map.of("version", library.version(), "source",
					library.source(), "path", library.path().toString())));
			long aVram = this.cuda.malloc(BULK);
			long bVram = this.cuda.malloc(BULK);
			MemorySegment aDram = this.arena.allocate(BULK, 4096);
			a.register(vram(aVram, BULK));
			a.register(aDram);
			b.register(vram(bVram, BULK));
			a.loadRemoteMetadata(b.localMetadata());
			Buffer remote = new Buffer(bVram, true);
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
			this.cuda.free(aVram);
			this.cuda.free(bVram);
		}
	}

	private static NixlAgent agent(String name) {
		return NixlAgent.create(AgentConfig.builder(name).engine(Engine.NATIVE).build());
	}

	private DescriptorList vram(long address, long length) {
		return DescriptorList.of(DEVICE_MEMORY, descriptor(address, length));
	}

	private MemoryDescriptor descriptor(long address, long length) {
		return new MemoryDescriptor(address, length, (DEVICE_MEMORY == MemoryType.VRAM) ? this.device : 0);
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
	private Map<String, Object> moveVram(NixlAgent agent, String peer, XferOp op, long local, Buffer remote,
			long seed) {
		MemorySegment expected = pattern(BULK, seed);
		long target;
		if (op == XferOp.READ) {
			remote.fill(this, seed, BULK);
			this.cuda.memset(local, 0, BULK);
			target = local;
		}
		else {
			this.cuda.copyToDevice(local, expected);
			remote.clear(this);
			target = remote.address;
		}
		DescriptorList localList = vram(local, BULK);
		DescriptorList remoteList = vram(remote.address, BULK);
		transfer(agent, op, localList, remoteList, peer);
		long mismatches = (op == XferOp.READ || remote.local) ? mismatches(target, expected) : remote.verify(seed);
		Map<String, Object> result = timed(agent, op, localList, remoteList, peer);
		result.put("verified_bytes", BULK);
		result.put("mismatched_bytes", mismatches);
		result.put("ok", mismatches == 0);
		return result;
	}

	/** Moves {@link #BULK} bytes between local DRAM and a peer's VRAM. */
	private Map<String, Object> moveDram(NixlAgent agent, String peer, XferOp op, MemorySegment local, Buffer remote,
			long seed) {
		MemorySegment expected = pattern(BULK, seed);
		long mismatches;
		DescriptorList localList = DescriptorList.of(local);
		DescriptorList remoteList = vram(remote.address, BULK);
		if (op == XferOp.READ) {
			remote.fill(this, seed, BULK);
			local.fill((byte) 0);
			transfer(agent, op, localList, remoteList, peer);
			mismatches = countMismatches(local, expected);
		}
		else {
			MemorySegment.copy(expected, 0, local, 0, BULK);
			remote.clear(this);
			transfer(agent, op, localList, remoteList, peer);
			mismatches = mismatches(remote.address, expected);
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

	private Map<String, Object> latency(NixlAgent agent, String peer, long local, Buffer remote) {
		MemorySegment expected = pattern(LATENCY_SIZE, 5);
		remote.fill(this, 5, LATENCY_SIZE);
		this.cuda.memset(local, 0, LATENCY_SIZE);
		DescriptorList localList = vram(local, LATENCY_SIZE);
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
		long mismatches = mismatches(local, expected);
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
	 * Pulls a request of {@link #KV_REQUEST_BLOCKS} blocks from a producer's cache to a
	 * consumer's, both in VRAM, one region per layer and K or V, blocks picked at random
	 * on both sides (as a block allocator hands them out).
	 */
	private Map<String, Object> kvPull(NixlAgent consumer, NixlAgent producer) {
		long regionLength = KV_BLOCK * KV_CACHE_BLOCKS;
		long[] produced = new long[KV_REGIONS];
		long[] consumed = new long[KV_REGIONS];
		List<MemoryDescriptor> producerRegions = new ArrayList<>();
		List<MemoryDescriptor> consumerRegions = new ArrayList<>();
		try {
			for (int r = 0; r < KV_REGIONS; r++) {
				produced[r] = this.cuda.malloc(regionLength);
				consumed[r] = this.cuda.malloc(regionLength);
				producerRegions.add(descriptor(produced[r], regionLength));
				consumerRegions.add(descriptor(consumed[r], regionLength));
				this.cuda.copyToDevice(produced[r], pattern(regionLength, 100 + r));
				this.cuda.memset(consumed[r], 0, regionLength);
			}
			producer.register(new DescriptorList(DEVICE_MEMORY, producerRegions));
			consumer.register(new DescriptorList(DEVICE_MEMORY, consumerRegions));
			consumer.loadRemoteMetadata(producer.localMetadata());
			Random random = new Random(42);
			int[] from = pick(random);
			int[] to = pick(random);
			List<MemoryDescriptor> local = new ArrayList<>();
			List<MemoryDescriptor> remote = new ArrayList<>();
			for (int r = 0; r < KV_REGIONS; r++) {
				for (int i = 0; i < KV_REQUEST_BLOCKS; i++) {
					local.add(descriptor(consumed[r] + to[i] * KV_BLOCK, KV_BLOCK));
					remote.add(descriptor(produced[r] + from[i] * KV_BLOCK, KV_BLOCK));
				}
			}
			DescriptorList localList = new DescriptorList(DEVICE_MEMORY, local);
			DescriptorList remoteList = new DescriptorList(DEVICE_MEMORY, remote);
			transfer(consumer, XferOp.READ, localList, remoteList, producer.name());
			long mismatches = 0;
			MemorySegment host = this.actual.asSlice(0, regionLength);
			for (int r = 0; r < KV_REGIONS; r++) {
				MemorySegment source = pattern(regionLength, 100 + r);
				this.cuda.copyToHost(host, consumed[r]);
				for (int i = 0; i < KV_REQUEST_BLOCKS; i++) {
					mismatches += countMismatches(host.asSlice(to[i] * KV_BLOCK, KV_BLOCK),
							source.asSlice(from[i] * KV_BLOCK, KV_BLOCK));
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
			result.put("layers", KV_LAYERS);
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
		finally {
			for (int r = 0; r < KV_REGIONS; r++) {
				this.cuda.free(produced[r]);
				this.cuda.free(consumed[r]);
			}
		}
	}

	private static int[] pick(Random random) {
		List<Integer> ids = new ArrayList<>();
		for (int i = 0; i < KV_CACHE_BLOCKS; i++) {
			ids.add(i);
		}
		Collections.shuffle(ids, random);
		return ids.subList(0, KV_REQUEST_BLOCKS).stream().mapToInt(Integer::intValue).toArray();
	}

	/**
	 * READ and WRITE between this process's agent and a child JVM's, whose VRAM UCX reaches
	 * through CUDA IPC; the child checks what was written into its memory.
	 */
	private Map<String, Object> twoProcesses(NixlAgent agent, long local, Map<String, Object> latency)
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
			.filter((name) -> name.startsWith("gpucheck.") && !name.equals("gpucheck.summary"))
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
			Buffer remote = new Buffer(Long.parseLong(meta[1]), false);
			remote.peer = peer;
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
		try {
			Cuda cuda = Cuda.load();
			int device = Integer.getInteger("gpucheck.device", 0);
			cuda.setDevice(device);
			GpuCheck check = new GpuCheck(cuda, device);
			long buffer = cuda.malloc(BULK);
			try (NixlAgent agent = agent("gpucheck-peer")) {
				agent.register(check.vram(buffer, BULK));
				reply("META", Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()),
						Long.toString(buffer));
				BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
				for (String line = in.readLine(); line != null; line = in.readLine()) {
					String[] words = line.strip().split(" ");
					switch (words[0]) {
						case "FILL" -> {
							cuda.copyToDevice(buffer,
									check.pattern(Long.parseLong(words[2]), Long.parseLong(words[1])));
							reply("FILL");
						}
						case "CLEAR" -> {
							cuda.memset(buffer, 0, BULK);
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

	private Map<String, Object> memcpyBaseline() {
		Map<String, Object> result = new LinkedHashMap<>();
		long source = this.cuda.malloc(BULK);
		long target = this.cuda.malloc(BULK);
		MemorySegment host = this.actual;
		try {
			this.cuda.memset(source, 1, BULK);
			this.cuda.copy(target, source, BULK, Cuda.DEVICE_TO_DEVICE);
			long start = System.nanoTime();
			for (int i = 0; i < BULK_REPEATS; i++) {
				this.cuda.copy(target, source, BULK, Cuda.DEVICE_TO_DEVICE);
			}
			this.cuda.synchronize();
			result.put("d2d_gb_per_s", round(BULK * BULK_REPEATS / ((System.nanoTime() - start) / 1e9) / 1e9));
			start = System.nanoTime();
			for (int i = 0; i < BULK_REPEATS; i++) {
				this.cuda.copy(target, host.address(), BULK, Cuda.HOST_TO_DEVICE);
			}
			result.put("h2d_pageable_gb_per_s",
					round(BULK * BULK_REPEATS / ((System.nanoTime() - start) / 1e9) / 1e9));
			start = System.nanoTime();
			for (int i = 0; i < BULK_REPEATS; i++) {
				this.cuda.copy(host.address(), source, BULK, Cuda.DEVICE_TO_HOST);
			}
			result.put("d2h_pageable_gb_per_s",
					round(BULK * BULK_REPEATS / ((System.nanoTime() - start) / 1e9) / 1e9));
			result.put("bytes", BULK);
			result.put("repeats", BULK_REPEATS);
			result.put("note", "GB/s of bytes copied (not read plus written)");
		}
		finally {
			this.cuda.free(source);
			this.cuda.free(target);
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
	private long mismatches(long address, MemorySegment expected) {
		MemorySegment host = this.actual.asSlice(0, expected.byteSize());
		this.cuda.copyToHost(host, address);
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

		final boolean local;

		Peer peer;

		Buffer(long address, boolean local) {
			this.address = address;
			this.local = local;
		}

		void fill(GpuCheck check, long seed, long size) {
			if (this.local) {
				check.cuda.copyToDevice(this.address, check.pattern(size, seed));
			}
			else {
				this.peer.answer("FILL " + seed + " " + size);
			}
		}

		void clear(GpuCheck check) {
			if (this.local) {
				check.cuda.memset(this.address, 0, BULK);
			}
			else {
				this.peer.answer("CLEAR");
			}
		}

		long verify(long seed) {
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

	/**
	 * The check's own minimal shim over {@code libcudart} through FFM, to be replaced by
	 * nixl-core's CUDA binding at merge. It finds {@code libcudart.so*} in
	 * {@code -Dgpucheck.cudart} (a file, or folders separated by {@code :}),
	 * {@code $CUDA_HOME}, {@code /usr/local/cuda}, and the {@code nvidia/<package>/lib}
	 * folders of the Python environments named in {@code -Dgpucheck.sitepackages} (the
	 * {@code nvidia-cuda-runtime} wheel), then through the loader's path.
	 */
	static final class Cuda {

		static final int HOST_TO_DEVICE = 1;

		static final int DEVICE_TO_HOST = 2;

		static final int DEVICE_TO_DEVICE = 3;

		private static final Linker LINKER = Linker.nativeLinker();

		final Path path;

		private final MethodHandle getDeviceCount;

		private final MethodHandle setDevice;

		private final MethodHandle malloc;

		private final MethodHandle free;

		private final MethodHandle memcpy;

		private final MethodHandle memset;

		private final MethodHandle synchronize;

		private final MethodHandle errorString;

		private final MethodHandle driverVersion;

		private final MethodHandle runtimeVersion;

		private final MethodHandle memGetInfo;

		private final MethodHandle deviceGetAttribute;

		private Cuda(Path path, SymbolLookup lookup) {
			this.path = path;
			this.getDeviceCount = handle(lookup, "cudaGetDeviceCount", ValueLayout.ADDRESS);
			this.setDevice = handle(lookup, "cudaSetDevice", ValueLayout.JAVA_INT);
			this.malloc = handle(lookup, "cudaMalloc", ValueLayout.ADDRESS, ValueLayout.JAVA_LONG);
			this.free = handle(lookup, "cudaFree", ValueLayout.JAVA_LONG);
			this.memcpy = handle(lookup, "cudaMemcpy", ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
					ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT);
			this.memset = handle(lookup, "cudaMemset", ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT,
					ValueLayout.JAVA_LONG);
			this.synchronize = handle(lookup, "cudaDeviceSynchronize");
			this.errorString = LINKER.downcallHandle(lookup.findOrThrow("cudaGetErrorString"),
					FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
			this.driverVersion = handle(lookup, "cudaDriverGetVersion", ValueLayout.ADDRESS);
			this.runtimeVersion = handle(lookup, "cudaRuntimeGetVersion", ValueLayout.ADDRESS);
			this.memGetInfo = handle(lookup, "cudaMemGetInfo", ValueLayout.ADDRESS, ValueLayout.ADDRESS);
			this.deviceGetAttribute = handle(lookup, "cudaDeviceGetAttribute", ValueLayout.ADDRESS,
					ValueLayout.JAVA_INT, ValueLayout.JAVA_INT);
		}

		private static MethodHandle handle(SymbolLookup lookup, String name, ValueLayout... arguments) {
			return LINKER.downcallHandle(lookup.findOrThrow(name),
					FunctionDescriptor.of(ValueLayout.JAVA_INT, arguments));
		}

		static Cuda load() throws Unavailable {
			List<Path> candidates = candidates();
			List<String> tried = new ArrayList<>();
			for (Path candidate : candidates) {
				tried.add(candidate.toString());
				try {
					return new Cuda(candidate, SymbolLookup.libraryLookup(candidate, Arena.global()));
				}
				catch (IllegalArgumentException | NoSuchElementException ex) {
					tried.set(tried.size() - 1, candidate + " (" + ex.getMessage() + ")");
				}
			}
			for (String name : List.of("libcudart.so", "libcudart.so.13", "libcudart.so.12")) {
				try {
					return new Cuda(Path.of(name), SymbolLookup.libraryLookup(name, Arena.global()));
				}
				catch (IllegalArgumentException | NoSuchElementException ex) {
					tried.add(name + " on the loader's path");
				}
			}
			throw new Unavailable("libcudart not found; tried " + String.join(", ", tried));
		}

		private static List<Path> candidates() {
			List<Path> folders = new ArrayList<>();
			String configured = System.getProperty("gpucheck.cudart", "");
			for (String entry : configured.split(":")) {
				if (!entry.isBlank()) {
					folders.add(Path.of(entry));
				}
			}
			String home = System.getenv("CUDA_HOME");
			if (home != null) {
				folders.add(Path.of(home, "lib64"));
				folders.add(Path.of(home, "lib"));
			}
			folders.add(Path.of("/usr/local/cuda/lib64"));
			for (String site : System.getProperty("gpucheck.sitepackages", "").split(":")) {
				if (site.isBlank()) {
					continue;
				}
				try (DirectoryStream<Path> packages = Files.newDirectoryStream(Path.of(site, "nvidia"))) {
					for (Path nvidia : packages) {
						folders.add(nvidia.resolve("lib"));
					}
				}
				catch (IOException ex) {
					// not a Python environment with NVIDIA's wheels
				}
			}
			List<Path> files = new ArrayList<>();
			for (Path folder : folders) {
				if (Files.isRegularFile(folder)) {
					files.add(folder);
					continue;
				}
				try (DirectoryStream<Path> entries = Files.newDirectoryStream(folder, "libcudart.so*")) {
					List<Path> found = new ArrayList<>();
					entries.forEach(found::add);
					found.sort(null);
					files.addAll(found.reversed());
				}
				catch (IOException ex) {
					// absent
				}
			}
			return files;
		}

		int deviceCount() throws Error {
			try (Arena local = Arena.ofConfined()) {
				MemorySegment count = local.allocate(ValueLayout.JAVA_INT);
				check((int) this.getDeviceCount.invokeExact(count), "cudaGetDeviceCount");
				return count.get(ValueLayout.JAVA_INT, 0);
			}
			catch (Error ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
		}

		void setDevice(int device) {
			call("cudaSetDevice", () -> (int) this.setDevice.invokeExact(device));
		}

		long malloc(long size) {
			try (Arena local = Arena.ofConfined()) {
				MemorySegment out = local.allocate(ValueLayout.ADDRESS);
				call("cudaMalloc", () -> (int) this.malloc.invokeExact(out, size));
				return out.get(ValueLayout.ADDRESS, 0).address();
			}
		}

		void free(long address) {
			call("cudaFree", () -> (int) this.free.invokeExact(address));
		}

		void copy(long target, long source, long size, int kind) {
			call("cudaMemcpy", () -> (int) this.memcpy.invokeExact(target, source, size, kind));
		}

		void copyToDevice(long target, MemorySegment source) {
			copy(target, source.address(), source.byteSize(), HOST_TO_DEVICE);
		}

		void copyToHost(MemorySegment target, long source) {
			copy(target.address(), source, target.byteSize(), DEVICE_TO_HOST);
		}

		void memset(long address, int value, long size) {
			call("cudaMemset", () -> (int) this.memset.invokeExact(address, value, size));
			synchronize();
		}

		void synchronize() {
			call("cudaDeviceSynchronize", () -> (int) this.synchronize.invokeExact());
		}

		int driverVersion() {
			return intOut("cudaDriverGetVersion", this.driverVersion);
		}

		int runtimeVersion() {
			return intOut("cudaRuntimeGetVersion", this.runtimeVersion);
		}

		long totalMemory() {
			try (Arena local = Arena.ofConfined()) {
				MemorySegment free = local.allocate(ValueLayout.JAVA_LONG);
				MemorySegment total = local.allocate(ValueLayout.JAVA_LONG);
				call("cudaMemGetInfo", () -> (int) this.memGetInfo.invokeExact(free, total));
				return total.get(ValueLayout.JAVA_LONG, 0);
			}
		}

		/**
		 * The device's compute capability as {@code sm_XY} (the name needs
		 * {@code cudaDeviceProp}, whose layout changes between CUDA versions).
		 */
		String deviceName(int device) {
			try (Arena local = Arena.ofConfined()) {
				MemorySegment value = local.allocate(ValueLayout.JAVA_INT);
				// cudaDevAttrComputeCapabilityMajor 75, Minor 76
				call("cudaDeviceGetAttribute", () -> (int) this.deviceGetAttribute.invokeExact(value, 75, device));
				int major = value.get(ValueLayout.JAVA_INT, 0);
				call("cudaDeviceGetAttribute", () -> (int) this.deviceGetAttribute.invokeExact(value, 76, device));
				return "sm_" + major + value.get(ValueLayout.JAVA_INT, 0);
			}
		}

		private int intOut(String name, MethodHandle handle) {
			try (Arena local = Arena.ofConfined()) {
				MemorySegment value = local.allocate(ValueLayout.JAVA_INT);
				call(name, () -> (int) handle.invokeExact(value));
				return value.get(ValueLayout.JAVA_INT, 0);
			}
		}

		private void call(String name, NativeCall call) {
			int code;
			try {
				code = call.invoke();
			}
			catch (Throwable ex) {
				throw new IllegalStateException(name + " failed: " + ex, ex);
			}
			try {
				check(code, name);
			}
			catch (Error ex) {
				throw new IllegalStateException(ex.getMessage(), ex);
			}
		}

		private void check(int code, String name) throws Error {
			if (code != 0) {
				String text;
				try {
					text = ((MemorySegment) this.errorString.invokeExact(code)).reinterpret(256).getString(0);
				}
				catch (Throwable ex) {
					text = "?";
				}
				throw new Error(name + " returned " + code + " (" + text + ")", code);
			}
		}

		private interface NativeCall {

			int invoke() throws Throwable;

		}

		/** No {@code libcudart} could be loaded. */
		static final class Unavailable extends Exception {

			Unavailable(String message) {
				super(message);
			}

		}

		/** A CUDA runtime call returned an error code. */
		static final class Error extends Exception {

			final int code;

			Error(String message, int code) {
				super(message);
				this.code = code;
			}

		}

	}

}
