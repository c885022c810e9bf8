package dev.nixl4j.sample.api;

import dev.nixl4j.kv.KvBlockOrder;
import dev.nixl4j.kv.KvCacheLayout;

/**
 * A KV-cache layout as JSON: the model shape and the pool size.
 *
 * @param layers transformer layers
 * @param splitKv whether K and V are separate regions
 * @param blocks blocks in the pool
 * @param blockSize tokens per block
 * @param kvHeads KV heads
 * @param headDim elements per head
 * @param dtypeSize bytes per element
 * @param order the order of tokens and heads inside a block
 * @param fingerprint {@link KvCacheLayout#fingerprint()}, for reading only
 */
public record LayoutDocument(int layers, boolean splitKv, int blocks, int blockSize, int kvHeads, int headDim,
		int dtypeSize, KvBlockOrder order, String fingerprint) {

	/**
	 * Describes a layout.
	 * @param layout the layout
	 * @return its document
	 */
	public static LayoutDocument of(KvCacheLayout layout) {
		return new LayoutDocument(layout.numLayers(), layout.splitKv(), layout.numBlocks(), layout.blockSize(),
				layout.numKvHeads(), layout.headDim(), layout.dtypeSize(), layout.order(), layout.fingerprint());
	}

	/**
	 * Builds the layout this document describes.
	 * @return the layout
	 * @throws IllegalArgumentException when the values do not make a layout
	 */
	public KvCacheLayout toLayout() {
		return KvCacheLayout.builder()
			.layers(this.layers)
			.splitKv(this.splitKv)
			.blocks(this.blocks)
			.blockSize(this.blockSize)
			.kvHeads(this.kvHeads)
			.headDim(this.headDim)
			.dtypeSize(this.dtypeSize)
			.order(this.order)
			.build();
	}

}
