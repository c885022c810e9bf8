package dev.nixl4j.sample.load;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

import dev.nixl4j.sample.api.GenerateRequest;
import dev.nixl4j.sample.api.GenerateResponse;
import dev.nixl4j.sample.api.ModelAnswer;
import dev.nixl4j.sample.api.Sampling;
import dev.nixl4j.sample.llm.Generation;
import dev.nixl4j.sample.llm.LanguageModel;
import org.jspecify.annotations.Nullable;

/**
 * The load generator's check of the language model's answers: the same model run in this
 * one process, on the same prompt, greedily, must give the decode worker's tokens, token
 * for token. Each distinct prompt runs here twice before the timed requests (the second
 * round's times are the one-process figures, with the JIT warmer).
 */
final class ModelCheck implements AutoCloseable {

	/** The chat prompts, request {@code i} sends prompt {@code i % size}. */
	static final List<String> PROMPTS = List.of("What is the capital of France?", "Write a haiku about the sea.",
			"Explain in two sentences what a KV cache is in a transformer.",
			"List three prime numbers greater than 100.", "Translate 'good morning' into Spanish and German.",
			"def fib(n):\n    # complete this Python function\n", "Quelle est la couleur du ciel ?",
			"Summarize: The quick brown fox jumps over the lazy dog. The dog sleeps on.");

	/** Text whose tokens make prompts of a given length ({@code --token-prompts}). */
	private static final String LONG_TEXT = """
			Inference services split the work of a request in two: a prefill worker runs the whole prompt
			through the model at once and keeps each layer's keys and values, and a decode worker generates
			the answer one token at a time, reading those keys and values in every attention layer. Moving
			the cache between them at memory speed is what a transfer library is for. In 1969, 3 astronauts
			flew 384,400 km to the Moon; the Apollo guidance computer had 2,048 words of memory.
			""";

	private static final int BLOCK_SIZE = 16;

	private final LanguageModel model;

	private final LoadOptions options;

	private final int[] textTokens;

	private final Map<Integer, LoadReport.OneProcessRun> references = new ConcurrentHashMap<>();

	private ModelCheck(LanguageModel model, LoadOptions options) {
		this.model = model;
		this.options = options;
		int[] text = model.tokenizer().encode(LONG_TEXT);
		int length = options.promptTokens() + 8;
		this.textTokens = IntStream.range(0, length).map((i) -> text[i % text.length]).toArray();
	}

	static ModelCheck load(Path path, LoadOptions options) throws IOException {
		return new ModelCheck(LanguageModel.load(path, 0), options);
	}

	/** The distinct prompts the run sends. */
	int distinctPrompts() {
		return this.options.tokenPrompts() ? 4 : PROMPTS.size();
	}

	private int promptIndex(int index) {
		return Math.floorMod(index, distinctPrompts());
	}

	/** The request of index {@code index}: greedy, the run's token count. */
	GenerateRequest request(int index) {
		int p = promptIndex(index);
		if (this.options.tokenPrompts()) {
			return new GenerateRequest(null, null, tokenPrompt(p), this.options.maxTokens(), null);
		}
		return new GenerateRequest(null, PROMPTS.get(p), null, this.options.maxTokens(), null);
	}

	private List<Integer> tokenPrompt(int p) {
		return Arrays.stream(this.textTokens, p * 2, p * 2 + this.options.promptTokens()).boxed().toList();
	}

	private int[] promptIds(int p) {
		if (this.options.tokenPrompts()) {
			return tokenPrompt(p).stream().mapToInt(Integer::intValue).toArray();
		}
		return this.model.promptTokens(PROMPTS.get(p), null, Integer.MAX_VALUE);
	}

	/**
	 * Runs every distinct prompt here: each once to warm the JIT up, then each again,
	 * timed.
	 */
	void prepare() {
		for (int p = 0; p < distinctPrompts(); p++) {
			run(promptIds(p));
		}
		for (int p = 0; p < distinctPrompts(); p++) {
			int[] ids = promptIds(p);
			long start = System.nanoTime();
			Generation.Decoded decoded = run(ids);
			long total = System.nanoTime() - start;
			String prompt = this.options.tokenPrompts() ? ids.length + " token ids" : PROMPTS.get(p);
			this.references.put(p,
					new LoadReport.OneProcessRun(prompt, ids.length, decoded.ids(), this.model.text(decoded.ids()),
							(total - decoded.decodeNanos()) / 1e6, decoded.firstStepNanos() / 1e6,
							decoded.tokensPerSecond()));
		}
	}

	private Generation.Decoded run(int[] ids) {
		return Generation.oneProcess(this.model.model(), ids, this.options.maxTokens(), Sampling.GREEDY,
				this.model.eos(), BLOCK_SIZE);
	}

	/** What is wrong with an answer, or {@code null}. */
	@Nullable String check(int index, GenerateResponse answer) {
		LoadReport.OneProcessRun reference = this.references.get(promptIndex(index));
		ModelAnswer generated = answer.model();
		if (reference == null) {
			return "no one-process run of prompt " + promptIndex(index);
		}
		if (generated == null) {
			return "the decode worker answered without the language model (is it started with sample.model.path?)";
		}
		if (answer.promptTokens() != reference.promptTokens()) {
			return "the decode worker counted " + answer.promptTokens() + " prompt tokens, this process "
					+ reference.promptTokens();
		}
		if (!generated.tokenIds().equals(reference.ids())) {
			int at = 0;
			while (at < Math.min(generated.tokenIds().size(), reference.ids().size())
					&& generated.tokenIds().get(at).equals(reference.ids().get(at))) {
				at++;
			}
			return "tokens differ from a one-process run from token " + at + ": decode worker " + generated.tokenIds()
					+ ", one process " + reference.ids();
		}
		if (!answer.verified()) {
			return "the decode worker did not check the pulled blocks' CRC32C";
		}
		return null;
	}

	/** The one-process runs, in prompt order. */
	List<LoadReport.OneProcessRun> references() {
		List<LoadReport.OneProcessRun> list = new ArrayList<>();
		for (int p = 0; p < distinctPrompts(); p++) {
			LoadReport.OneProcessRun reference = this.references.get(p);
			if (reference != null) {
				list.add(reference);
			}
		}
		return list;
	}

	String name() {
		return this.model.name();
	}

	@Override
	public void close() {
		this.model.close();
	}

}
