package dev.nixl4j.testsupport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import dev.nixl4j.readiness.Patterns;

/**
 * Test data: deterministic patterns in off-heap memory and their comparison.
 */
public final class Bytes {

	private Bytes() {
	}

	/**
	 * Allocates a segment filled with a pattern derived from a seed.
	 * @param arena the arena
	 * @param size bytes
	 * @param seed the pattern's seed
	 * @return the segment
	 */
	public static MemorySegment pattern(Arena arena, long size, long seed) {
		MemorySegment segment = arena.allocate(size, 64);
		fill(segment, seed);
		return segment;
	}

	/**
	 * Fills a segment with a pattern derived from a seed.
	 * @param segment the segment
	 * @param seed the seed
	 */
	public static void fill(MemorySegment segment, long seed) {
		Patterns.fill(segment, seed);
	}

	/**
	 * Whether two segments hold the same bytes.
	 * @param a one
	 * @param b the other
	 * @return {@code true} if equal in size and content
	 */
	public static boolean same(MemorySegment a, MemorySegment b) {
		return a.byteSize() == b.byteSize() && a.mismatch(b) == -1;
	}

	/**
	 * Whether a segment holds the pattern of a seed.
	 * @param segment the segment
	 * @param seed the seed
	 * @return {@code true} if it does
	 */
	public static boolean hasPattern(MemorySegment segment, long seed) {
		return Patterns.holds(segment, seed);
	}

	/**
	 * Replaces {@code remove} bytes at {@code at} with {@code insert}.
	 * @param bytes the original
	 * @param at where the change starts
	 * @param remove how many bytes go
	 * @param insert what comes in their place
	 * @return a new array
	 */
	public static byte[] splice(byte[] bytes, int at, int remove, byte[] insert) {
		byte[] result = new byte[bytes.length - remove + insert.length];
		System.arraycopy(bytes, 0, result, 0, at);
		System.arraycopy(insert, 0, result, at, insert.length);
		System.arraycopy(bytes, at + remove, result, at + insert.length, bytes.length - at - remove);
		return result;
	}

}
