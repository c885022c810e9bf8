package dev.nixl4j.sample.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

/**
 * The engine's vector kernels: fused dequantize-and-dot of Q4_1 and Q8_0 rows with a
 * float vector, dequantization of a row into floats, and dot products of one float row
 * with a tile of several tokens. Callers check bounds; the memory accesses are checked
 * again by the segments and arrays.
 */
final class Kernels {

	/** The float species: the preferred one when it has 4, 8 or 16 lanes. */
	static final VectorSpecies<Float> F = floatSpecies();

	/** The byte species with as many lanes as {@link #F}. */
	static final VectorSpecies<Byte> B = VectorSpecies.of(byte.class, VectorShape.forBitSize(F.length() * 8));

	private static final int L = F.length();

	private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private Kernels() {
	}

	private static VectorSpecies<Float> floatSpecies() {
		VectorSpecies<Float> preferred = FloatVector.SPECIES_PREFERRED;
		int lanes = preferred.length();
		return (lanes == 4 || lanes == 8 || lanes == 16) ? preferred : FloatVector.SPECIES_128;
	}

	private static float half(MemorySegment w, long offset) {
		return Float.float16ToFloat(w.get(F16, offset));
	}

	/**
	 * Sums each block of 32 values of {@code x}: what the minimum {@code m} of a Q4_1
	 * block multiplies.
	 */
	static void blockSums(float[] x, int offset, int count, float[] sums) {
		for (int b = 0; b < count / 32; b++) {
			int o = offset + 32 * b;
			FloatVector acc = FloatVector.fromArray(F, x, o);
			for (int c = L; c < 32; c += L) {
				acc = acc.add(FloatVector.fromArray(F, x, o + c));
			}
			sums[b] = acc.reduceLanes(VectorOperators.ADD);
		}
	}

	/**
	 * Returns the dot product of a Q4_1 row ({@code blocks} blocks from byte
	 * {@code offset} of {@code w}) with {@code x[xOffset ..]}; {@code sums} holds the
	 * block sums of that part of {@code x} ({@link #blockSums}).
	 */
	static float dotQ41(MemorySegment w, long offset, int blocks, float[] x, int xOffset, float[] sums) {
		FloatVector acc = FloatVector.zero(F);
		float mins = 0;
		for (int b = 0; b < blocks; b++) {
			long o = offset + 20L * b;
			int xo = xOffset + 32 * b;
			FloatVector block = FloatVector.zero(F);
			for (int c = 0; c < 16; c += L) {
				ByteVector q = ByteVector.fromMemorySegment(B, w, o + 4 + c, ByteOrder.LITTLE_ENDIAN);
				FloatVector lo = (FloatVector) q.and((byte) 0x0F).convertShape(VectorOperators.B2F, F, 0);
				FloatVector hi = (FloatVector) q.lanewise(VectorOperators.LSHR, 4)
					.and((byte) 0x0F)
					.convertShape(VectorOperators.B2F, F, 0);
				block = lo.fma(FloatVector.fromArray(F, x, xo + c), block);
				block = hi.fma(FloatVector.fromArray(F, x, xo + 16 + c), block);
			}
			acc = block.fma(FloatVector.broadcast(F, half(w, o)), acc);
			mins += half(w, o + 2) * sums[b];
		}
		return acc.reduceLanes(VectorOperators.ADD) + mins;
	}

	/**
	 * Returns the dot product of a Q8_0 row ({@code blocks} blocks from byte
	 * {@code offset} of {@code w}) with {@code x[xOffset ..]}.
	 */
	static float dotQ80(MemorySegment w, long offset, int blocks, float[] x, int xOffset) {
		FloatVector acc = FloatVector.zero(F);
		for (int b = 0; b < blocks; b++) {
			long o = offset + 34L * b;
			int xo = xOffset + 32 * b;
			FloatVector block = FloatVector.zero(F);
			for (int c = 0; c < 32; c += L) {
				ByteVector q = ByteVector.fromMemorySegment(B, w, o + 2 + c, ByteOrder.LITTLE_ENDIAN);
				FloatVector v = (FloatVector) q.convertShape(VectorOperators.B2F, F, 0);
				block = v.fma(FloatVector.fromArray(F, x, xo + c), block);
			}
			acc = block.fma(FloatVector.broadcast(F, half(w, o)), acc);
		}
		return acc.reduceLanes(VectorOperators.ADD);
	}

	/** Dequantizes a Q4_1 row of {@code blocks} blocks into {@code dst[0 ..]}. */
	static void dequantizeQ41(MemorySegment w, long offset, int blocks, float[] dst) {
		for (int b = 0; b < blocks; b++) {
			long o = offset + 20L * b;
			float d = half(w, o);
			float m = half(w, o + 2);
			for (int c = 0; c < 16; c += L) {
				ByteVector q = ByteVector.fromMemorySegment(B, w, o + 4 + c, ByteOrder.LITTLE_ENDIAN);
				FloatVector lo = (FloatVector) q.and((byte) 0x0F).convertShape(VectorOperators.B2F, F, 0);
				FloatVector hi = (FloatVector) q.lanewise(VectorOperators.LSHR, 4)
					.and((byte) 0x0F)
					.convertShape(VectorOperators.B2F, F, 0);
				lo.fma(d, m).intoArray(dst, 32 * b + c);
				hi.fma(d, m).intoArray(dst, 32 * b + 16 + c);
			}
		}
	}

	/** Dequantizes a Q8_0 row of {@code blocks} blocks into {@code dst[0 ..]}. */
	static void dequantizeQ80(MemorySegment w, long offset, int blocks, float[] dst) {
		for (int b = 0; b < blocks; b++) {
			long o = offset + 34L * b;
			float d = half(w, o);
			for (int c = 0; c < 32; c += L) {
				ByteVector q = ByteVector.fromMemorySegment(B, w, o + 2 + c, ByteOrder.LITTLE_ENDIAN);
				((FloatVector) q.convertShape(VectorOperators.B2F, F, 0)).mul(d).intoArray(dst, 32 * b + c);
			}
		}
	}

	/**
	 * Dots the row {@code w[0 .. n)} with tokens {@code from .. to} of {@code x} (token
	 * {@code t} at {@code x[t * n ..]}), writing token {@code t}'s result at
	 * {@code out[t * outStride + outIndex]}. Four tokens share each load of the row;
	 * {@code n} is a multiple of {@link #F}'s length.
	 */
	static void tile(float[] w, int n, float[] x, int from, int to, float[] out, int outStride, int outIndex) {
		int t = from;
		for (; t + 4 <= to; t += 4) {
			int x0 = t * n;
			int x1 = x0 + n;
			int x2 = x1 + n;
			int x3 = x2 + n;
			FloatVector a0 = FloatVector.zero(F);
			FloatVector a1 = FloatVector.zero(F);
			FloatVector a2 = FloatVector.zero(F);
			FloatVector a3 = FloatVector.zero(F);
			for (int i = 0; i < n; i += L) {
				FloatVector wv = FloatVector.fromArray(F, w, i);
				a0 = wv.fma(FloatVector.fromArray(F, x, x0 + i), a0);
				a1 = wv.fma(FloatVector.fromArray(F, x, x1 + i), a1);
				a2 = wv.fma(FloatVector.fromArray(F, x, x2 + i), a2);
				a3 = wv.fma(FloatVector.fromArray(F, x, x3 + i), a3);
			}
			out[t * outStride + outIndex] = a0.reduceLanes(VectorOperators.ADD);
			out[(t + 1) * outStride + outIndex] = a1.reduceLanes(VectorOperators.ADD);
			out[(t + 2) * outStride + outIndex] = a2.reduceLanes(VectorOperators.ADD);
			out[(t + 3) * outStride + outIndex] = a3.reduceLanes(VectorOperators.ADD);
		}
		for (; t < to; t++) {
			out[t * outStride + outIndex] = dot(w, 0, x, t * n, n);
		}
	}

	/** Returns the dot product of {@code a[aOffset ..]} and {@code b[bOffset ..]}. */
	static float dot(float[] a, int aOffset, float[] b, int bOffset, int n) {
		FloatVector acc = FloatVector.zero(F);
		int i = 0;
		for (; i <= n - L; i += L) {
			acc = FloatVector.fromArray(F, a, aOffset + i).fma(FloatVector.fromArray(F, b, bOffset + i), acc);
		}
		float sum = acc.reduceLanes(VectorOperators.ADD);
		for (; i < n; i++) {
			sum += a[aOffset + i] * b[bOffset + i];
		}
		return sum;
	}

	/**
	 * Returns the dot product of {@code q[qOffset ..]} and {@code n} floats of a segment.
	 */
	static float dot(float[] q, int qOffset, MemorySegment k, long byteOffset, int n) {
		FloatVector acc = FloatVector.zero(F);
		int i = 0;
		for (; i <= n - L; i += L) {
			acc = FloatVector.fromArray(F, q, qOffset + i)
				.fma(FloatVector.fromMemorySegment(F, k, byteOffset + 4L * i, ByteOrder.nativeOrder()), acc);
		}
		float sum = acc.reduceLanes(VectorOperators.ADD);
		for (; i < n; i++) {
			sum += q[qOffset + i] * k.get(ValueLayout.JAVA_FLOAT_UNALIGNED, byteOffset + 4L * i);
		}
		return sum;
	}

	/**
	 * Adds {@code p} times {@code n} floats of a segment to {@code out[outOffset ..]}.
	 */
	static void addScaled(float[] out, int outOffset, float p, MemorySegment v, long byteOffset, int n) {
		int i = 0;
		for (; i <= n - L; i += L) {
			FloatVector.fromMemorySegment(F, v, byteOffset + 4L * i, ByteOrder.nativeOrder())
				.fma(FloatVector.broadcast(F, p), FloatVector.fromArray(F, out, outOffset + i))
				.intoArray(out, outOffset + i);
		}
		for (; i < n; i++) {
			out[outOffset + i] += p * v.get(ValueLayout.JAVA_FLOAT_UNALIGNED, byteOffset + 4L * i);
		}
	}

}
