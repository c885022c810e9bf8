package dev.nixl4j.sample.model;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Where a sequence's keys and values live: pages of {@link #blockSize()} tokens, element
 * type float32 (native byte order), each block ordered {@code [kvHead][token][headDim]}
 * (vLLM's HND layout): the element of token {@code t} of the block, KV head {@code h},
 * dimension {@code e} is at float index {@code (h * blockSize + t) * headDim + e}. Page
 * {@code i} holds the sequence's tokens {@code [i * blockSize, (i + 1) * blockSize)}.
 */
public interface KvPages {

	/**
	 * Returns the number of tokens in one page.
	 * @return the block size
	 */
	int blockSize();

	/**
	 * Returns the number of tokens the pages can hold: pages times the block size.
	 * @return the capacity in tokens
	 */
	int capacity();

	/**
	 * Returns a page's block of keys for a layer:
	 * {@code blockSize * kvHeads * headDim * 4} bytes.
	 * @param layer the layer
	 * @param page the page, from 0 to {@code capacity() / blockSize() - 1}
	 * @return the block
	 * @throws IndexOutOfBoundsException if there is no such layer or page
	 */
	MemorySegment keys(int layer, int page);

	/**
	 * Returns a page's block of values for a layer, laid out like {@link #keys}.
	 * @param layer the layer
	 * @param page the page
	 * @return the block
	 * @throws IndexOutOfBoundsException if there is no such layer or page
	 */
	MemorySegment values(int layer, int page);

	/**
	 * Allocates contiguous pages in plain memory (zeroed), for tests and tools.
	 * @param arena the arena that owns the memory: shared, automatic or global, since the
	 * model's threads read and write the pages
	 * @param config the model's config (layers, KV heads, head width)
	 * @param blockSize tokens per page, positive
	 * @param pages the number of pages, positive
	 * @return the pages
	 * @throws IllegalArgumentException if the block size or page count is not positive,
	 * the block size exceeds the model's context or the pages would exceed it by more
	 * than a page
	 */
	static KvPages allocate(Arena arena, LlamaConfig config, int blockSize, int pages) {
		Objects.requireNonNull(arena, "arena");
		Objects.requireNonNull(config, "config");
		if (blockSize < 1 || pages < 1 || blockSize > config.context()) {
			throw new IllegalArgumentException("blockSize " + blockSize + " and pages " + pages
					+ " must be positive, the block size at most the context " + config.context());
		}
		if ((long) blockSize * (pages - 1) >= config.context()) {
			throw new IllegalArgumentException(pages + " pages of " + blockSize + " tokens exceed the context "
					+ config.context() + " by more than a page");
		}
		long blockBytes = 4L * blockSize * config.kvDim();
		int layers = config.layers();
		MemorySegment all = arena.allocate(Math.multiplyExact(blockBytes, 2L * layers * pages), 64);
		return new KvPages() {

			@Override
			public int blockSize() {
				return blockSize;
			}

			@Override
			public int capacity() {
				return blockSize * pages;
			}

			@Override
			public MemorySegment keys(int layer, int page) {
				return all.asSlice(blockBytes * index(layer, page, 0), blockBytes);
			}

			@Override
			public MemorySegment values(int layer, int page) {
				return all.asSlice(blockBytes * index(layer, page, 1), blockBytes);
			}

			private long index(int layer, int page, int kind) {
				Objects.checkIndex(layer, layers);
				Objects.checkIndex(page, pages);
				return (2L * ((long) layer * pages + page)) + kind;
			}

		};
	}

}
