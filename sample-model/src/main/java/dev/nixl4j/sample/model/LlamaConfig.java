package dev.nixl4j.sample.model;

import java.util.Arrays;

/**
 * Hyper-parameters of a llama model, read from GGUF metadata ({@code llama.*} keys) and
 * checked against the tensors' shapes and types.
 *
 * @param layers the number of transformer blocks ({@code llama.block_count})
 * @param embedding the width of the residual stream ({@code llama.embedding_length})
 * @param feedForward the width of the feed-forward layer
 * ({@code llama.feed_forward_length})
 * @param heads the number of query heads ({@code llama.attention.head_count})
 * @param kvHeads the number of key/value heads ({@code llama.attention.head_count_kv})
 * @param headDim the width of one head: {@code embedding / heads}
 * @param vocabulary the number of tokens: the rows of {@code token_embd.weight}
 * @param context the longest sequence ({@code llama.context_length})
 * @param ropeBase the base of the rotary embedding's frequencies
 * ({@code llama.rope.freq_base}, 10,000 when absent)
 * @param rmsEpsilon the epsilon of RMS normalization
 * ({@code llama.attention.layer_norm_rms_epsilon})
 */
public record LlamaConfig(int layers, int embedding, int feedForward, int heads, int kvHeads, int headDim,
		int vocabulary, int context, float ropeBase, float rmsEpsilon) {

	/** The most blocks, heads, and the widest layer a config may name. */
	static final int MAX_LAYERS = 1024;

	static final int MAX_WIDTH = 1 << 16;

	static final int MAX_CONTEXT = 1 << 20;

	static final int MAX_VOCABULARY = 1 << 22;

	/**
	 * Checks the values.
	 * @throws IllegalArgumentException if a count is not positive or out of range, the
	 * heads do not divide the embedding, the KV heads do not divide the heads, the head
	 * width is odd, or a float is not positive and finite
	 */
	public LlamaConfig {
		check("layers", layers, MAX_LAYERS);
		check("embedding", embedding, MAX_WIDTH);
		check("feedForward", feedForward, MAX_WIDTH);
		check("heads", heads, MAX_WIDTH);
		check("kvHeads", kvHeads, MAX_WIDTH);
		check("headDim", headDim, MAX_WIDTH);
		check("vocabulary", vocabulary, MAX_VOCABULARY);
		check("context", context, MAX_CONTEXT);
		if (embedding % 32 != 0 || feedForward % 32 != 0) {
			throw new IllegalArgumentException("embedding " + embedding + " and feedForward " + feedForward
					+ " must be multiples of 32 (the quantization block)");
		}
		if ((long) heads * headDim != embedding) {
			throw new IllegalArgumentException(
					heads + " heads of " + headDim + " do not make the embedding " + embedding);
		}
		if (heads % kvHeads != 0) {
			throw new IllegalArgumentException(kvHeads + " KV heads do not divide " + heads + " heads");
		}
		if (headDim % 2 != 0) {
			throw new IllegalArgumentException("headDim " + headDim + " is odd: RoPE rotates pairs");
		}
		if (!(ropeBase > 0) || !Float.isFinite(ropeBase) || !(rmsEpsilon > 0) || !Float.isFinite(rmsEpsilon)) {
			throw new IllegalArgumentException(
					"ropeBase " + ropeBase + " and rmsEpsilon " + rmsEpsilon + " must be positive and finite");
		}
	}

	private static void check(String name, int value, int max) {
		if (value <= 0 || value > max) {
			throw new IllegalArgumentException(name + " is " + value + ", not in 1.." + max);
		}
	}

	/**
	 * Returns the width of the keys (and values) of one token: {@code kvHeads * headDim}.
	 * @return the KV width
	 */
	public int kvDim() {
		return this.kvHeads * this.headDim;
	}

	/**
	 * Reads the config of a llama GGUF file and checks every tensor the engine uses:
	 * {@code token_embd.weight} (Q8_0 or Q4_1, {@code [embedding, vocabulary]}),
	 * {@code output_norm.weight}, and per block {@code blk.N.attn_norm}, {@code attn_q},
	 * {@code attn_k}, {@code attn_v}, {@code attn_output}, {@code ffn_norm},
	 * {@code ffn_gate}, {@code ffn_up}, {@code ffn_down} ({@code .weight}; norms F32,
	 * matrices Q4_1 or Q8_0; dimensions inner first). An {@code output.weight}, if
	 * present, is checked like {@code token_embd.weight}.
	 * @param file the file
	 * @return the config
	 * @throws ModelShapeException naming the key or tensor that is missing, mistyped or
	 * of the wrong shape
	 */
	public static LlamaConfig from(GgufFile file) {
		GgufMetadata m = file.metadata();
		if (m.contains("general.architecture")) {
			String architecture = string(m, "general.architecture");
			if (!"llama".equals(architecture)) {
				throw new ModelShapeException(
						"metadata key 'general.architecture' is '" + architecture + "', not 'llama'");
			}
		}
		int layers = integer(m, "llama.block_count", MAX_LAYERS);
		int embedding = integer(m, "llama.embedding_length", MAX_WIDTH);
		int feedForward = integer(m, "llama.feed_forward_length", MAX_WIDTH);
		int heads = integer(m, "llama.attention.head_count", MAX_WIDTH);
		int kvHeads = integer(m, "llama.attention.head_count_kv", MAX_WIDTH);
		int context = integer(m, "llama.context_length", MAX_CONTEXT);
		if (embedding % heads != 0) {
			throw new ModelShapeException("metadata key 'llama.attention.head_count': " + heads
					+ " heads do not divide llama.embedding_length " + embedding);
		}
		if (heads % kvHeads != 0) {
			throw new ModelShapeException("metadata key 'llama.attention.head_count_kv': " + kvHeads
					+ " KV heads do not divide llama.attention.head_count " + heads);
		}
		int headDim = embedding / heads;
		if (headDim % 2 != 0) {
			throw new ModelShapeException("metadata keys 'llama.embedding_length' / 'llama.attention.head_count': "
					+ "the head width " + headDim + " is odd");
		}
		if (embedding % 32 != 0 || feedForward % 32 != 0) {
			throw new ModelShapeException("metadata keys 'llama.embedding_length' (" + embedding
					+ ") and 'llama.feed_forward_length' (" + feedForward + ") must be multiples of 32");
		}
		for (String key : new String[] { "llama.rope.dimension_count", "llama.attention.key_length",
				"llama.attention.value_length" }) {
			if (m.contains(key) && integer(m, key, MAX_WIDTH) != headDim) {
				throw new ModelShapeException("metadata key '" + key + "' is " + m.getLong(key)
						+ ", the engine needs the head width " + headDim);
			}
		}
		float ropeBase = m.contains("llama.rope.freq_base") ? positive(m, "llama.rope.freq_base") : 10_000f;
		float rmsEpsilon = positive(m, "llama.attention.layer_norm_rms_epsilon");

		GgufTensorInfo embd = tensor(file, "token_embd.weight");
		if (embd.dimensions().length != 2 || embd.dimensions()[0] != embedding || embd.dimensions()[1] < 1
				|| embd.dimensions()[1] > MAX_VOCABULARY) {
			throw new ModelShapeException("tensor 'token_embd.weight' has dimensions "
					+ Arrays.toString(embd.dimensions()) + ", not [" + embedding + ", vocabulary]");
		}
		int vocabulary = (int) embd.dimensions()[1];
		if (m.contains("llama.vocab_size") && integer(m, "llama.vocab_size", MAX_VOCABULARY) != vocabulary) {
			throw new ModelShapeException("metadata key 'llama.vocab_size' is " + m.getLong("llama.vocab_size")
					+ ", tensor 'token_embd.weight' has " + vocabulary + " rows");
		}
		matrix(embd, embedding, vocabulary);
		if (file.findTensor("output.weight").isPresent()) {
			matrix(file.tensor("output.weight"), embedding, vocabulary);
		}
		norm(tensor(file, "output_norm.weight"), embedding);
		int kvDim = kvHeads * headDim;
		for (int i = 0; i < layers; i++) {
			String p = "blk." + i + ".";
			norm(tensor(file, p + "attn_norm.weight"), embedding);
			matrix(tensor(file, p + "attn_q.weight"), embedding, embedding);
			matrix(tensor(file, p + "attn_k.weight"), embedding, kvDim);
			matrix(tensor(file, p + "attn_v.weight"), embedding, kvDim);
			matrix(tensor(file, p + "attn_output.weight"), embedding, embedding);
			norm(tensor(file, p + "ffn_norm.weight"), embedding);
			matrix(tensor(file, p + "ffn_gate.weight"), embedding, feedForward);
			matrix(tensor(file, p + "ffn_up.weight"), embedding, feedForward);
			matrix(tensor(file, p + "ffn_down.weight"), feedForward, embedding);
		}
		try {
			return new LlamaConfig(layers, embedding, feedForward, heads, kvHeads, headDim, vocabulary, context,
					ropeBase, rmsEpsilon);
		}
		catch (IllegalArgumentException ex) {
			throw new ModelShapeException("metadata of " + file.path() + ": " + ex.getMessage(), ex);
		}
	}

	private static GgufTensorInfo tensor(GgufFile file, String name) {
		return file.findTensor(name).orElseThrow(() -> new ModelShapeException("tensor '" + name + "' is missing"));
	}

	private static void matrix(GgufTensorInfo t, int columns, int rows) {
		if (t.type() != GgmlType.Q4_1 && t.type() != GgmlType.Q8_0) {
			throw new ModelShapeException("tensor '" + t.name() + "' is " + t.type() + ", not Q4_1 or Q8_0");
		}
		long[] dims = t.dimensions();
		if (dims.length != 2 || dims[0] != columns || dims[1] != rows) {
			throw new ModelShapeException("tensor '" + t.name() + "' has dimensions " + Arrays.toString(dims)
					+ ", not [" + columns + ", " + rows + "]");
		}
	}

	private static void norm(GgufTensorInfo t, int length) {
		if (t.type() != GgmlType.F32) {
			throw new ModelShapeException("tensor '" + t.name() + "' is " + t.type() + ", not F32");
		}
		long[] dims = t.dimensions();
		if (dims.length != 1 || dims[0] != length) {
			throw new ModelShapeException(
					"tensor '" + t.name() + "' has dimensions " + Arrays.toString(dims) + ", not [" + length + "]");
		}
	}

	private static String string(GgufMetadata m, String key) {
		try {
			return m.getString(key);
		}
		catch (GgufFormatException ex) {
			throw new ModelShapeException(String.valueOf(ex.getMessage()), ex);
		}
	}

	private static int integer(GgufMetadata m, String key, int max) {
		if (!m.contains(key)) {
			throw new ModelShapeException("metadata key '" + key + "' is missing");
		}
		long value;
		try {
			value = m.getLong(key);
		}
		catch (GgufFormatException ex) {
			throw new ModelShapeException(String.valueOf(ex.getMessage()), ex);
		}
		if (value < 1 || value > max) {
			throw new ModelShapeException("metadata key '" + key + "' is " + value + ", not in 1.." + max);
		}
		return (int) value;
	}

	private static float positive(GgufMetadata m, String key) {
		if (!m.contains(key)) {
			throw new ModelShapeException("metadata key '" + key + "' is missing");
		}
		float value;
		try {
			value = m.getFloat(key);
		}
		catch (GgufFormatException ex) {
			throw new ModelShapeException(String.valueOf(ex.getMessage()), ex);
		}
		if (!(value > 0) || !Float.isFinite(value)) {
			throw new ModelShapeException("metadata key '" + key + "' is " + value + ", not positive and finite");
		}
		return value;
	}

}
