package dev.nixl4j.sample.model;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the engine on the real SmolLM2-135M-Instruct file (found like
 * {@link SmolLm2FileTest} finds it: skipped when it is not cached, unless
 * {@code CI=true}): a ChatML prompt prefilled at once and token by token, a greedy
 * continuation decoded one token at a time and checked against one pass over the whole
 * sequence. Prints the speeds it saw (not asserted: the machine may be busy).
 */
class SmolLm2ModelTest {

	private static Path model;

	@BeforeAll
	static void findModel() throws IOException, InterruptedException {
		model = SmolLm2FileTest.locate();
	}

	/** The prompt's ids, looked up in the file's own vocabulary. */
	private static int[] prompt(GgufFile file) {
		List<String> vocabulary = file.metadata().getStringArray("tokenizer.ggml.tokens");
		String[] pieces = { "<|im_start|>", "system", "Ċ", "You", "Ġare", "Ġa", "Ġhelpful", "Ġassistant", ".",
				"<|im_end|>", "Ċ", "<|im_start|>", "user", "Ċ", "What", "Ġis", "Ġthe", "Ġcapital", "Ġof", "ĠFrance",
				"?", "<|im_end|>", "Ċ", "<|im_start|>", "ass", "istant", "Ċ" };
		int[] ids = new int[pieces.length];
		for (int i = 0; i < pieces.length; i++) {
			ids[i] = vocabulary.indexOf(pieces[i]);
			assertThat(ids[i]).as("the id of %s", pieces[i]).isNotNegative();
		}
		return ids;
	}

	@Test
	void prefillAndDecodeAgreeOnAGreedyContinuation() throws IOException {
		try (LlamaModel llama = LlamaModel.load(model, 2); Arena arena = Arena.ofShared()) {
			LlamaConfig config = llama.config();
			assertThat(config).isEqualTo(new LlamaConfig(30, 576, 1536, 9, 3, 64, 49152, 8192, 100_000f, 1e-5f));
			int[] prompt = prompt(llama.file());
			int generate = 16;
			Sampler greedy = Sampler.greedy();

			// Token by token, prompt included.
			KvPages stepPages = KvPages.allocate(arena, config, 16, 4);
			float[] stepLogits = null;
			for (int t = 0; t < prompt.length; t++) {
				stepLogits = llama.forward(new int[] { prompt[t] }, t, stepPages);
			}

			// Prefill, then decode.
			KvPages pages = KvPages.allocate(arena, config, 16, 4);
			long start = System.nanoTime();
			float[] logits = llama.forward(prompt, 0, pages);
			long prefilled = System.nanoTime();
			assertThat(greedy.next(logits)).isEqualTo(greedy.next(stepLogits));
			LlamaModelTest.assertClose(logits, stepLogits, "the prompt's last logits, prefilled and stepped");
			int[] sequence = Arrays.copyOf(prompt, prompt.length + generate);
			for (int i = 0; i < generate; i++) {
				sequence[prompt.length + i] = greedy.next(logits);
				if (i + 1 < generate) {
					logits = llama.forward(new int[] { sequence[prompt.length + i] }, prompt.length + i, pages);
				}
			}
			long decoded = System.nanoTime();

			float[][] all = llama.forwardAll(sequence, 0, KvPages.allocate(arena, config, 16, 4));
			for (int i = 0; i < generate; i++) {
				assertThat(greedy.next(all[prompt.length - 1 + i])).as("greedy token %d", i)
					.isEqualTo(sequence[prompt.length + i]);
			}
			List<String> vocabulary = llama.file().metadata().getStringArray("tokenizer.ggml.tokens");
			StringBuilder text = new StringBuilder();
			for (int i = prompt.length; i < sequence.length; i++) {
				text.append(vocabulary.get(sequence[i]).replace('Ġ', ' ').replace('Ċ', '\n'));
			}
			System.out.printf(Locale.ROOT,
					"SmolLM2 (2 threads, first run, JIT still warming): prefill %d tokens %.1f tok/s,"
							+ " decode %d tokens %.1f tok/s; continuation: %s%n",
					prompt.length, prompt.length / ((prefilled - start) / 1e9), generate - 1,
					(generate - 1) / ((decoded - prefilled) / 1e9), text);
		}
	}

}
