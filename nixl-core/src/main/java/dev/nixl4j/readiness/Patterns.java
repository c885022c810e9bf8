package dev.nixl4j.readiness;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * Deterministic byte patterns for verified transfers: a seed fills memory, and a checksum
 * or a comparison tells whether the bytes at the other end are the ones that were sent.
 */
public final class Patterns {

	private Patterns() {
	}

	/**
	 * Fills a segment with the pattern of a seed.
	 * @param segment the memory
	 * @param seed the seed
	 */
	public static void fill(MemorySegment segment, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		long size = segment.byteSize();
		long i = 0;
		for (; i + Long.BYTES <= size; i += Long.BYTES) {
			segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
		}
		for (; i < size; i++) {
			segment.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
		}
	}

	/**
	 * Whether a segment holds the pattern of a seed.
	 * @param segment the memory
	 * @param seed the seed
	 * @return {@code true} if every byte matches
	 */
	public static boolean holds(MemorySegment segment, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		long size = segment.byteSize();
		long i = 0;
		for (; i + Long.BYTES <= size; i += Long.BYTES) {
			if (segment.get(ValueLayout.JAVA_LONG_UNALIGNED, i) != random.nextLong()) {
				return false;
			}
		}
		for (; i < size; i++) {
			if (segment.get(ValueLayout.JAVA_BYTE, i) != (byte) random.nextInt()) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Checksums a segment, so that two processes can compare memory without shipping it.
	 * @param segment the memory
	 * @return its CRC32C
	 */
	public static long crc(MemorySegment segment) {
		CRC32C crc = new CRC32C();
		crc.update(segment.asByteBuffer());
		return crc.getValue();
	}

}
