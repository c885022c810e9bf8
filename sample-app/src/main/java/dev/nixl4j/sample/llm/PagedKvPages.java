package dev.nixl4j.sample.llm;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.zip.CRC32C;

import dev.nixl4j.kv.KvPart;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.sample.model.KvPages;

/**
 * A sequence's K and V where they lie in a worker's paged KV cache: page {@code i} is
 * block {@code blocks[i]} of each layer's K and V region, the registered memory that NIXL
 * reads from and writes into. Nothing is copied.
 */
public final class PagedKvPages implements KvPages {

	private final PagedKvCache cache;

	private final int[] blocks;

	/**
	 * Views blocks of a cache as a sequence's pages.
	 * @param cache the cache
	 * @param blocks its blocks, in token order
	 */
	public PagedKvPages(PagedKvCache cache, int[] blocks) {
		this.cache = Objects.requireNonNull(cache, "cache");
		this.blocks = blocks.clone();
		for (int block : this.blocks) {
			Objects.checkIndex(block, cache.layout().numBlocks());
		}
	}

	@Override
	public int blockSize() {
		return this.cache.layout().blockSize();
	}

	@Override
	public int capacity() {
		return this.blocks.length * blockSize();
	}

	@Override
	public MemorySegment keys(int layer, int page) {
		return this.cache.block(layer, KvPart.K, this.blocks[Objects.checkIndex(page, this.blocks.length)]);
	}

	@Override
	public MemorySegment values(int layer, int page) {
		return this.cache.block(layer, KvPart.V, this.blocks[Objects.checkIndex(page, this.blocks.length)]);
	}

	/**
	 * Returns the CRC32C of blocks of a cache over all regions: region by region, the
	 * blocks in the order given (what the decode worker checks the pulled blocks
	 * against).
	 * @param cache the cache
	 * @param blocks the blocks, in token order
	 * @return the checksum
	 */
	public static long crc32c(PagedKvCache cache, int[] blocks) {
		CRC32C crc = new CRC32C();
		for (int region = 0; region < cache.layout().regionCount(); region++) {
			for (int block : blocks) {
				crc.update(cache.block(region, block).asByteBuffer());
			}
		}
		return crc.getValue();
	}

}
