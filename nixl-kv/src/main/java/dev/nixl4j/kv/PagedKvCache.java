package dev.nixl4j.kv;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.zip.CRC32C;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.GpuMemory;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.PreparedList;
import dev.nixl4j.Registration;
import dev.nixl4j.ShareableMemory;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

/**
 * A paged KV cache in host memory: one off-heap region per layer and K/V, allocated from
 * an arena the cache owns (as {@link ShareableMemory} when the agent runs the embedded
 * engine with its same-host path on) and registered with the agent once; a
 * {@link BlockAllocator} over its blocks; descriptor lists for any blocks
 * ({@code index = region * numBlocks + blockId}); and prepared lists, built once per
 * cache and per peer, from which transfers select blocks by index.
 *
 * <p>
 * Thread-safe. Closing releases the prepared lists, deregisters the memory and frees it;
 * a transfer still in flight over the memory makes the deregistration fail with
 * {@link NixlStatus#BUSY} (the memory then stays allocated until the agent closes).
 */
public final class PagedKvCache implements AutoCloseable {

	private static final long ALIGNMENT = 4096;

	/** The embedded backend's parameter that turns its same-host path on. */
	private static final String SAME_HOST_PARAMETER = "same_host";

	private static final SecureRandom INCARNATIONS = new SecureRandom();

	/**
	 * The average run of consecutive blocks from which a transfer merges each run into
	 * one descriptor per region rather than indexing the prepared lists.
	 */
	static final int MIN_AVERAGE_RUN = 2;

	private final NixlAgent agent;

	private final KvCacheLayout layout;

	private final Arena arena;

	/** The regions in host memory; empty for a cache in GPU memory. */
	private final MemorySegment[] regions;

	/** The regions in GPU memory; empty for a cache in host memory. */
	private final GpuMemory[] deviceRegions;

	private final long[] bases;

	private final Registration registration;

	private final BlockAllocator allocator;

	private final RemoteCacheHandle handle;

	private final Object lock = new Object();

	private @Nullable PreparedList preparedLocal;

	private final Map<RemoteKey, PreparedList> preparedRemote = new HashMap<>();

	private volatile boolean closed;

	private PagedKvCache(NixlAgent agent, KvCacheLayout layout, String modelFingerprint, Arena arena,
			MemorySegment[] regions, GpuMemory[] deviceRegions, Registration registration) {
		this.agent = agent;
		this.layout = layout;
		this.arena = arena;
		this.regions = regions;
		this.deviceRegions = deviceRegions;
		this.registration = registration;
		this.allocator = new BlockAllocator(layout.numBlocks());
		boolean onDevice = deviceRegions.length > 0;
		this.bases = new long[layout.regionCount()];
		List<Long> bases = new ArrayList<>(this.bases.length);
		for (int i = 0; i < this.bases.length; i++) {
			this.bases[i] = onDevice ? deviceRegions[i].address() : regions[i].address();
			bases.add(this.bases[i]);
		}
		this.handle = new RemoteCacheHandle(agent.name(), layout, bases, onDevice ? MemoryType.VRAM : MemoryType.DRAM,
				onDevice ? deviceRegions[0].device() : 0, newIncarnation(), modelFingerprint);
	}

	/** 128 random bits, so that no two allocations of a cache share an incarnation. */
	private static String newIncarnation() {
		byte[] bits = new byte[16];
		INCARNATIONS.nextBytes(bits);
		return HexFormat.of().formatHex(bits);
	}

	/**
	 * Allocates the regions of a layout in host memory (zeroed, page-aligned) and
	 * registers them with an agent, without a model fingerprint: shorthand for
	 * {@code builder(agent, layout).build()}.
	 * @param agent the agent that owns the cache
	 * @param layout the layout
	 * @return the cache
	 * @throws KvCacheTooLargeException when the cache cannot fit in the memory this
	 * process can have beside its heap (nothing is allocated then)
	 * @throws NixlException when the agent refuses the registration
	 * @throws OutOfMemoryError when the regions cannot be allocated
	 */
	public static PagedKvCache allocate(NixlAgent agent, KvCacheLayout layout) {
		return builder(agent, layout).build();
	}

	/**
	 * Starts a cache of a layout, registered with an agent: in host memory unless a
	 * {@linkplain Builder#device CUDA device} is given.
	 * @param agent the agent that owns the cache
	 * @param layout the layout
	 * @return the builder
	 */
	public static Builder builder(NixlAgent agent, KvCacheLayout layout) {
		return new Builder(agent, layout);
	}

	private static PagedKvCache allocateHost(NixlAgent agent, KvCacheLayout layout, String modelFingerprint) {
		KvCacheMemory.check(agent.name(), layout);
		Arena arena = Arena.ofShared();
		try {
			MemorySegment[] regions = new MemorySegment[layout.regionCount()];
			boolean shareable = sameHost(agent);
			for (int i = 0; i < regions.length; i++) {
				regions[i] = shareable ? ShareableMemory.allocate(arena, layout.regionLength())
						: arena.allocate(layout.regionLength(), ALIGNMENT);
			}
			return new PagedKvCache(agent, layout, modelFingerprint, arena, regions, new GpuMemory[0],
					agent.register(regions));
		}
		catch (RuntimeException | Error ex) {
			arena.close();
			throw ex;
		}
	}

	private static PagedKvCache allocateDevice(NixlAgent agent, KvCacheLayout layout, String modelFingerprint,
			int device) {
		List<GpuMemory> allocated = new ArrayList<>(layout.regionCount());
		try {
			for (int i = 0; i < layout.regionCount(); i++) {
				allocated.add(Cuda.allocate(device, layout.regionLength()));
			}
			List<MemoryDescriptor> descriptors = allocated.stream().map(GpuMemory::descriptor).toList();
			Registration registration = agent.register(new DescriptorList(MemoryType.VRAM, descriptors));
			return new PagedKvCache(agent, layout, modelFingerprint, Arena.ofShared(), new MemorySegment[0],
					allocated.toArray(GpuMemory[]::new), registration);
		}
		catch (RuntimeException | Error ex) {
			allocated.forEach(GpuMemory::close);
			throw ex;
		}
	}

	/**
	 * Whether an agent runs the embedded engine with its same-host path on (in its
	 * {@link dev.nixl4j.EmbeddedOptions} or as the {@code same_host} parameter of its
	 * backend): its cache then lives in {@link ShareableMemory}, which same-host peers
	 * map instead of reading it over TCP.
	 */
	private static boolean sameHost(NixlAgent agent) {
		if (agent.engine() != Engine.EMBEDDED) {
			return false;
		}
		AgentConfig config = agent.config();
		return config.embedded().sameHost() || config.backends()
			.stream()
			.anyMatch((backend) -> "true".equals(backend.parameters().get(SAME_HOST_PARAMETER)));
	}

	/**
	 * Returns the agent the memory is registered with.
	 * @return the agent
	 */
	public NixlAgent agent() {
		return this.agent;
	}

	/**
	 * Returns the layout.
	 * @return the layout
	 */
	public KvCacheLayout layout() {
		return this.layout;
	}

	/**
	 * Returns the allocator of the cache's blocks.
	 * @return the allocator
	 */
	public BlockAllocator allocator() {
		return this.allocator;
	}

	/**
	 * Returns what a peer needs to address this cache.
	 * @return the handle
	 */
	public RemoteCacheHandle handle() {
		return this.handle;
	}

	/**
	 * Returns a region.
	 * @param region the region index
	 * @return its memory
	 */
	public MemorySegment region(int region) {
		requireOpen("kv_region");
		if (this.deviceRegions.length > 0) {
			throw new NixlException(NixlStatus.NOT_SUPPORTED, "kv_region", this.agent.name(), null,
					"the cache is in GPU memory (cuda:" + this.handle.deviceId()
							+ "), which Java cannot read: use deviceRegion(int)");
		}
		return this.regions[Objects.checkIndex(region, this.regions.length)];
	}

	/**
	 * Returns a region of a cache in GPU memory.
	 * @param region the region index
	 * @return its device memory; the cache frees it when it closes
	 * @throws NixlException {@link NixlStatus#NOT_SUPPORTED} for a cache in host memory
	 * (use {@link #region(int)})
	 */
	public GpuMemory deviceRegion(int region) {
		requireOpen("kv_region");
		if (this.deviceRegions.length == 0) {
			throw new NixlException(NixlStatus.NOT_SUPPORTED, "kv_region", this.agent.name(), null,
					"the cache is in host memory: use region(int)");
		}
		return this.deviceRegions[Objects.checkIndex(region, this.deviceRegions.length)];
	}

	/**
	 * Returns the memory the cache lives in.
	 * @return {@link MemoryType#DRAM} or {@link MemoryType#VRAM}
	 */
	public MemoryType memoryType() {
		return this.handle.memoryType();
	}

	/**
	 * Returns the memory of one block of one region.
	 * @param region the region index
	 * @param blockId the block
	 * @return a slice of {@link KvCacheLayout#blockLength()} bytes
	 */
	public MemorySegment block(int region, int blockId) {
		Objects.checkIndex(blockId, this.layout.numBlocks());
		return region(region).asSlice(blockId * this.layout.blockLength(), this.layout.blockLength());
	}

	/**
	 * Returns the memory of one block of one layer's part.
	 * @param layer the layer
	 * @param part K, V or (joint layout) KV
	 * @param blockId the block
	 * @return a slice of {@link KvCacheLayout#blockLength()} bytes
	 */
	public MemorySegment block(int layer, KvPart part, int blockId) {
		return block(this.layout.regionIndex(layer, part), blockId);
	}

	/**
	 * Returns the CRC32C of one block, or of one slice of its heads, over every region in
	 * region order: what {@link KvIntegrity#CRC32C} compares.
	 * @param blockId the block
	 * @param ranks the number of slices the block's heads are split into (1 for the whole
	 * block)
	 * @param slice the slice
	 * @return the checksum
	 */
	int crc32c(int blockId, int ranks, int slice) {
		long sliceLength = this.layout.blockLength() / ranks;
		CRC32C crc = new CRC32C();
		if (this.deviceRegions.length > 0) {
			requireOpen("kv_crc32c");
			try (Arena copy = Arena.ofConfined()) {
				MemorySegment host = copy.allocate(sliceLength);
				for (GpuMemory region : this.deviceRegions) {
					region.copyTo(blockId * this.layout.blockLength() + slice * sliceLength, host);
					crc.update(host.asByteBuffer());
				}
			}
			return (int) crc.getValue();
		}
		for (int r = 0; r < this.regions.length; r++) {
			crc.update(block(r, blockId).asSlice(slice * sliceLength, sliceLength).asByteBuffer());
		}
		return (int) crc.getValue();
	}

	/**
	 * Describes blocks in every region, region by region: entry {@code r * n + i} is
	 * block {@code blockIds[i]} of region {@code r}, for {@code n} block ids.
	 * @param blockIds the blocks
	 * @return the descriptors
	 */
	public DescriptorList descriptors(int... blockIds) {
		requireBlocks("kv_descriptors", blockIds, this.layout.numBlocks(), "this cache");
		List<MemoryDescriptor> descriptors = new ArrayList<>(blockIds.length * this.bases.length);
		for (long base : this.bases) {
			for (int id : blockIds) {
				descriptors.add(new MemoryDescriptor(base + id * this.layout.blockLength(), this.layout.blockLength(),
						this.handle.deviceId()));
			}
		}
		return new DescriptorList(this.handle.memoryType(), descriptors);
	}

	/**
	 * Returns the indices of blocks in {@link #preparedLocal()}, region by region as
	 * {@link #descriptors(int...)} orders them.
	 * @param blockIds the blocks
	 * @return the indices
	 */
	public int[] descriptorIndices(int... blockIds) {
		requireBlocks("kv_descriptors", blockIds, this.layout.numBlocks(), "this cache");
		return indices(blockIds, this.layout.regionCount(), this.layout.numBlocks());
	}

	/**
	 * Returns the prepared list of every block of every region (index
	 * {@code region * numBlocks + blockId}), prepared on first use and kept until the
	 * cache closes.
	 * @return the prepared list
	 */
	public PreparedList preparedLocal() {
		synchronized (this.lock) {
			requireOpen("prep_xfer_dlist");
			if (this.preparedLocal == null) {
				this.preparedLocal = this.agent.prepareLocal(allBlocks(this.handle, 1, 0));
			}
			return this.preparedLocal;
		}
	}

	/**
	 * Returns the prepared list of every block of every region of a peer's cache, or of
	 * one rank's slice of heads of every block when {@code ranks > 1}; prepared on first
	 * use and kept until this cache closes or a different handle of the same peer
	 * arrives. The peer's metadata must be loaded.
	 */
	PreparedList preparedRemote(RemoteCacheHandle remote, int ranks, int rank) {
		RemoteKey key = new RemoteKey(remote, ranks, rank);
		synchronized (this.lock) {
			requireOpen("prep_xfer_dlist");
			PreparedList prepared = this.preparedRemote.get(key);
			if (prepared != null) {
				return prepared;
			}
			// A different handle of the same agent: the peer restarted, its old regions
			// are gone.
			for (Iterator<Map.Entry<RemoteKey, PreparedList>> it = this.preparedRemote.entrySet().iterator(); it
				.hasNext();) {
				Map.Entry<RemoteKey, PreparedList> entry = it.next();
				if (entry.getKey().handle.agentName().equals(remote.agentName())
						&& !entry.getKey().handle.equals(remote)) {
					entry.getValue().close();
					it.remove();
				}
			}
			prepared = this.agent.prepareRemote(remote.agentName(), allBlocks(remote, ranks, rank));
			this.preparedRemote.put(key, prepared);
			return prepared;
		}
	}

	/**
	 * Closes the prepared lists of a peer's cache, so that the next transfer prepares
	 * them again. Call it when the peer's metadata was invalidated and is loaded again
	 * under the same name (to connect to it again after its connection failed): NIXL
	 * refuses lists prepared before the invalidation.
	 * @param agentName the peer
	 */
	public void forgetRemote(String agentName) {
		synchronized (this.lock) {
			for (Iterator<Map.Entry<RemoteKey, PreparedList>> it = this.preparedRemote.entrySet().iterator(); it
				.hasNext();) {
				Map.Entry<RemoteKey, PreparedList> entry = it.next();
				if (entry.getKey().handle.agentName().equals(agentName)) {
					entry.getValue().close();
					it.remove();
				}
			}
		}
	}

	/**
	 * Creates a transfer of blocks between this cache and a peer's: block
	 * {@code localIds[i]} of every region pairs with block {@code remoteIds[i]} (or one
	 * rank's slice of its heads) of the same region of the peer. When the pairs form runs
	 * of consecutive ids on both sides that average at least {@link #MIN_AVERAGE_RUN}
	 * blocks, each run becomes one descriptor per region in plain descriptor lists, which
	 * the engine checks against the registered memory of both sides; otherwise the
	 * prepared lists are indexed, one descriptor per block and region, which costs
	 * nothing to build. The peer's metadata must be loaded; ids are checked by the
	 * caller.
	 */
	Transfer createBlockTransfer(XferOp op, int[] localIds, RemoteCacheHandle remote, int ranks, int rank,
			int[] remoteIds, byte[] notification) {
		BlockRuns runs = (ranks == 1) ? BlockRuns.of(localIds, remoteIds) : null;
		if (runs != null && runs.count() * MIN_AVERAGE_RUN <= localIds.length) {
			requireOpen("create_xfer_req");
			return this.agent.createTransfer(op, runs.descriptors(this.handle, true), runs.descriptors(remote, false),
					remote.agentName(), notification);
		}
		return this.agent.createTransfer(op, preparedLocal(), descriptorIndices(localIds),
				preparedRemote(remote, ranks, rank),
				indices(remoteIds, remote.layout().regionCount(), remote.layout().numBlocks()), notification);
	}

	/**
	 * Runs of block pairs whose local and remote ids both go up by one from one pair to
	 * the next: run {@code k} covers {@code lengths[k]} blocks from
	 * {@code localStarts[k]} and {@code remoteStarts[k]}.
	 */
	record BlockRuns(int[] localStarts, int[] remoteStarts, int[] lengths) {

		static BlockRuns of(int[] localIds, int[] remoteIds) {
			int n = localIds.length;
			int[] localStarts = new int[n];
			int[] remoteStarts = new int[n];
			int[] lengths = new int[n];
			int count = 0;
			for (int i = 0; i < n; i++) {
				if (count > 0 && localIds[i] == localIds[i - 1] + 1 && remoteIds[i] == remoteIds[i - 1] + 1) {
					lengths[count - 1]++;
				}
				else {
					localStarts[count] = localIds[i];
					remoteStarts[count] = remoteIds[i];
					lengths[count] = 1;
					count++;
				}
			}
			return new BlockRuns(Arrays.copyOf(localStarts, count), Arrays.copyOf(remoteStarts, count),
					Arrays.copyOf(lengths, count));
		}

		int count() {
			return this.lengths.length;
		}

		/**
		 * One descriptor per region and run, region by region, in the order of the
		 * indexed path.
		 */
		DescriptorList descriptors(RemoteCacheHandle cache, boolean local) {
			int[] starts = local ? this.localStarts : this.remoteStarts;
			long blockLength = cache.layout().blockLength();
			List<MemoryDescriptor> descriptors = new ArrayList<>(cache.regionBases().size() * count());
			for (long base : cache.regionBases()) {
				for (int k = 0; k < starts.length; k++) {
					descriptors.add(new MemoryDescriptor(base + starts[k] * blockLength, this.lengths[k] * blockLength,
							cache.deviceId()));
				}
			}
			return new DescriptorList(cache.memoryType(), descriptors);
		}

	}

	/**
	 * Descriptors of every block of every region, or of one rank's slice of heads of
	 * each.
	 */
	private static DescriptorList allBlocks(RemoteCacheHandle cache, int ranks, int rank) {
		KvCacheLayout layout = cache.layout();
		long sliceLength = layout.blockLength() / ranks;
		long offset = rank * sliceLength;
		List<MemoryDescriptor> descriptors = new ArrayList<>(layout.descriptorCount());
		for (long base : cache.regionBases()) {
			for (int b = 0; b < layout.numBlocks(); b++) {
				descriptors
					.add(new MemoryDescriptor(base + b * layout.blockLength() + offset, sliceLength, cache.deviceId()));
			}
		}
		return new DescriptorList(cache.memoryType(), descriptors);
	}

	static int[] indices(int[] blockIds, int regionCount, int numBlocks) {
		int[] indices = new int[regionCount * blockIds.length];
		int i = 0;
		for (int r = 0; r < regionCount; r++) {
			for (int id : blockIds) {
				indices[i++] = r * numBlocks + id;
			}
		}
		return indices;
	}

	/**
	 * Checks block ids against a cache's block count.
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} naming the first bad
	 * id
	 */
	static void requireBlocks(String operation, int[] blockIds, int numBlocks, String whose) {
		if (blockIds.length == 0) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, null, "no block ids given");
		}
		for (int id : blockIds) {
			if (id < 0 || id >= numBlocks) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, null,
						"block id " + id + " is out of range: " + whose + " has blocks 0 to " + (numBlocks - 1));
			}
		}
	}

	/**
	 * Checks that block ids name distinct blocks (a destination block written twice in
	 * one transfer would hold whichever copy landed last).
	 */
	static void requireDistinct(String operation, int[] blockIds, String whose) {
		int[] sorted = blockIds.clone();
		Arrays.sort(sorted);
		for (int i = 1; i < sorted.length; i++) {
			if (sorted[i] == sorted[i - 1]) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, null,
						"block id " + sorted[i] + " appears twice among " + whose);
			}
		}
	}

	private void requireOpen(String operation) {
		if (this.closed) {
			throw new NixlException(NixlStatus.CLOSED, operation, this.agent.name(), null, "the KV cache is closed");
		}
	}

	/**
	 * Whether the cache is open.
	 * @return {@code false} once closed
	 */
	public boolean isOpen() {
		synchronized (this.lock) {
			return !this.closed;
		}
	}

	/**
	 * Releases the prepared lists, deregisters the regions and frees them. Closing twice
	 * is harmless.
	 * @throws NixlException {@link NixlStatus#BUSY} when a transfer over the regions is
	 * in flight; the cache stays open then
	 */
	@Override
	public void close() {
		synchronized (this.lock) {
			if (this.closed) {
				return;
			}
			if (this.registration.isOpen() && this.registration.inFlightTransfers() > 0) {
				throw new NixlException(NixlStatus.BUSY, "deregister_mem", this.agent.name(), null,
						"a transfer over the KV cache is in flight");
			}
			this.closed = true;
			this.preparedRemote.values().forEach(PreparedList::close);
			this.preparedRemote.clear();
			if (this.preparedLocal != null) {
				this.preparedLocal.close();
				this.preparedLocal = null;
			}
			if (this.agent.isOpen()) {
				this.registration.close();
			}
			this.arena.close();
			for (GpuMemory region : this.deviceRegions) {
				region.close();
			}
		}
	}

	private record RemoteKey(RemoteCacheHandle handle, int ranks, int rank) {
	}

	/**
	 * Builds a {@link PagedKvCache}: host memory and no model fingerprint unless told
	 * otherwise.
	 */
	public static final class Builder {

		private final NixlAgent agent;

		private final KvCacheLayout layout;

		private String modelFingerprint = "";

		private int device = -1;

		private Builder(NixlAgent agent, KvCacheLayout layout) {
			this.agent = Objects.requireNonNull(agent, "agent");
			this.layout = Objects.requireNonNull(layout, "layout");
		}

		/**
		 * Sets what identifies the model whose KV the cache holds (its name, revision and
		 * anything else that changes the KV values): the cache's {@link #handle() handle}
		 * carries it, and consumers compare it with their own before they read a block
		 * (default {@code ""}).
		 * @param modelFingerprint at most {@link RemoteCacheHandle#MAX_LABEL} characters,
		 * no control characters
		 * @return this builder
		 */
		public Builder modelFingerprint(String modelFingerprint) {
			this.modelFingerprint = RemoteCacheHandle
				.requireModelFingerprint(Objects.requireNonNull(modelFingerprint, "modelFingerprint"));
			return this;
		}

		/**
		 * Puts the regions in the memory of a CUDA device, one {@code cudaMalloc} per
		 * region as vLLM allocates one tensor per layer (and K/V), registered as
		 * {@link MemoryType#VRAM} with the device ordinal as device id. The regions are
		 * not zeroed, and Java cannot read them: {@link #region(int)} and
		 * {@link #block(int, int)} refuse, and {@link #deviceRegion(int)} gives each
		 * region to copy to and from the host. The agent's engine must move GPU memory
		 * (the native engine with a backend built with CUDA support); the embedded engine
		 * refuses the registration with {@link NixlStatus#NOT_SUPPORTED}.
		 * @param device the CUDA device ordinal
		 * @return this builder
		 */
		public Builder device(int device) {
			if (device < 0) {
				throw new IllegalArgumentException("device must not be negative, was " + device);
			}
			this.device = device;
			return this;
		}

		/**
		 * Allocates the regions and registers them with the agent. A cache in host memory
		 * is allocated zeroed and page-aligned, and only after checking that it fits in
		 * the memory this process can have (the smallest of its cgroup limits and the
		 * machine's physical memory) beside the largest heap the JVM may grow.
		 * @return the cache
		 * @throws KvCacheTooLargeException when a cache in host memory cannot fit
		 * (nothing is allocated then)
		 * @throws dev.nixl4j.cuda.CudaException when CUDA or the device is missing, or
		 * the device memory cannot be allocated
		 * @throws NixlException when the agent refuses the registration
		 * @throws OutOfMemoryError when the host regions cannot be allocated
		 */
		public PagedKvCache build() {
			return (this.device < 0) ? allocateHost(this.agent, this.layout, this.modelFingerprint)
					: allocateDevice(this.agent, this.layout, this.modelFingerprint, this.device);
		}

	}

}
