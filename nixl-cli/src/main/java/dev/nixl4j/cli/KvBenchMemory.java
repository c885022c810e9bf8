package dev.nixl4j.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.readiness.Patterns;

/**
 * The blocks of a {@code kv-bench} cache in host memory or, with {@code --memory vram},
 * on CUDA device 0: written with a pattern, zeroed and checksummed per region and block,
 * through a host copy of the block where the cache is in device memory.
 */
final class KvBenchMemory {

	private KvBenchMemory() {
	}

	/**
	 * Allocates a cache where {@code --memory} says.
	 * @param agent the agent that registers it
	 * @param layout the layout
	 * @param kind host or device memory
	 * @return the cache
	 */
	static PagedKvCache allocate(NixlAgent agent, KvCacheLayout layout, BenchMemory.Kind kind) {
		return (kind == BenchMemory.Kind.VRAM) ? PagedKvCache.builder(agent, layout).device(0).build()
				: PagedKvCache.allocate(agent, layout);
	}

	/** Writes the pattern of a seed into one block of one region. */
	static void fill(PagedKvCache cache, int region, int block, long seed) {
		if (cache.memoryType() != MemoryType.VRAM) {
			Patterns.fill(cache.block(region, block), seed);
			return;
		}
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment copy = arena.allocate(cache.layout().blockLength(), 4096);
			Patterns.fill(copy, seed);
			cache.deviceRegion(region).copyFrom(copy, offset(cache, block));
		}
	}

	/** Zeroes one block of one region. */
	static void zero(PagedKvCache cache, int region, int block) {
		if (cache.memoryType() != MemoryType.VRAM) {
			cache.block(region, block).fill((byte) 0);
			return;
		}
		cache.deviceRegion(region).fill(offset(cache, block), cache.layout().blockLength(), (byte) 0);
	}

	/** Returns the CRC32C of one block of one region, as {@link Patterns#crc}. */
	static long crc(PagedKvCache cache, int region, int block) {
		if (cache.memoryType() != MemoryType.VRAM) {
			return Patterns.crc(cache.block(region, block));
		}
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment copy = arena.allocate(cache.layout().blockLength(), 4096);
			cache.deviceRegion(region).copyTo(offset(cache, block), copy);
			return Patterns.crc(copy);
		}
	}

	private static long offset(PagedKvCache cache, int block) {
		return block * cache.layout().blockLength();
	}

}
