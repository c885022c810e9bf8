package dev.nixl4j.sample.model;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveAction;

/**
 * A llama model run on the CPU with the Vector API: its weights stay quantized in the
 * memory-mapped GGUF file and the kernels dequantize them on the fly; activations are
 * float32. A fixed pool of platform threads, owned by the model, runs the products in
 * parallel over rows and the attention over heads. Keys and values live in
 * {@link KvPages} that the caller provides.
 * <p>
 * Calls may run concurrently as long as they write different pages; each call takes its
 * scratch memory of its own. The Vector API is an incubator module: the JVM needs
 * {@code --add-modules jdk.incubator.vector}.
 */
public final class LlamaModel implements AutoCloseable {

	/** The most threads a model may use. */
	public static final int MAX_THREADS = 256;

	/** Tokens whose logits {@link #forwardAll} computes at a time. */
	private static final int LOGIT_CHUNK = 32;

	private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;

	private final GgufFile file;

	private final LlamaConfig config;

	private final int threads;

	private final ForkJoinPool pool;

	private final Matrix embedding;

	private final Matrix head;

	private final float[] outputNorm;

	private final Layer[] layers;

	private final double[] inverseFrequencies;

	private volatile boolean closed;

	/** An unstarted thread: pages must be accessible by threads other than the caller. */
	private final Thread otherThread = new Thread(() -> {
	});

	private record Layer(float[] attentionNorm, Matrix[] qkv, Matrix output, float[] ffnNorm, Matrix[] gateUp,
			Matrix down) {
	}

	private LlamaModel(GgufFile file, int threads) {
		this.file = file;
		this.config = LlamaConfig.from(file);
		this.threads = threads;
		this.embedding = Matrix.of(file, "token_embd.weight");
		this.head = file.findTensor("output.weight").isPresent() ? Matrix.of(file, "output.weight") : this.embedding;
		this.outputNorm = norm(file, "output_norm.weight");
		this.layers = new Layer[this.config.layers()];
		for (int i = 0; i < this.layers.length; i++) {
			String p = "blk." + i + ".";
			this.layers[i] = new Layer(norm(file, p + "attn_norm.weight"),
					new Matrix[] { Matrix.of(file, p + "attn_q.weight"), Matrix.of(file, p + "attn_k.weight"),
							Matrix.of(file, p + "attn_v.weight") },
					Matrix.of(file, p + "attn_output.weight"), norm(file, p + "ffn_norm.weight"),
					new Matrix[] { Matrix.of(file, p + "ffn_gate.weight"), Matrix.of(file, p + "ffn_up.weight") },
					Matrix.of(file, p + "ffn_down.weight"));
		}
		int headDim = this.config.headDim();
		this.inverseFrequencies = new double[headDim / 2];
		for (int i = 0; i < headDim / 2; i++) {
			this.inverseFrequencies[i] = Math.pow(this.config.ropeBase(), -2.0 * i / headDim);
		}
		this.pool = new ForkJoinPool(threads);
	}

	private static float[] norm(GgufFile file, String name) {
		GgufTensorInfo t = file.tensor(name);
		float[] values = new float[(int) t.rowLength()];
		Dequantize.values(t.type(), file.tensorData(t), values, 0, values.length);
		return values;
	}

	/**
	 * Loads a model with as many threads as there are available processors.
	 * @param gguf the GGUF file
	 * @return the model, which owns the opened file
	 * @throws IOException if the file cannot be read
	 * @throws GgufFormatException if it is not a well-formed GGUF file
	 * @throws ModelShapeException if it is not a llama model the engine can run
	 */
	public static LlamaModel load(Path gguf) throws IOException {
		return load(gguf, Math.min(MAX_THREADS, Runtime.getRuntime().availableProcessors()));
	}

	/**
	 * Loads a model.
	 * @param gguf the GGUF file
	 * @param threads the number of threads, 1 to {@link #MAX_THREADS}
	 * @return the model, which owns the opened file
	 * @throws IOException if the file cannot be read
	 * @throws IllegalArgumentException if {@code threads} is out of range
	 * @throws GgufFormatException if it is not a well-formed GGUF file
	 * @throws ModelShapeException if it is not a llama model the engine can run
	 */
	public static LlamaModel load(Path gguf, int threads) throws IOException {
		if (threads < 1 || threads > MAX_THREADS) {
			throw new IllegalArgumentException("threads is " + threads + ", not in 1.." + MAX_THREADS);
		}
		GgufFile file = GgufFile.open(gguf);
		try {
			return new LlamaModel(file, threads);
		}
		catch (RuntimeException | Error ex) {
			file.close();
			throw ex;
		}
	}

	/**
	 * Returns the model's hyper-parameters.
	 * @return the config
	 */
	public LlamaConfig config() {
		return this.config;
	}

	/**
	 * Returns the model's file (closed with the model).
	 * @return the file
	 */
	public GgufFile file() {
		return this.file;
	}

	/**
	 * Returns the number of threads the model computes with.
	 * @return the threads
	 */
	public int threads() {
		return this.threads;
	}

	/**
	 * Runs tokens at positions {@code [startPos, startPos + tokens.length)} through the
	 * model, writing their keys and values into {@code pages} (the keys and values of the
	 * earlier positions must already be there), and returns the logits of the last token.
	 * Several tokens are run as matrix-matrix products (prefill), one token as
	 * matrix-vector products (decode).
	 * @param tokens the token ids, at least one
	 * @param startPos the position of the first token
	 * @param pages where the keys and values live
	 * @return the logits of the last token ({@link LlamaConfig#vocabulary()} values)
	 * @throws IllegalArgumentException if a token id is out of range, the positions
	 * exceed the pages' capacity or the context, or a page has the wrong size or is
	 * read-only or confined to a thread
	 * @throws IllegalStateException if the model is closed
	 */
	public float[] forward(int[] tokens, int startPos, KvPages pages) {
		float[][] logits = run(tokens, startPos, pages, false);
		return logits[0];
	}

	/**
	 * Runs tokens like {@link #forward} but returns the logits of every token.
	 * @param tokens the token ids, at least one
	 * @param startPos the position of the first token
	 * @param pages where the keys and values live
	 * @return the logits, {@code [tokens.length][vocabulary]}
	 * @throws IllegalArgumentException if a token id is out of range, the positions
	 * exceed the pages' capacity or the context, or a page has the wrong size or is
	 * read-only or confined to a thread
	 * @throws IllegalStateException if the model is closed
	 */
	public float[][] forwardAll(int[] tokens, int startPos, KvPages pages) {
		return run(tokens, startPos, pages, true);
	}

	/**
	 * Shuts the thread pool down and unmaps the file.
	 */
	@Override
	public void close() {
		this.closed = true;
		this.pool.shutdown();
		this.file.close();
	}

	private float[][] run(int[] tokens, int startPos, KvPages pages, boolean all) {
		Objects.requireNonNull(tokens, "tokens");
		Objects.requireNonNull(pages, "pages");
		if (this.closed) {
			throw new IllegalStateException("the model is closed");
		}
		int n = tokens.length;
		if (n == 0) {
			throw new IllegalArgumentException("no tokens");
		}
		for (int i = 0; i < n; i++) {
			if (tokens[i] < 0 || tokens[i] >= this.config.vocabulary()) {
				throw new IllegalArgumentException(
						"token " + tokens[i] + " at index " + i + " is not in 0.." + (this.config.vocabulary() - 1));
			}
		}
		int blockSize = pages.blockSize();
		int capacity = pages.capacity();
		if (blockSize < 1 || capacity < 0) {
			throw new IllegalArgumentException(
					"pages have a block size of " + blockSize + " and a capacity of " + capacity);
		}
		if (startPos < 0 || (long) startPos + n > capacity || (long) startPos + n > this.config.context()) {
			throw new IllegalArgumentException("positions " + startPos + ".." + ((long) startPos + n - 1)
					+ " do not fit the pages' capacity " + capacity + " and the context " + this.config.context());
		}
		Pass pass = new Pass(tokens, startPos, pageSegments(pages, blockSize, (startPos + n - 1) / blockSize + 1),
				blockSize, all);
		return this.pool.invoke(ForkJoinTask.adapt(pass::run));
	}

	private MemorySegment[][][] pageSegments(KvPages pages, int blockSize, int count) {
		long bytes = 4L * blockSize * this.config.kvDim();
		MemorySegment[][][] result = new MemorySegment[2][this.layers.length][count];
		for (int l = 0; l < this.layers.length; l++) {
			for (int p = 0; p < count; p++) {
				result[0][l][p] = check(pages.keys(l, p), "keys", l, p, bytes);
				result[1][l][p] = check(pages.values(l, p), "values", l, p, bytes);
			}
		}
		return result;
	}

	private MemorySegment check(MemorySegment segment, String what, int layer, int page, long bytes) {
		if (segment == null || segment.byteSize() != bytes || segment.isReadOnly()) {
			throw new IllegalArgumentException("pages." + what + "(" + layer + ", " + page + ") is "
					+ ((segment == null) ? "null"
							: segment.byteSize() + " bytes" + (segment.isReadOnly() ? ", read-only" : ""))
					+ "; a page takes " + bytes + " writable bytes");
		}
		if (!segment.isAccessibleBy(this.otherThread)) {
			throw new IllegalArgumentException("pages." + what + "(" + layer + ", " + page
					+ ") is confined to a thread; the model's threads need pages of a shared, auto or global arena");
		}
		return segment;
	}

	/** One forward pass over a run of tokens; {@link #run} runs in the model's pool. */
	private final class Pass {

		private final int[] tokens;

		private final int start;

		private final MemorySegment[][] keys;

		private final MemorySegment[][] values;

		private final int blockSize;

		private final boolean all;

		Pass(int[] tokens, int start, MemorySegment[][][] pages, int blockSize, boolean all) {
			this.tokens = tokens;
			this.start = start;
			this.keys = pages[0];
			this.values = pages[1];
			this.blockSize = blockSize;
			this.all = all;
		}

		float[][] run() {
			LlamaConfig c = LlamaModel.this.config;
			int n = this.tokens.length;
			int e = c.embedding();
			int kvDim = c.kvDim();
			float[] x = new float[n * e];
			float[] row = new float[e];
			for (int t = 0; t < n; t++) {
				LlamaModel.this.embedding.dequantize(this.tokens[t], row);
				System.arraycopy(row, 0, x, t * e, e);
			}
			float[][] rope = rope(n);
			float[] h = new float[n * e];
			float[] q = new float[n * e];
			float[] k = new float[n * kvDim];
			float[] v = new float[n * kvDim];
			float[] attention = new float[n * e];
			float[] out = new float[n * e];
			float[] gate = new float[n * c.feedForward()];
			float[] up = new float[n * c.feedForward()];
			for (int l = 0; l < LlamaModel.this.layers.length; l++) {
				Layer layer = LlamaModel.this.layers[l];
				rmsNorm(x, layer.attentionNorm(), h, n);
				matmul(layer.qkv(), h, n, new float[][] { q, k, v });
				for (int t = 0; t < n; t++) {
					rotate(q, t * e, c.heads(), rope[t]);
					rotate(k, t * kvDim, c.kvHeads(), rope[t]);
					store(l, t, k, v);
				}
				attend(l, q, attention, n);
				matmul(new Matrix[] { layer.output() }, attention, n, new float[][] { out });
				add(x, out);
				rmsNorm(x, layer.ffnNorm(), h, n);
				matmul(layer.gateUp(), h, n, new float[][] { gate, up });
				for (int i = 0; i < gate.length; i++) {
					float g = gate[i];
					gate[i] = g / (1 + (float) Math.exp(-g)) * up[i];
				}
				matmul(new Matrix[] { layer.down() }, gate, n, new float[][] { out });
				add(x, out);
			}
			int vocabulary = c.vocabulary();
			if (!this.all) {
				float[] last = new float[e];
				System.arraycopy(x, (n - 1) * e, last, 0, e);
				rmsNorm(last, LlamaModel.this.outputNorm, last, 1);
				float[] logits = new float[vocabulary];
				matmul(new Matrix[] { LlamaModel.this.head }, last, 1, new float[][] { logits });
				return new float[][] { logits };
			}
			rmsNorm(x, LlamaModel.this.outputNorm, h, n);
			// The logits of a few tokens at a time: the flat buffer stays small.
			float[][] result = new float[n][];
			int chunk = Math.min(n, LOGIT_CHUNK);
			float[] logits = new float[chunk * vocabulary];
			float[] in = new float[chunk * e];
			for (int first = 0; first < n; first += chunk) {
				int count = Math.min(chunk, n - first);
				System.arraycopy(h, first * e, in, 0, count * e);
				matmul(new Matrix[] { LlamaModel.this.head }, in, count, new float[][] { logits });
				for (int t = 0; t < count; t++) {
					result[first + t] = Arrays.copyOfRange(logits, t * vocabulary, (t + 1) * vocabulary);
				}
			}
			return result;
		}

		/** Per token, cos and sin of each pair's angle, interleaved. */
		private float[][] rope(int n) {
			double[] frequencies = LlamaModel.this.inverseFrequencies;
			float[][] result = new float[n][2 * frequencies.length];
			for (int t = 0; t < n; t++) {
				long pos = this.start + t;
				for (int i = 0; i < frequencies.length; i++) {
					double angle = pos * frequencies[i];
					result[t][2 * i] = (float) Math.cos(angle);
					result[t][2 * i + 1] = (float) Math.sin(angle);
				}
			}
			return result;
		}

		private void rotate(float[] values, int offset, int heads, float[] cosSin) {
			int headDim = LlamaModel.this.config.headDim();
			for (int hd = 0; hd < heads; hd++) {
				int base = offset + hd * headDim;
				for (int i = 0; i < headDim / 2; i++) {
					float cos = cosSin[2 * i];
					float sin = cosSin[2 * i + 1];
					float a = values[base + 2 * i];
					float b = values[base + 2 * i + 1];
					values[base + 2 * i] = a * cos - b * sin;
					values[base + 2 * i + 1] = a * sin + b * cos;
				}
			}
		}

		private void store(int layer, int t, float[] k, float[] v) {
			LlamaConfig c = LlamaModel.this.config;
			int headDim = c.headDim();
			int pos = this.start + t;
			int page = pos / this.blockSize;
			int slot = pos % this.blockSize;
			for (int g = 0; g < c.kvHeads(); g++) {
				long offset = 4L * ((long) g * this.blockSize + slot) * headDim;
				int from = t * c.kvDim() + g * headDim;
				MemorySegment.copy(k, from, this.keys[layer][page], FLOAT, offset, headDim);
				MemorySegment.copy(v, from, this.values[layer][page], FLOAT, offset, headDim);
			}
		}

		/** Causal grouped-query attention of every token and head, in parallel. */
		private void attend(int layer, float[] q, float[] out, int n) {
			LlamaConfig c = LlamaModel.this.config;
			int heads = c.heads();
			int headDim = c.headDim();
			int group = heads / c.kvHeads();
			float scale = (float) (1 / Math.sqrt(headDim));
			MemorySegment[] keys = this.keys[layer];
			MemorySegment[] values = this.values[layer];
			// Short contexts: one thread, cheaper than a hand-off.
			long work = (long) n * heads * (this.start + n);
			parallel(n * heads, (work < 2048) ? 1 : n * heads, (from, to) -> {
				float[] scores = new float[this.start + n];
				for (int item = from; item < to; item++) {
					int t = item / heads;
					int hd = item % heads;
					int g = hd / group;
					int positions = this.start + t + 1;
					int qOffset = t * c.embedding() + hd * headDim;
					long headBase = 4L * g * this.blockSize * headDim;
					long slotBytes = 4L * headDim;
					float max = Float.NEGATIVE_INFINITY;
					for (int page = 0, s = 0; s < positions; page++) {
						MemorySegment block = keys[page];
						int end = Math.min(positions, s + this.blockSize);
						for (long offset = headBase; s < end; s++, offset += slotBytes) {
							float score = Kernels.dot(q, qOffset, block, offset, headDim) * scale;
							scores[s] = score;
							max = Math.max(max, score);
						}
					}
					float sum = 0;
					for (int s = 0; s < positions; s++) {
						float p = (float) Math.exp(scores[s] - max);
						scores[s] = p;
						sum += p;
					}
					float inverse = 1 / sum;
					for (int s = 0; s < positions; s++) {
						scores[s] *= inverse;
					}
					Arrays.fill(out, qOffset, qOffset + headDim, 0f);
					for (int page = 0, s = 0; s < positions; page++, s += this.blockSize) {
						int count = Math.min(this.blockSize, positions - s);
						Kernels.addWeighted(out, qOffset, scores, s, count, values[page], headBase, slotBytes, headDim);
					}
				}
			});
		}

	}

	private void rmsNorm(float[] x, float[] weight, float[] out, int n) {
		int e = weight.length;
		for (int t = 0; t < n; t++) {
			int o = t * e;
			float mean = Kernels.dot(x, o, x, o, e) / e;
			float inverse = (float) (1 / Math.sqrt(mean + this.config.rmsEpsilon()));
			for (int i = 0; i < e; i++) {
				out[o + i] = x[o + i] * inverse * weight[i];
			}
		}
	}

	private static void add(float[] x, float[] y) {
		for (int i = 0; i < x.length; i++) {
			x[i] += y[i];
		}
	}

	/**
	 * Computes {@code outs[m][t * rows + r] = matrices[m] row r . in[t * columns ..]} for
	 * the {@code n} tokens, in parallel over all the matrices' rows (which share their
	 * column count).
	 */
	private void matmul(Matrix[] matrices, float[] in, int n, float[][] outs) {
		int columns = matrices[0].columns();
		int[] ends = new int[matrices.length];
		int total = 0;
		for (int m = 0; m < matrices.length; m++) {
			total += matrices[m].rows();
			ends[m] = total;
		}
		float[] sums = new float[columns / 32];
		if (n == 1) {
			Kernels.blockSums(in, 0, columns, sums);
		}
		parallel(total, total, (from, to) -> {
			float[] row = (n == 1) ? sums : new float[columns];
			int m = 0;
			for (int r = from; r < to; r++) {
				while (r >= ends[m]) {
					m++;
				}
				Matrix matrix = matrices[m];
				int local = r - ((m == 0) ? 0 : ends[m - 1]);
				if (n == 1) {
					outs[m][local] = matrix.dot(local, in, 0, sums);
				}
				else {
					matrix.dequantize(local, row);
					Kernels.tile(row, columns, in, 0, n, outs[m], matrix.rows(), local);
				}
			}
		});
	}

	/** A body run over a range of indices. */
	@FunctionalInterface
	private interface RangeBody {

		void run(int from, int to);

	}

	/**
	 * Runs {@code body} over {@code [0, count)} split into at most {@code maxChunks}
	 * chunks on the pool.
	 */
	private void parallel(int count, int maxChunks, RangeBody body) {
		int chunks = Math.min(Math.min(count, maxChunks), this.threads * 2);
		if (chunks <= 1 || this.threads == 1) {
			body.run(0, count);
			return;
		}
		new Range(body, count, chunks, 0, chunks).invoke();
	}

	private static final class Range extends RecursiveAction {

		private static final long serialVersionUID = 1L;

		private final transient RangeBody body;

		private final int count;

		private final int chunks;

		private final int first;

		private final int last;

		Range(RangeBody body, int count, int chunks, int first, int last) {
			this.body = body;
			this.count = count;
			this.chunks = chunks;
			this.first = first;
			this.last = last;
		}

		@Override
		protected void compute() {
			if (this.last - this.first == 1) {
				int from = (int) ((long) this.count * this.first / this.chunks);
				int to = (int) ((long) this.count * this.last / this.chunks);
				this.body.run(from, to);
				return;
			}
			int middle = (this.first + this.last) >>> 1;
			invokeAll(new Range(this.body, this.count, this.chunks, this.first, middle),
					new Range(this.body, this.count, this.chunks, middle, this.last));
		}

	}

}
