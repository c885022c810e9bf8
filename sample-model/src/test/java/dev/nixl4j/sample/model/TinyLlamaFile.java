package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Writes a tiny llama model as a GGUF file: seeded random weights, Q4_1 matrices, a Q8_0
 * token embedding (tied as the output head), F32 norms and the {@code llama.*} keys.
 * Tests change its fields before {@link #write(Path)} to make a model the engine must
 * refuse: a key left out or changed, a tensor left out, or written with other dimensions.
 */
final class TinyLlamaFile {

	int layers = 2;

	int embedding = 64;

	int feedForward = 96;

	int heads = 4;

	int kvHeads = 2;

	int vocabulary = 300;

	int context = 64;

	float ropeBase = 10_000f;

	float rmsEpsilon = 1e-5f;

	long seed = 42;

	/** Keys not written. */
	final Set<String> omitKeys = new HashSet<>();

	/** Integer keys written with another value. */
	final Map<String, Long> keyValues = new HashMap<>();

	/** Tensors not written. */
	final Set<String> omitTensors = new HashSet<>();

	/** Tensors written with other dimensions (and as many values). */
	final Map<String, long[]> tensorDimensions = new HashMap<>();

	/** Writes the model into {@code directory} and returns its path. */
	Path write(Path directory) throws IOException {
		Random random = new Random(this.seed);
		GgufWriter w = new GgufWriter();
		w.kv("general.architecture", (b) -> b.u32(8).str("llama"));
		Map<String, Long> ints = new LinkedHashMap<>();
		ints.put("llama.block_count", (long) this.layers);
		ints.put("llama.context_length", (long) this.context);
		ints.put("llama.embedding_length", (long) this.embedding);
		ints.put("llama.feed_forward_length", (long) this.feedForward);
		ints.put("llama.attention.head_count", (long) this.heads);
		ints.put("llama.attention.head_count_kv", (long) this.kvHeads);
		ints.put("llama.vocab_size", (long) this.vocabulary);
		ints.put("llama.rope.dimension_count", (long) (this.embedding / this.heads));
		ints.putAll(this.keyValues);
		ints.forEach((key, value) -> {
			if (!this.omitKeys.contains(key)) {
				w.kv(key, (b) -> b.u32(4).u32(value));
			}
		});
		if (!this.omitKeys.contains("llama.rope.freq_base")) {
			w.kv("llama.rope.freq_base", (b) -> b.u32(6).f32(this.ropeBase));
		}
		if (!this.omitKeys.contains("llama.attention.layer_norm_rms_epsilon")) {
			w.kv("llama.attention.layer_norm_rms_epsilon", (b) -> b.u32(6).f32(this.rmsEpsilon));
		}
		int e = this.embedding;
		int kvDim = this.kvHeads * (e / this.heads);
		matrix(w, random, "token_embd.weight", GgmlType.Q8_0, e, this.vocabulary, 1.0);
		norm(w, random, "output_norm.weight", e);
		for (int i = 0; i < this.layers; i++) {
			String p = "blk." + i + ".";
			norm(w, random, p + "attn_norm.weight", e);
			matrix(w, random, p + "attn_q.weight", GgmlType.Q4_1, e, e, 1 / Math.sqrt(e));
			matrix(w, random, p + "attn_k.weight", GgmlType.Q4_1, e, kvDim, 1 / Math.sqrt(e));
			matrix(w, random, p + "attn_v.weight", GgmlType.Q4_1, e, kvDim, 1 / Math.sqrt(e));
			matrix(w, random, p + "attn_output.weight", GgmlType.Q4_1, e, e, 1 / Math.sqrt(e));
			norm(w, random, p + "ffn_norm.weight", e);
			matrix(w, random, p + "ffn_gate.weight", GgmlType.Q4_1, e, this.feedForward, 1 / Math.sqrt(e));
			matrix(w, random, p + "ffn_up.weight", GgmlType.Q4_1, e, this.feedForward, 1 / Math.sqrt(e));
			matrix(w, random, p + "ffn_down.weight", GgmlType.Q4_1, this.feedForward, e,
					1 / Math.sqrt(this.feedForward));
		}
		Path path = Files.createTempFile(directory, "tiny-llama", ".gguf");
		Files.write(path, w.write());
		return path;
	}

	private void matrix(GgufWriter w, Random random, String name, GgmlType type, int columns, int rows, double scale) {
		float[] values = new float[columns * rows];
		for (int i = 0; i < values.length; i++) {
			values[i] = (float) (random.nextGaussian() * scale);
		}
		byte[] bytes = (type == GgmlType.Q4_1) ? quantizeQ41(values) : quantizeQ80(values);
		add(w, name, type, new long[] { columns, rows }, bytes);
	}

	private void norm(GgufWriter w, Random random, String name, int length) {
		ByteBuffer bytes = ByteBuffer.allocate(4 * length).order(ByteOrder.LITTLE_ENDIAN);
		for (int i = 0; i < length; i++) {
			bytes.putFloat((float) (1 + 0.2 * random.nextGaussian()));
		}
		add(w, name, GgmlType.F32, new long[] { length }, bytes.array());
	}

	private void add(GgufWriter w, String name, GgmlType type, long[] dimensions, byte[] bytes) {
		if (!this.omitTensors.contains(name)) {
			w.tensor(name, type, this.tensorDimensions.getOrDefault(name, dimensions), bytes);
		}
	}

	/** Q4_1 of values, per block of 32: d = (max - min) / 15, m = min. */
	static byte[] quantizeQ41(float[] values) {
		ByteBuffer out = ByteBuffer.allocate(values.length / 32 * 20).order(ByteOrder.LITTLE_ENDIAN);
		for (int b = 0; b < values.length / 32; b++) {
			float min = Float.POSITIVE_INFINITY;
			float max = Float.NEGATIVE_INFINITY;
			for (int j = 0; j < 32; j++) {
				min = Math.min(min, values[32 * b + j]);
				max = Math.max(max, values[32 * b + j]);
			}
			short d = Float.floatToFloat16((max - min) / 15);
			short m = Float.floatToFloat16(min);
			float dd = Float.float16ToFloat(d);
			float mm = Float.float16ToFloat(m);
			out.putShort(d).putShort(m);
			int[] q = new int[32];
			for (int j = 0; j < 32; j++) {
				q[j] = (dd == 0) ? 0 : Math.clamp(Math.round((values[32 * b + j] - mm) / dd), 0, 15);
			}
			for (int j = 0; j < 16; j++) {
				out.put((byte) (q[j] | (q[j + 16] << 4)));
			}
		}
		return out.array();
	}

	/** Q8_0 of values, per block of 32: d = max |x| / 127. */
	static byte[] quantizeQ80(float[] values) {
		ByteBuffer out = ByteBuffer.allocate(values.length / 32 * 34).order(ByteOrder.LITTLE_ENDIAN);
		for (int b = 0; b < values.length / 32; b++) {
			float amax = 0;
			for (int j = 0; j < 32; j++) {
				amax = Math.max(amax, Math.abs(values[32 * b + j]));
			}
			short d = Float.floatToFloat16(amax / 127);
			float dd = Float.float16ToFloat(d);
			out.putShort(d);
			for (int j = 0; j < 32; j++) {
				out.put((byte) ((dd == 0) ? 0 : Math.clamp(Math.round(values[32 * b + j] / dd), -127, 127)));
			}
		}
		return out.array();
	}

}
