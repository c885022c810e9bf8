package dev.nixl4j.kv;

import java.util.Objects;

/**
 * The shape of a paged KV cache: {@code numLayers} layers, each with a K and a V region
 * (or one joint KV region), each region holding {@code numBlocks} blocks of
 * {@code blockSize} tokens of {@code numKvHeads} heads of {@code headDim} elements of
 * {@code dtypeSize} bytes, in {@link KvBlockOrder#HND} or {@link KvBlockOrder#NHD} order.
 *
 * <p>
 * Regions are numbered layer by layer, K before V
 * ({@code region = layer * 2 + (V ? 1 : 0)}), or one per layer for a joint layout; block
 * {@code b} of a region starts at {@code b * blockLength()}. In a joint layout a block
 * holds the block's K part, then its V part. A descriptor list over all blocks of all
 * regions puts block {@code b} of region {@code r} at index {@code r * numBlocks + b}, as
 * vLLM does.
 *
 * <p>
 * Every size is checked when the layout is made: values must be positive and below the
 * caps below, the descriptor count must fit an {@code int}, and no byte size may overflow
 * a {@code long}.
 *
 * @param numLayers attention layers
 * @param splitKv {@code true} for separate K and V regions, {@code false} for one joint
 * KV tensor per layer
 * @param numBlocks blocks per region
 * @param blockSize tokens per block
 * @param numKvHeads KV heads held by this cache (after tensor-parallel sharding)
 * @param headDim elements per head
 * @param dtypeSize bytes per element: 1, 2, 4 or 8
 * @param order element order inside a block
 */
public record KvCacheLayout(int numLayers, boolean splitKv, int numBlocks, int blockSize, int numKvHeads, int headDim,
		int dtypeSize, KvBlockOrder order) {

	/** The most layers a layout may have. */
	public static final int MAX_LAYERS = 1024;

	/** The most blocks a region may have. */
	public static final int MAX_BLOCKS = 1 << 22;

	/** The most tokens a block may have. */
	public static final int MAX_BLOCK_SIZE = 1 << 16;

	/** The most KV heads a layout may have. */
	public static final int MAX_KV_HEADS = 1 << 12;

	/** The largest head dimension. */
	public static final int MAX_HEAD_DIM = 1 << 14;

	/** The most descriptors (regions x blocks) a layout may describe. */
	public static final int MAX_DESCRIPTORS = 1 << 24;

	private static final String FINGERPRINT_VERSION = "kv-layout/1";

	/**
	 * Checks the layout.
	 * @param numLayers layers
	 * @param splitKv separate K and V regions
	 * @param numBlocks blocks per region
	 * @param blockSize tokens per block
	 * @param numKvHeads KV heads
	 * @param headDim elements per head
	 * @param dtypeSize bytes per element
	 * @param order element order
	 * @throws IllegalArgumentException naming the value that cannot be
	 */
	public KvCacheLayout {
		Objects.requireNonNull(order, "order");
		requireRange("numLayers", numLayers, MAX_LAYERS);
		requireRange("numBlocks", numBlocks, MAX_BLOCKS);
		requireRange("blockSize", blockSize, MAX_BLOCK_SIZE);
		requireRange("numKvHeads", numKvHeads, MAX_KV_HEADS);
		requireRange("headDim", headDim, MAX_HEAD_DIM);
		if (dtypeSize != 1 && dtypeSize != 2 && dtypeSize != 4 && dtypeSize != 8) {
			throw new IllegalArgumentException("dtypeSize must be 1, 2, 4 or 8 bytes, was " + dtypeSize);
		}
		long descriptors = (long) numLayers * (splitKv ? 2 : 1) * numBlocks;
		if (descriptors > MAX_DESCRIPTORS) {
			throw new IllegalArgumentException(
					"the layout has " + descriptors + " descriptors (regions x blocks), more than " + MAX_DESCRIPTORS);
		}
		long part = multiply("a block's K or V bytes (blockSize x numKvHeads x headDim x dtypeSize)", blockSize,
				(long) numKvHeads * headDim * dtypeSize);
		long block = multiply("a block's bytes", part, splitKv ? 1 : 2);
		long region = multiply("a region's bytes (numBlocks x block bytes)", block, numBlocks);
		multiply("the cache's bytes (regions x region bytes)", region, (long) numLayers * (splitKv ? 2 : 1));
	}

	private static void requireRange(String name, int value, int max) {
		if (value <= 0) {
			throw new IllegalArgumentException(name + " must be positive, was " + value);
		}
		if (value > max) {
			throw new IllegalArgumentException(name + " must be at most " + max + ", was " + value);
		}
	}

	private static long multiply(String what, long a, long b) {
		try {
			return Math.multiplyExact(a, b);
		}
		catch (ArithmeticException ex) {
			throw new IllegalArgumentException(what + " overflow a long (" + a + " x " + b + ")");
		}
	}

	/**
	 * Starts a layout with separate K and V regions, 2-byte elements and HND order.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns the number of regions per layer.
	 * @return 2 with separate K and V, else 1
	 */
	public int regionsPerLayer() {
		return this.splitKv ? 2 : 1;
	}

	/**
	 * Returns the number of regions.
	 * @return layers x regions per layer
	 */
	public int regionCount() {
		return this.numLayers * regionsPerLayer();
	}

	/**
	 * Returns the number of descriptors that cover every block of every region.
	 * @return regions x blocks
	 */
	public int descriptorCount() {
		return regionCount() * this.numBlocks;
	}

	/**
	 * Returns the bytes of one block's K (or V) in one layer.
	 * @return blockSize x numKvHeads x headDim x dtypeSize
	 */
	public long partLength() {
		return (long) this.blockSize * this.numKvHeads * this.headDim * this.dtypeSize;
	}

	/**
	 * Returns the bytes of one block in one region.
	 * @return the part length, twice that for a joint layout
	 */
	public long blockLength() {
		return partLength() * (this.splitKv ? 1 : 2);
	}

	/**
	 * Returns the bytes of one region.
	 * @return blocks x block length
	 */
	public long regionLength() {
		return blockLength() * this.numBlocks;
	}

	/**
	 * Returns the bytes of the whole cache.
	 * @return regions x region length
	 */
	public long totalBytes() {
		return regionLength() * regionCount();
	}

	/**
	 * Returns the region that holds one layer's part.
	 * @param layer the layer
	 * @param part {@link KvPart#K} or {@link KvPart#V} with separate regions,
	 * {@link KvPart#KV} for a joint layout
	 * @return the region index
	 * @throws IndexOutOfBoundsException when the layer is out of range
	 * @throws IllegalArgumentException when the part does not exist in this layout
	 */
	public int regionIndex(int layer, KvPart part) {
		Objects.checkIndex(layer, this.numLayers);
		if (this.splitKv == (part == KvPart.KV)) {
			throw new IllegalArgumentException("part " + part + " does not exist in a layout with "
					+ (this.splitKv ? "separate K and V regions" : "joint KV regions"));
		}
		return layer * regionsPerLayer() + ((part == KvPart.V) ? 1 : 0);
	}

	/**
	 * Returns the index of a block of a region in a descriptor list over every block of
	 * every region.
	 * @param region the region
	 * @param blockId the block
	 * @return {@code region * numBlocks + blockId}
	 */
	public int descriptorIndex(int region, int blockId) {
		Objects.checkIndex(region, regionCount());
		Objects.checkIndex(blockId, this.numBlocks);
		return region * this.numBlocks + blockId;
	}

	/**
	 * Returns the offset of one element's first byte inside a block's K (or V) part.
	 * @param token the token within the block
	 * @param head the head
	 * @param element the element within the head
	 * @return the byte offset
	 */
	public long elementOffset(int token, int head, int element) {
		Objects.checkIndex(token, this.blockSize);
		Objects.checkIndex(head, this.numKvHeads);
		Objects.checkIndex(element, this.headDim);
		long index = (this.order == KvBlockOrder.HND) ? ((long) head * this.blockSize + token) * this.headDim + element
				: ((long) token * this.numKvHeads + head) * this.headDim + element;
		return index * this.dtypeSize;
	}

	/**
	 * Returns the layout of one of {@code ranks} consumer ranks that each hold
	 * {@code numKvHeads / ranks} heads of this layout (heterogeneous tensor parallelism).
	 * The block count is kept; a consumer may have a different one.
	 * @param ranks consumer ranks per rank of this layout; 1 returns this layout
	 * @return the layout of one rank's slice
	 * @throws IllegalArgumentException when the heads do not divide, the order is NHD (a
	 * slice of heads is not contiguous) or K and V are joint
	 */
	public KvCacheLayout headSlice(int ranks) {
		if (ranks == 1) {
			return this;
		}
		if (ranks <= 0) {
			throw new IllegalArgumentException("ranks must be positive, was " + ranks);
		}
		if (this.order != KvBlockOrder.HND) {
			throw new IllegalArgumentException(
					"a block in NHD order cannot be split by heads: each token holds every head,"
							+ " so a slice of heads is not contiguous; use HND for heterogeneous tensor parallelism");
		}
		if (!this.splitKv) {
			throw new IllegalArgumentException(
					"a joint KV block cannot be split by heads into one piece: use separate K and"
							+ " V regions for heterogeneous tensor parallelism");
		}
		if (this.numKvHeads % ranks != 0) {
			throw new IllegalArgumentException(
					this.numKvHeads + " KV heads cannot be split evenly over " + ranks + " ranks");
		}
		return new KvCacheLayout(this.numLayers, true, this.numBlocks, this.blockSize, this.numKvHeads / ranks,
				this.headDim, this.dtypeSize, this.order);
	}

	/**
	 * Returns this layout with another number of blocks.
	 * @param blocks blocks per region
	 * @return the layout
	 */
	public KvCacheLayout withNumBlocks(int blocks) {
		return new KvCacheLayout(this.numLayers, this.splitKv, blocks, this.blockSize, this.numKvHeads, this.headDim,
				this.dtypeSize, this.order);
	}

	/**
	 * Returns a stable text that names everything two caches must agree on to exchange
	 * blocks: layers, K/V split, tokens per block, heads, head size, element size and
	 * order. The block count is left out (each side sizes its own pool). Equal layouts
	 * give equal fingerprints in every JVM and version that writes the same prefix
	 * ({@code kv-layout/1}).
	 * @return the fingerprint
	 */
	public String fingerprint() {
		return FINGERPRINT_VERSION + ";layers=" + this.numLayers + ";kv=" + (this.splitKv ? "split" : "joint")
				+ ";block=" + this.blockSize + ";heads=" + this.numKvHeads + ";headDim=" + this.headDim + ";dtype="
				+ this.dtypeSize + ";order=" + this.order;
	}

	/**
	 * Builds a {@link KvCacheLayout}; defaults: separate K and V, 2-byte elements, HND.
	 */
	public static final class Builder {

		private int numLayers;

		private boolean splitKv = true;

		private int numBlocks;

		private int blockSize;

		private int numKvHeads;

		private int headDim;

		private int dtypeSize = 2;

		private KvBlockOrder order = KvBlockOrder.HND;

		private Builder() {
		}

		/**
		 * Sets the number of layers.
		 * @param layers layers
		 * @return this builder
		 */
		public Builder layers(int layers) {
			this.numLayers = layers;
			return this;
		}

		/**
		 * Chooses separate K and V regions or one joint region per layer.
		 * @param split {@code true} for separate regions
		 * @return this builder
		 */
		public Builder splitKv(boolean split) {
			this.splitKv = split;
			return this;
		}

		/**
		 * Sets the blocks per region.
		 * @param blocks blocks
		 * @return this builder
		 */
		public Builder blocks(int blocks) {
			this.numBlocks = blocks;
			return this;
		}

		/**
		 * Sets the tokens per block.
		 * @param tokens tokens
		 * @return this builder
		 */
		public Builder blockSize(int tokens) {
			this.blockSize = tokens;
			return this;
		}

		/**
		 * Sets the KV heads.
		 * @param heads heads
		 * @return this builder
		 */
		public Builder kvHeads(int heads) {
			this.numKvHeads = heads;
			return this;
		}

		/**
		 * Sets the elements per head.
		 * @param dim elements
		 * @return this builder
		 */
		public Builder headDim(int dim) {
			this.headDim = dim;
			return this;
		}

		/**
		 * Sets the bytes per element.
		 * @param bytes 1, 2, 4 or 8
		 * @return this builder
		 */
		public Builder dtypeSize(int bytes) {
			this.dtypeSize = bytes;
			return this;
		}

		/**
		 * Sets the element order.
		 * @param order HND or NHD
		 * @return this builder
		 */
		public Builder order(KvBlockOrder order) {
			this.order = order;
			return this;
		}

		/**
		 * Builds the layout.
		 * @return the layout
		 * @throws IllegalArgumentException when the shape is impossible
		 */
		public KvCacheLayout build() {
			return new KvCacheLayout(this.numLayers, this.splitKv, this.numBlocks, this.blockSize, this.numKvHeads,
					this.headDim, this.dtypeSize, this.order);
		}

	}

}
