package dev.nixl4j.sample.model;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * Seeded tensor contents for the tests, with the values a reader must dequantize them to.
 */
final class TestTensors {

	/** A tensor's bytes and, row after row, its values. */
	record Quantized(byte[] bytes, float[] values) {
	}

	private TestTensors() {
	}

	static Quantized f32(Random random, int count) {
		ByteBuffer bytes = ByteBuffer.allocate(4 * count).order(ByteOrder.LITTLE_ENDIAN);
		float[] values = new float[count];
		for (int i = 0; i < count; i++) {
			values[i] = (float) random.nextGaussian();
			bytes.putFloat(values[i]);
		}
		return new Quantized(bytes.array(), values);
	}

	static Quantized f16(Random random, int count) {
		ByteBuffer bytes = ByteBuffer.allocate(2 * count).order(ByteOrder.LITTLE_ENDIAN);
		float[] values = new float[count];
		for (int i = 0; i < count; i++) {
			short half = Float.floatToFloat16((float) random.nextGaussian());
			values[i] = Float.float16ToFloat(half);
			bytes.putShort(half);
		}
		return new Quantized(bytes.array(), values);
	}

	/** Q8_0: per block of 32, an f16 scale d and 32 int8 q; x = d * q. */
	static Quantized q8(Random random, int count) {
		ByteBuffer bytes = ByteBuffer.allocate(count / 32 * 34).order(ByteOrder.LITTLE_ENDIAN);
		float[] values = new float[count];
		for (int block = 0; block < count / 32; block++) {
			short d = Float.floatToFloat16(random.nextFloat() * 0.02f + 0.001f);
			bytes.putShort(d);
			for (int j = 0; j < 32; j++) {
				byte q = (byte) (random.nextInt(256) - 128);
				bytes.put(q);
				values[32 * block + j] = Float.float16ToFloat(d) * q;
			}
		}
		return new Quantized(bytes.array(), values);
	}

	/**
	 * Q4_1: per block of 32, an f16 scale d, an f16 minimum m and 16 bytes, value j the
	 * low nibble of byte j and value j + 16 its high nibble; x = d * q + m.
	 */
	static Quantized q41(Random random, int count) {
		ByteBuffer bytes = ByteBuffer.allocate(count / 32 * 20).order(ByteOrder.LITTLE_ENDIAN);
		float[] values = new float[count];
		for (int block = 0; block < count / 32; block++) {
			short d = Float.floatToFloat16(random.nextFloat() * 0.05f + 0.001f);
			short m = Float.floatToFloat16(-random.nextFloat());
			bytes.putShort(d).putShort(m);
			int[] q = new int[32];
			for (int j = 0; j < 32; j++) {
				q[j] = random.nextInt(16);
				values[32 * block + j] = Float.float16ToFloat(d) * q[j] + Float.float16ToFloat(m);
			}
			for (int j = 0; j < 16; j++) {
				bytes.put((byte) (q[j] | (q[j + 16] << 4)));
			}
		}
		return new Quantized(bytes.array(), values);
	}

}
