package dev.nixl4j.sample.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Turns the bytes of F32, F16, Q8_0 and Q4_1 tensors into floats.
 */
public final class Dequantize {

	private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private Dequantize() {
	}

	/**
	 * Returns the size in bytes of {@code count} values of a type.
	 * @param type the type
	 * @param count the number of values, a multiple of the type's block
	 * @return the size in bytes
	 * @throws IllegalArgumentException if {@code count} is negative or not a multiple of
	 * the type's block
	 */
	public static long byteSize(GgmlType type, long count) {
		if (count < 0 || count % type.blockValues() != 0) {
			throw new IllegalArgumentException(
					count + " values of " + type + " are not whole blocks of " + type.blockValues());
		}
		return Math.multiplyExact(count / type.blockValues(), (long) type.blockBytes());
	}

	/**
	 * Dequantizes {@code count} values from the start of {@code src} into {@code dst}.
	 * @param type the type of the values: F32, F16, Q8_0 or Q4_1
	 * @param src the bytes, at least {@link #byteSize(GgmlType, long) byteSize(type,
	 * count)} of them
	 * @param dst where the values go
	 * @param dstOffset the index in {@code dst} of the first value
	 * @param count the number of values, a multiple of the type's block
	 * @throws IllegalArgumentException if the type is not one of those four,
	 * {@code count} is not whole blocks, {@code src} is too short or {@code dst} too
	 * small
	 */
	public static void values(GgmlType type, MemorySegment src, float[] dst, int dstOffset, int count) {
		if (!type.isReadable()) {
			throw new IllegalArgumentException(type + " is not dequantized (only F32, F16, Q8_0 and Q4_1 are)");
		}
		long bytes = byteSize(type, count);
		if (src.byteSize() < bytes) {
			throw new IllegalArgumentException(
					count + " values of " + type + " need " + bytes + " bytes, the segment has " + src.byteSize());
		}
		if (dstOffset < 0 || dstOffset > dst.length - count) {
			throw new IllegalArgumentException(
					count + " values at " + dstOffset + " do not fit a float[" + dst.length + "]");
		}
		switch (type) {
			case F32 -> {
				for (int i = 0; i < count; i++) {
					dst[dstOffset + i] = src.get(F32, 4L * i);
				}
			}
			case F16 -> {
				for (int i = 0; i < count; i++) {
					dst[dstOffset + i] = Float.float16ToFloat(src.get(F16, 2L * i));
				}
			}
			case Q8_0 -> q8(src, dst, dstOffset, count / 32);
			case Q4_1 -> q41(src, dst, dstOffset, count / 32);
			default -> throw new IllegalStateException(type.toString());
		}
	}

	private static void q8(MemorySegment src, float[] dst, int dstOffset, int blocks) {
		for (int b = 0; b < blocks; b++) {
			long base = 34L * b;
			float d = Float.float16ToFloat(src.get(F16, base));
			int out = dstOffset + 32 * b;
			for (int j = 0; j < 32; j++) {
				dst[out + j] = d * src.get(ValueLayout.JAVA_BYTE, base + 2 + j);
			}
		}
	}

	private static void q41(MemorySegment src, float[] dst, int dstOffset, int blocks) {
		for (int b = 0; b < blocks; b++) {
			long base = 20L * b;
			float d = Float.float16ToFloat(src.get(F16, base));
			float m = Float.float16ToFloat(src.get(F16, base + 2));
			int out = dstOffset + 32 * b;
			for (int j = 0; j < 16; j++) {
				int q = src.get(ValueLayout.JAVA_BYTE, base + 4 + j) & 0xFF;
				dst[out + j] = d * (q & 0x0F) + m;
				dst[out + j + 16] = d * (q >>> 4) + m;
			}
		}
	}

}
