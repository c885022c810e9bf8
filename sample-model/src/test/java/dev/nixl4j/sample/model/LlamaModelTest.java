package dev.nixl4j.sample.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the engine on a tiny seeded model ({@link TinyLlamaFile}) and checks its logits
 * against {@link ReferenceLlama}, and its paths (prefill, decode, chunks, pages in any
 * order, thread counts) against each other.
 */
class LlamaModelTest {

	/**
	 * Logits agree with the double-precision reference within this much times (1 + the
	 * largest absolute logit): float32 activations, fused multiply-adds and a different
	 * summation order.
	 */
	static final double TOLERANCE = 2e-4;

	@TempDir
	static Path directory;

	static LlamaModel model;

	static ReferenceLlama reference;

	static Arena arena;

	@BeforeAll
	static void load() throws IOException {
		model = LlamaModel.load(new TinyLlamaFile().write(directory), 2);
		reference = new ReferenceLlama(model.file());
		arena = Arena.ofShared();
	}

	@AfterAll
	static void close() {
		model.close();
		arena.close();
	}

	static int[] tokens(long seed, int n) {
		Random random = new Random(seed);
		int[] tokens = new int[n];
		for (int i = 0; i < n; i++) {
			tokens[i] = random.nextInt(model.config().vocabulary());
		}
		return tokens;
	}

	static KvPages pages(int blockSize, int count) {
		return KvPages.allocate(arena, model.config(), blockSize, count);
	}

	static void assertClose(float[] actual, double[] expected, String what) {
		double scale = 1;
		double worst = 0;
		for (int i = 0; i < expected.length; i++) {
			scale = Math.max(scale, Math.abs(expected[i]));
			worst = Math.max(worst, Math.abs(actual[i] - expected[i]));
		}
		assertThat(actual).as(what).hasSameSizeAs(expected);
		assertThat(worst).as(what + ": largest difference (logits up to %.3f)", scale)
			.isLessThanOrEqualTo(TOLERANCE * (1 + scale));
	}

	static void assertClose(float[] actual, float[] expected, String what) {
		double[] wide = new double[expected.length];
		for (int i = 0; i < wide.length; i++) {
			wide[i] = expected[i];
		}
		assertClose(actual, wide, what);
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 5, 13, 30, 45 })
	void prefillMatchesTheReference(int length) {
		int[] tokens = tokens(length, length);
		double[][] expected = reference.logits(tokens);
		float[][] all = model.forwardAll(tokens, 0, pages(4, 12));
		for (int t = 0; t < length; t++) {
			assertClose(all[t], expected[t], "token " + t + " of " + length);
		}
		float[] last = model.forward(tokens, 0, pages(4, 12));
		assertClose(last, expected[length - 1], "forward's last token of " + length);
	}

	@Test
	void decodeMatchesTheReference() {
		int[] tokens = tokens(7, 21);
		double[][] expected = reference.logits(tokens);
		KvPages pages = pages(4, 6);
		for (int t = 0; t < tokens.length; t++) {
			float[] logits = model.forward(new int[] { tokens[t] }, t, pages);
			assertClose(logits, expected[t], "decoded token " + t);
		}
	}

	@Test
	void prefillThenGreedyDecodeMatchesForwardAllOfTheWholeSequence() {
		int prompt = 9;
		int generated = 20;
		int[] sequence = Arrays.copyOf(tokens(11, prompt), prompt + generated);
		KvPages pages = pages(4, 8);
		Sampler greedy = Sampler.greedy();
		List<float[]> decoded = new ArrayList<>();
		decoded.add(model.forward(Arrays.copyOf(sequence, prompt), 0, pages));
		for (int i = 0; i < generated; i++) {
			sequence[prompt + i] = greedy.next(decoded.get(i));
			if (i + 1 < generated) {
				decoded.add(model.forward(new int[] { sequence[prompt + i] }, prompt + i, pages));
			}
		}
		float[][] all = model.forwardAll(sequence, 0, pages(4, 8));
		for (int i = 0; i < generated; i++) {
			assertClose(decoded.get(i), all[prompt - 1 + i], "position " + (prompt - 1 + i));
			assertThat(greedy.next(all[prompt - 1 + i])).as("greedy id after position " + (prompt - 1 + i))
				.isEqualTo(sequence[prompt + i]);
		}
	}

	@Test
	void chunkedPrefillMatchesOnePrefill() {
		int[] tokens = tokens(3, 23);
		float[][] all = model.forwardAll(tokens, 0, pages(4, 6));
		KvPages pages = pages(4, 6);
		model.forward(Arrays.copyOfRange(tokens, 0, 6), 0, pages);
		float[][] second = model.forwardAll(Arrays.copyOfRange(tokens, 6, 15), 6, pages);
		float[] third = model.forward(Arrays.copyOfRange(tokens, 15, 23), 15, pages);
		for (int t = 6; t < 15; t++) {
			assertClose(second[t - 6], all[t], "chunk 2, token " + t);
		}
		assertClose(third, all[22], "chunk 3, last token");
	}

	@Test
	void scrambledPagesGiveTheSameLogitsBitForBit() {
		int[] tokens = tokens(5, 26);
		KvPages contiguous = pages(4, 8);
		KvPages scrambled = new ScrambledPages(arena, model.config(), 4, 8, 123);
		assertThat(model.forwardAll(Arrays.copyOf(tokens, 14), 0, scrambled))
			.isDeepEqualTo(model.forwardAll(Arrays.copyOf(tokens, 14), 0, contiguous));
		for (int t = 14; t < tokens.length; t++) {
			float[] expected = model.forward(new int[] { tokens[t] }, t, contiguous);
			assertThat(model.forward(new int[] { tokens[t] }, t, scrambled)).as("token " + t).isEqualTo(expected);
		}
	}

	@Test
	void threadCountsGiveTheSameLogitsBitForBit() throws IOException {
		int[] tokens = tokens(9, 17);
		try (LlamaModel one = LlamaModel.load(model.file().path(), 1);
				LlamaModel three = LlamaModel.load(model.file().path(), 3)) {
			assertThat(three.forwardAll(tokens, 0, pages(4, 5))).isDeepEqualTo(one.forwardAll(tokens, 0, pages(4, 5)));
			KvPages a = pages(4, 5);
			KvPages b = pages(4, 5);
			for (int t = 0; t < tokens.length; t++) {
				assertThat(three.forward(new int[] { tokens[t] }, t, b))
					.isEqualTo(one.forward(new int[] { tokens[t] }, t, a));
			}
		}
	}

	/**
	 * Pages whose page {@code i} is an arbitrary block of a bigger arena: keys and values
	 * of each layer and page in blocks drawn at random.
	 */
	static final class ScrambledPages implements KvPages {

		private final MemorySegment all;

		private final int blockSize;

		private final int pages;

		private final int layers;

		private final long blockBytes;

		private final int[] blocks;

		ScrambledPages(Arena arena, LlamaConfig config, int blockSize, int pages, long seed) {
			this.blockSize = blockSize;
			this.pages = pages;
			this.layers = config.layers();
			this.blockBytes = 4L * blockSize * config.kvDim();
			int count = 2 * this.layers * pages;
			List<Integer> order = new ArrayList<>();
			for (int i = 0; i < 3 * count; i++) {
				order.add(i);
			}
			Collections.shuffle(order, new Random(seed));
			this.blocks = order.subList(0, count).stream().mapToInt(Integer::intValue).toArray();
			this.all = arena.allocate(this.blockBytes * 3 * count);
			// Garbage where the pages are: the engine must not read positions it has not
			// written.
			for (long i = 0; i < this.all.byteSize() / 4; i++) {
				this.all.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i, 1e30f);
			}
		}

		@Override
		public int blockSize() {
			return this.blockSize;
		}

		@Override
		public int capacity() {
			return this.blockSize * this.pages;
		}

		@Override
		public MemorySegment keys(int layer, int page) {
			return block(layer, page, 0);
		}

		@Override
		public MemorySegment values(int layer, int page) {
			return block(layer, page, 1);
		}

		private MemorySegment block(int layer, int page, int kind) {
			int index = (java.util.Objects.checkIndex(layer, this.layers) * this.pages
					+ java.util.Objects.checkIndex(page, this.pages)) * 2 + kind;
			return this.all.asSlice(this.blocks[index] * this.blockBytes, this.blockBytes);
		}

	}

}
