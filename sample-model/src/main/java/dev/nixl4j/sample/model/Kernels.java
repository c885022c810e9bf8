package dev.nixl4j.sample.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorShuffle;
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

	/** The int species with as many lanes as {@link #F}. */
	static final VectorSpecies<Integer> I = VectorSpecies.of(int.class, F.vectorShape());

	private static final int L = F.length();

	private static final ValueLayout.OfShort F16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	/** Shuffles that pair lane i with lane i ^ stride (8, 4, 2, 1). */
	private static final VectorShuffle<Float> FOLD8 = fold(8);

	private static final VectorShuffle<Float> FOLD4 = fold(4);

	private static final VectorShuffle<Float> FOLD2 = fold(2);

	private static final VectorShuffle<Float> FOLD1 = fold(1);

	private Kernels() {
	}

	private static VectorShuffle<Float> fold(int stride) {
		return VectorShuffle.fromOp(F, (lane) -> (lane ^ stride) & (L - 1));
	}

	/**
	 * Adds a vector's lanes in a fixed order (halves, quarters, ...), the same whether
	 * the code runs compiled or interpreted: {@code reduceLanes(ADD)} leaves the order
	 * open, and it differs between the two, which would make results depend on the JIT.
	 */
	static float sum(FloatVector v) {
		FloatVector s = v;
		if (L == 16) {
			s = s.add(s.rearrange(FOLD8));
		}
		if (L >= 8) {
			s = s.add(s.rearrange(FOLD4));
		}
		s = s.add(s.rearrange(FOLD2));
		s = s.add(s.rearrange(FOLD1));
		return s.lane(0);
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
			sums[b] = sum(acc);
		}
	}

	/**
	 * Returns the dot product of a Q4_1 row ({@code blocks} blocks from byte
	 * {@code offset} of {@code w}) with {@code x[xOffset ..]}; {@code sums} holds the
	 * block sums of that part of {@code x} ({@link #blockSums}).
	 */
	static float dotQ41(MemorySegment w, long offset, int blocks, float[] x, int xOffset, float[] sums) {
		// Two accumulators, even and odd blocks, to halve the chain of dependent adds.
		FloatVector even = FloatVector.zero(F);
		FloatVector odd = FloatVector.zero(F);
		float mins = 0;
		int b = 0;
		for (; b + 2 <= blocks; b += 2) {
			long o = offset + 20L * b;
			even = blockQ41(w, o, x, xOffset + 32 * b).fma(FloatVector.broadcast(F, half(w, o)), even);
			odd = blockQ41(w, o + 20, x, xOffset + 32 * b + 32).fma(FloatVector.broadcast(F, half(w, o + 20)), odd);
			mins += half(w, o + 2) * sums[b] + half(w, o + 22) * sums[b + 1];
		}
		if (b < blocks) {
			long o = offset + 20L * b;
			even = blockQ41(w, o, x, xOffset + 32 * b).fma(FloatVector.broadcast(F, half(w, o)), even);
			mins += half(w, o + 2) * sums[b];
		}
		return sum(even.add(odd)) + mins;
	}

	/** The dot product of a Q4_1 block's quants (not yet scaled) with 32 values of x. */
	private static FloatVector blockQ41(MemorySegment w, long o, float[] x, int xo) {
		FloatVector block = FloatVector.zero(F);
		for (int c = 0; c < 16; c += L) {
			// One widening of the bytes to ints; the nibbles are cut out of the ints.
			IntVector q = (IntVector) ByteVector.fromMemorySegment(B, w, o + 4 + c, ByteOrder.LITTLE_ENDIAN)
				.convertShape(VectorOperators.B2I, I, 0);
			FloatVector lo = (FloatVector) q.and(0x0F).convert(VectorOperators.I2F, 0);
			FloatVector hi = (FloatVector) q.lanewise(VectorOperators.ASHR, 4)
				.and(0x0F)
				.convert(VectorOperators.I2F, 0);
			block = lo.fma(FloatVector.fromArray(F, x, xo + c), block);
			block = hi.fma(FloatVector.fromArray(F, x, xo + 16 + c), block);
		}
		return block;
	}

	/**
	 * Returns the dot product of a Q8_0 row ({@code blocks} blocks from byte
	 * {@code offset} of {@code w}) with {@code x[xOffset ..]}.
	 */
	static float dotQ80(MemorySegment w, long offset, int blocks, float[] x, int xOffset) {
		FloatVector even = FloatVector.zero(F);
		FloatVector odd = FloatVector.zero(F);
		int b = 0;
		for (; b + 2 <= blocks; b += 2) {
			long o = offset + 34L * b;
			even = blockQ80(w, o, x, xOffset + 32 * b).fma(FloatVector.broadcast(F, half(w, o)), even);
			odd = blockQ80(w, o + 34, x, xOffset + 32 * b + 32).fma(FloatVector.broadcast(F, half(w, o + 34)), odd);
		}
		if (b < blocks) {
			long o = offset + 34L * b;
			even = blockQ80(w, o, x, xOffset + 32 * b).fma(FloatVector.broadcast(F, half(w, o)), even);
		}
		return sum(even.add(odd));
	}

	/** The dot product of a Q8_0 block's quants (not yet scaled) with 32 values of x. */
	private static FloatVector blockQ80(MemorySegment w, long o, float[] x, int xo) {
		FloatVector block = FloatVector.zero(F);
		for (int c = 0; c < 32; c += L) {
			ByteVector q = ByteVector.fromMemorySegment(B, w, o + 2 + c, ByteOrder.LITTLE_ENDIAN);
			FloatVector v = (FloatVector) q.convertShape(VectorOperators.B2F, F, 0);
			block = v.fma(FloatVector.fromArray(F, x, xo + c), block);
		}
		return block;
	}

	/** Dequantizes a Q4_1 row of {@code blocks} blocks into {@code dst[0 ..]}. */
	static void dequantizeQ41(MemorySegment w, long offset, int blocks, float[] dst) {
		for (int b = 0; b < blocks; b++) {
			long o = offset + 20L * b;
			float d = half(w, o);
			float m = half(w, o + 2);
			for (int c = 0; c < 16; c += L) {
				IntVector q = (IntVector) ByteVector.fromMemorySegment(B, w, o + 4 + c, ByteOrder.LITTLE_ENDIAN)
					.convertShape(VectorOperators.B2I, I, 0);
				FloatVector lo = (FloatVector) q.and(0x0F).convert(VectorOperators.I2F, 0);
				FloatVector hi = (FloatVector) q.lanewise(VectorOperators.ASHR, 4)
					.and(0x0F)
					.convert(VectorOperators.I2F, 0);
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
			out[t * outStride + outIndex] = sum(a0);
			out[(t + 1) * outStride + outIndex] = sum(a1);
			out[(t + 2) * outStride + outIndex] = sum(a2);
			out[(t + 3) * outStride + outIndex] = sum(a3);
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
		float sum = sum(acc);
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
		float sum = sum(acc);
		for (; i < n; i++) {
			sum += q[qOffset + i] * k.get(ValueLayout.JAVA_FLOAT_UNALIGNED, byteOffset + 4L * i);
		}
		return sum;
	}

	/**
	 * Adds to {@code out[outOffset .. + n)} the rows {@code 0 .. count} of a segment
	 * ({@code n} floats each, from {@code byteOffset}, {@code strideBytes} apart), row
	 * {@code s} weighted by {@code weights[weightOffset + s]}.
	 */
	static void addWeighted(float[] out, int outOffset, float[] weights, int weightOffset, int count,
			MemorySegment rows, long byteOffset, long strideBytes, int n) {
		int i = 0;
		for (; i <= n - L; i += L) {
			FloatVector acc = FloatVector.fromArray(F, out, outOffset + i);
			long offset = byteOffset + 4L * i;
			for (int s = 0; s < count; s++, offset += strideBytes) {
				acc = FloatVector.fromMemorySegment(F, rows, offset, ByteOrder.nativeOrder())
					.fma(FloatVector.broadcast(F, weights[weightOffset + s]), acc);
			}
			acc.intoArray(out, outOffset + i);
		}
		for (; i < n; i++) {
			float acc = out[outOffset + i];
			long offset = byteOffset + 4L * i;
			for (int s = 0; s < count; s++, offset += strideBytes) {
				acc += weights[weightOffset + s] * rows.get(ValueLayout.JAVA_FLOAT_UNALIGNED, offset);
			}
			out[outOffset + i] = acc;
		}
	}

}
