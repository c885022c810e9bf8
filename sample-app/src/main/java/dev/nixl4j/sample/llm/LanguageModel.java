package dev.nixl4j.sample.llm;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import dev.nixl4j.kv.KvBlockOrder;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.model.BpeTokenizer;
import dev.nixl4j.sample.model.ChatTemplate;
import dev.nixl4j.sample.model.LlamaConfig;
import dev.nixl4j.sample.model.LlamaModel;
import org.jspecify.annotations.Nullable;

/**
 * The sample's language model: the model file's weights ({@link LlamaModel}), its
 * tokenizer and its chat template, and the KV-cache layout the model needs.
 *
 * <p>
 * Its KV cache is the worker's paged KV cache: 4-byte floats, one K and one V region per
 * layer, the model's KV heads and head dimension, in HND order
 * ({@link #layoutFor(LlamaConfig, int, int)}).
 */
public final class LanguageModel implements AutoCloseable {

	private final LlamaModel model;

	private final BpeTokenizer tokenizer;

	private final ChatTemplate template;

	private final String name;

	private LanguageModel(LlamaModel model) {
		this.model = model;
		this.tokenizer = BpeTokenizer.fromGguf(model.file());
		this.template = ChatTemplate.fromGguf(model.file());
		String file = String.valueOf(model.file().path().getFileName());
		this.name = file.endsWith(".gguf") ? file.substring(0, file.length() - ".gguf".length()) : file;
	}

	/**
	 * Loads a model file.
	 * @param path the GGUF file
	 * @param threads threads of the matrix products; 0 for one per processor
	 * @return the model
	 * @throws IOException when the file cannot be read
	 * @throws IllegalStateException when the Vector API is not in the JVM
	 * @throws dev.nixl4j.sample.model.GgufFormatException naming what the engine cannot
	 * run in the file
	 */
	public static LanguageModel load(Path path, int threads) throws IOException {
		if (!vectorApiAvailable()) {
			throw new IllegalStateException("the language model needs the JDK's Vector API: start the JVM with "
					+ "--add-modules jdk.incubator.vector");
		}
		LlamaModel model = (threads > 0) ? LlamaModel.load(path, threads) : LlamaModel.load(path);
		try {
			return new LanguageModel(model);
		}
		catch (RuntimeException | Error ex) {
			model.close();
			throw ex;
		}
	}

	/**
	 * Returns whether this JVM has the Vector API the engine's kernels use
	 * ({@code --add-modules jdk.incubator.vector}).
	 * @return {@code true} when it has
	 */
	public static boolean vectorApiAvailable() {
		return ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent();
	}

	/**
	 * Returns the KV-cache layout a model's K and V need.
	 * @param config the model
	 * @param blockSize tokens per block
	 * @param blocks blocks per region
	 * @return the layout
	 */
	public static KvCacheLayout layoutFor(LlamaConfig config, int blockSize, int blocks) {
		return KvCacheLayout.builder()
			.layers(config.layers())
			.splitKv(true)
			.blocks(blocks)
			.blockSize(blockSize)
			.kvHeads(config.kvHeads())
			.headDim(config.headDim())
			.dtypeSize(Float.BYTES)
			.order(KvBlockOrder.HND)
			.build();
	}

	/**
	 * Checks that a cache layout holds this model's K and V.
	 * @param layout the worker's layout
	 * @throws IllegalStateException naming the property that differs
	 */
	public void requireLayout(KvCacheLayout layout) {
		LlamaConfig config = this.model.config();
		KvCacheLayout needed = layoutFor(config, layout.blockSize(), layout.numBlocks());
		require("nixl.kv.layers", layout.numLayers(), needed.numLayers());
		require("nixl.kv.kv-heads", layout.numKvHeads(), needed.numKvHeads());
		require("nixl.kv.head-dim", layout.headDim(), needed.headDim());
		require("nixl.kv.dtype-size", layout.dtypeSize(), needed.dtypeSize());
		if (!layout.splitKv()) {
			throw mismatch("nixl.kv.split-kv", "false", "true");
		}
		if (layout.order() != KvBlockOrder.HND) {
			throw mismatch("nixl.kv.order", layout.order().name(), KvBlockOrder.HND.name());
		}
	}

	private void require(String property, int actual, int needed) {
		if (actual != needed) {
			throw mismatch(property, Integer.toString(actual), Integer.toString(needed));
		}
	}

	private IllegalStateException mismatch(String property, String actual, String needed) {
		return new IllegalStateException("the KV cache does not fit the model " + this.name + " ("
				+ this.model.file().path() + "): " + property + " is " + actual + ", the model needs " + needed);
	}

	/**
	 * Turns a request's prompt into the model's tokens: text through the chat template
	 * (as the user's message, after the template's default system prompt), token ids as
	 * they are.
	 * @param prompt the text, or {@code null}
	 * @param tokens the token ids, or {@code null}
	 * @param maxTokens the longest prompt this worker takes
	 * @return the token ids
	 * @throws SampleException 400 for neither or both, an empty prompt, one too long for
	 * the worker or the model's context, or a token id outside the vocabulary
	 */
	public int[] promptTokens(@Nullable String prompt, @Nullable List<Integer> tokens, int maxTokens) {
		if ((prompt == null) == (tokens == null)) {
			throw SampleException.badRequest("give the prompt either as 'prompt' (text) or as 'tokens' (ids), not "
					+ ((prompt == null) ? "neither" : "both"));
		}
		int limit = Math.min(maxTokens, this.model.config().context() - 1);
		int[] ids;
		if (prompt != null) {
			if (prompt.isEmpty()) {
				throw SampleException.badRequest("the prompt is empty");
			}
			if (prompt.length() > BpeTokenizer.MAX_TEXT_CHARS) {
				throw SampleException.badRequest("the prompt has " + prompt.length() + " characters; the tokenizer "
						+ "takes at most " + BpeTokenizer.MAX_TEXT_CHARS);
			}
			ids = this.tokenizer.encode(this.template.prompt(prompt));
		}
		else {
			if (tokens.isEmpty()) {
				throw SampleException.badRequest("the prompt is empty");
			}
			if (tokens.size() > limit) {
				throw tooLong(tokens.size(), limit);
			}
			ids = new int[tokens.size()];
			int vocabulary = this.model.config().vocabulary();
			for (int i = 0; i < ids.length; i++) {
				Integer id = tokens.get(i);
				if (id == null || id < 0 || id >= vocabulary) {
					throw SampleException.badRequest(
							"token " + i + " is " + id + ": the model's token ids lie in [0, " + vocabulary + ")");
				}
				ids[i] = id;
			}
		}
		if (ids.length > limit) {
			throw tooLong(ids.length, limit);
		}
		return ids;
	}

	private SampleException tooLong(int length, int limit) {
		return SampleException.badRequest("the prompt has " + length + " tokens; this worker takes at most " + limit
				+ " (sample.max-prompt-tokens, and one less than the model's context of "
				+ this.model.config().context() + ")");
	}

	/**
	 * Checks that a prompt and the tokens to generate fit the model's context.
	 * @param promptTokens the prompt's length
	 * @param maxTokens the tokens to generate
	 * @throws SampleException 400 when they do not
	 */
	public void requireContext(int promptTokens, int maxTokens) {
		int context = this.model.config().context();
		if ((long) promptTokens + maxTokens > context) {
			throw SampleException.badRequest("the prompt's " + promptTokens + " tokens and maxTokens " + maxTokens
					+ " exceed the model's context of " + context + " tokens");
		}
	}

	/**
	 * Returns the text of generated tokens, without the end-of-turn token.
	 * @param ids the token ids
	 * @return the text
	 */
	public String text(List<Integer> ids) {
		int[] plain = ids.stream().mapToInt(Integer::intValue).filter((id) -> !this.tokenizer.isSpecial(id)).toArray();
		return this.tokenizer.decode(plain);
	}

	/**
	 * Returns the weights.
	 * @return the model
	 */
	public LlamaModel model() {
		return this.model;
	}

	/**
	 * Returns the tokenizer.
	 * @return the tokenizer
	 */
	public BpeTokenizer tokenizer() {
		return this.tokenizer;
	}

	/**
	 * Returns the chat template.
	 * @return the template
	 */
	public ChatTemplate template() {
		return this.template;
	}

	/**
	 * Returns the model's name.
	 * @return the file's name without {@code .gguf}
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns the end-of-turn token, where generation stops.
	 * @return its id
	 */
	public int eos() {
		return this.tokenizer.eosId();
	}

	@Override
	public void close() {
		this.model.close();
	}

}
