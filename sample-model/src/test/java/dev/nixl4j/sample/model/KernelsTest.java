package dev.nixl4j.sample.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The vector kernels against plain loops over {@link Dequantize}'s values, with row
 * lengths, row counts and token counts that do not fill whole tiles.
 */
class KernelsTest {

	/** Rows of {@code blocks} blocks of a type, at an odd byte offset into a segment. */
	private record Rows(MemorySegment segment, long offset, float[][] values) {
	}

	private static Rows rows(GgmlType type, int count, int blocks, long seed) {
		Random random = new Random(seed);
		int columns = 32 * blocks;
		TestTensors.Quantized q = (type == GgmlType.Q4_1) ? TestTensors.q41(random, count * columns)
				: TestTensors.q8(random, count * columns);
		long offset = 7;
		MemorySegment segment = MemorySegment.ofArray(new byte[(int) offset + q.bytes().length]);
		MemorySegment.copy(MemorySegment.ofArray(q.bytes()), 0, segment, offset, q.bytes().length);
		float[][] values = new float[count][columns];
		for (int r = 0; r < count; r++) {
			// The reference values: the reader's plain dequantization.
			Dequantize.values(type, segment.asSlice(offset + r * Dequantize.byteSize(type, columns)), values[r], 0,
					columns);
		}
		return new Rows(segment, offset, values);
	}

	private static float[] vector(Random random, int n) {
		float[] x = new float[n];
		for (int i = 0; i < n; i++) {
			x[i] = (float) random.nextGaussian();
		}
		return x;
	}

	private static double dot(float[] a, float[] b, int bOffset) {
		double sum = 0;
		for (int i = 0; i < a.length; i++) {
			sum += (double) a[i] * b[bOffset + i];
		}
		return sum;
	}

	private static double magnitude(float[] a, float[] b, int bOffset) {
		double sum = 0;
		for (int i = 0; i < a.length; i++) {
			sum += Math.abs((double) a[i] * b[bOffset + i]);
		}
		return sum;
	}

	@ParameterizedTest
	@CsvSource({ "Q4_1, 1", "Q4_1, 3", "Q4_1, 18", "Q4_1, 48", "Q8_0, 1", "Q8_0, 5", "Q8_0, 18" })
	void fusedDotsMatchPlainLoops(GgmlType type, int blocks) {
		int count = 13;
		Rows rows = rows(type, count, blocks, blocks);
		Random random = new Random(99);
		int xOffset = 5;
		float[] x = vector(random, xOffset + 32 * blocks);
		float[] sums = new float[blocks];
		Kernels.blockSums(x, xOffset, 32 * blocks, sums);
		long rowBytes = Dequantize.byteSize(type, 32L * blocks);
		for (int r = 0; r < count; r++) {
			long offset = rows.offset() + r * rowBytes;
			float actual = (type == GgmlType.Q4_1) ? Kernels.dotQ41(rows.segment(), offset, blocks, x, xOffset, sums)
					: Kernels.dotQ80(rows.segment(), offset, blocks, x, xOffset);
			assertThat((double) actual).as("row %d", r)
				.isCloseTo(dot(rows.values()[r], x, xOffset), within(1e-5 * magnitude(rows.values()[r], x, xOffset)));
		}
	}

	@ParameterizedTest
	@CsvSource({ "Q4_1, 1", "Q4_1, 7", "Q8_0, 1", "Q8_0, 7" })
	void dequantizedRowsMatchTheReader(GgmlType type, int blocks) {
		Rows rows = rows(type, 5, blocks, 3);
		long rowBytes = Dequantize.byteSize(type, 32L * blocks);
		for (int r = 0; r < 5; r++) {
			float[] dst = new float[32 * blocks];
			if (type == GgmlType.Q4_1) {
				Kernels.dequantizeQ41(rows.segment(), rows.offset() + r * rowBytes, blocks, dst);
			}
			else {
				Kernels.dequantizeQ80(rows.segment(), rows.offset() + r * rowBytes, blocks, dst);
			}
			for (int i = 0; i < dst.length; i++) {
				// d * q + m with one rounding (a fused multiply-add) or two.
				assertThat(dst[i]).as("row %d value %d", r, i)
					.isCloseTo(rows.values()[r][i], within(Math.ulp(rows.values()[r][i]) * 2 + 1e-7f));
			}
		}
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 3, 4, 5, 7, 8, 9, 13 })
	void tilesMatchPlainLoops(int tokens) {
		Random random = new Random(tokens);
		int n = 96;
		int rowsCount = 7;
		float[][] w = new float[rowsCount][];
		for (int r = 0; r < rowsCount; r++) {
			w[r] = vector(random, n);
		}
		float[] x = vector(random, tokens * n);
		float[] out = new float[tokens * rowsCount];
		for (int r = 0; r < rowsCount; r++) {
			Kernels.tile(w[r], n, x, 0, tokens, out, rowsCount, r);
		}
		for (int t = 0; t < tokens; t++) {
			for (int r = 0; r < rowsCount; r++) {
				assertThat((double) out[t * rowsCount + r]).as("token %d row %d", t, r)
					.isCloseTo(dot(w[r], x, t * n), within(1e-5 * magnitude(w[r], x, t * n)));
			}
		}
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 3, 16, 17, 64, 70 })
	void dotsOverSegmentsMatchPlainLoops(int n) {
		Random random = new Random(n);
		float[] q = vector(random, n + 2);
		float[] k = vector(random, n);
		MemorySegment segment = MemorySegment.ofArray(new float[n + 3]);
		MemorySegment.copy(k, 0, segment, ValueLayout.JAVA_FLOAT, 12, n);
		assertThat((double) Kernels.dot(q, 2, segment, 12, n)).isCloseTo(dot(k, q, 2),
				within(1e-5 * magnitude(k, q, 2)));
	}

	@ParameterizedTest
	@CsvSource({ "64, 1", "64, 5", "17, 3", "3, 16", "70, 9" })
	void weightedRowsOfASegmentAddUpLikePlainLoops(int n, int count) {
		Random random = new Random(n * 31L + count);
		int stride = n + 5;
		float[] rows = vector(random, 3 + count * stride);
		MemorySegment segment = MemorySegment.ofArray(rows);
		float[] weights = vector(random, count + 2);
		float[] out = vector(random, n + 1);
		float[] before = out.clone();
		Kernels.addWeighted(out, 1, weights, 2, count, segment, 12, 4L * stride, n);
		assertThat(out[0]).isEqualTo(before[0]);
		for (int i = 0; i < n; i++) {
			double expected = before[i + 1];
			double magnitude = Math.abs(expected);
			for (int s = 0; s < count; s++) {
				double term = (double) weights[2 + s] * rows[3 + s * stride + i];
				expected += term;
				magnitude += Math.abs(term);
			}
			assertThat((double) out[i + 1]).as("value %d", i).isCloseTo(expected, within(1e-6 * magnitude));
		}
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 3 })
	void lanesAreSummedInTheSameOrderEveryTime(int seed) {
		Random random = new Random(seed);
		float[] values = vector(random, Kernels.F.length());
		for (int i = 0; i < values.length; i++) {
			values[i] *= (float) Math.pow(10, random.nextInt(12) - 6);
		}
		double exact = 0;
		double magnitude = 0;
		for (float v : values) {
			exact += v;
			magnitude += Math.abs(v);
		}
		float sum = Kernels.sum(jdk.incubator.vector.FloatVector.fromArray(Kernels.F, values, 0));
		assertThat((double) sum).isCloseTo(exact, within(1e-6 * magnitude));
		for (int i = 0; i < 10_000; i++) {
			assertThat(Kernels.sum(jdk.incubator.vector.FloatVector.fromArray(Kernels.F, values, 0))).isEqualTo(sum);
		}
	}

}
