package com.example.kvsession;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import dev.nixl4j.kv.PagedKvCache;

/**
 * The bytes a producer writes into a request's blocks and a consumer expects: a function
 * of the request's seed, the region (layer and K or V), the block's index in the request
 * and the offset in the block. Producer and consumer block ids differ; the index does
 * not.
 */
final class KvPattern {

	private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private KvPattern() {
	}

	/**
	 * Writes the pattern into blocks of a cache.
	 * @param cache the cache
	 * @param blockIds the request's blocks, in order
	 * @param seed the request's seed
	 */
	static void fill(PagedKvCache cache, int[] blockIds, long seed) {
		int regions = cache.layout().regionCount();
		for (int region = 0; region < regions; region++) {
			for (int index = 0; index < blockIds.length; index++) {
				MemorySegment block = cache.block(region, blockIds[index]);
				long words = block.byteSize() / 8;
				for (long w = 0; w < words; w++) {
					block.set(WORD, w * 8, word(seed, region, index, w));
				}
				for (long offset = words * 8; offset < block.byteSize(); offset++) {
					block.set(ValueLayout.JAVA_BYTE, offset, byteAt(seed, region, index, offset));
				}
			}
		}
	}

	/**
	 * Finds the first byte of the blocks that differs from the pattern.
	 * @param cache the cache
	 * @param blockIds the request's blocks, in order
	 * @param seed the request's seed
	 * @return the first difference, {@code null} when every byte is as expected
	 */
	static Mismatch check(PagedKvCache cache, int[] blockIds, long seed) {
		int regions = cache.layout().regionCount();
		for (int region = 0; region < regions; region++) {
			for (int index = 0; index < blockIds.length; index++) {
				MemorySegment block = cache.block(region, blockIds[index]);
				long words = block.byteSize() / 8;
				for (long w = 0; w < words; w++) {
					if (block.get(WORD, w * 8) != word(seed, region, index, w)) {
						return firstByte(block, seed, region, index, w * 8, w * 8 + 8);
					}
				}
				Mismatch tail = firstByte(block, seed, region, index, words * 8, block.byteSize());
				if (tail != null) {
					return tail;
				}
			}
		}
		return null;
	}

	private static Mismatch firstByte(MemorySegment block, long seed, int region, int index, long from, long to) {
		for (long offset = from; offset < to; offset++) {
			byte expected = byteAt(seed, region, index, offset);
			byte actual = block.get(ValueLayout.JAVA_BYTE, offset);
			if (actual != expected) {
				return new Mismatch(region, index, offset, expected, actual);
			}
		}
		return null;
	}

	private static byte byteAt(long seed, int region, int index, long offset) {
		return (byte) (word(seed, region, index, offset >>> 3) >>> ((offset & 7) * 8));
	}

	/** SplitMix64 of the coordinates of an 8-byte word. */
	private static long word(long seed, int region, int index, long word) {
		long x = seed * 0x9E3779B97F4A7C15L + region * 0xC2B2AE3D27D4EB4FL + index * 0x165667B19E3779F9L + word;
		x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
		x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
		return x ^ (x >>> 31);
	}

	/**
	 * A byte that differs from the pattern.
	 *
	 * @param region the region
	 * @param index the block's index in the request
	 * @param offset the offset in the block
	 * @param expected the pattern's byte
	 * @param actual the byte found
	 */
	record Mismatch(int region, int index, long offset, byte expected, byte actual) {
	}

}
