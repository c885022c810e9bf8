package dev.nixl4j.sample.model;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Compares the Java engine with an independent float32 forward pass of the same GGUF
 * file, {@code src/model/reference.py} (numpy; the {@code gguf} package dequantizes the
 * weights), on the real SmolLM2-135M-Instruct model.
 * <p>
 * The reference tokenizes {@value #PROMPT_COUNT_TEXT} text prompts (English, code,
 * non-ASCII text, digit and whitespace runs, ChatML turns, one of about 300 tokens) with
 * a tokenizer built from the file's vocabulary and merges, and answers, for each, the
 * logits at the last prompt position and {@value #STEPS} ids picked greedily, each fed
 * back, with the smallest gap between the best and second-best logit over those steps.
 * The engine runs the same ids.
 * <p>
 * Asserted per prompt: the largest absolute difference between the engine's and the
 * reference's logits over the whole vocabulary at the last prompt position is at most
 * {@value #TOLERANCE}, and the {@value #STEPS} greedy ids are identical. Both sides
 * compute in float32 from the same dequantized weights, so they differ only by the order
 * of float32 rounding: measured on this machine, the largest difference over all prompts
 * was 9.0e-5 (logits up to about 34 in magnitude), so the tolerance leaves a margin of
 * about 5; the smallest gap between the best and second-best logit over all greedy steps
 * was 0.0037, more than twice the tolerance, so a different greedy id is an error, not a
 * tie. Prints each prompt's largest difference and gap. Takes a minute or more: the
 * reference is numpy.
 */
class SmolLm2ReferenceLogitsTest {

	static final String PROMPT_COUNT_TEXT = "24";

	static final int STEPS = 16;

	/** The largest absolute logit difference allowed at the last prompt position. */
	static final double TOLERANCE = 5e-4;

	private static final int BLOCK_SIZE = 16;

	private static final List<String> PROMPTS = List.of("The capital of France is",
			"Once upon a time, in a small village by the sea, there lived",
			"The quick brown fox jumps over the lazy dog. The quick brown fox",
			"def fibonacci(n):\n    if n < 2:\n        return n\n    return",
			"public static void main(String[] args) {\n\tSystem.out.println(\"",
			"SELECT name, count(*) FROM users WHERE age > 30 GROUP BY",
			"<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
					+ "<|im_start|>user\nWhat is the boiling point of water?<|im_end|>\n<|im_start|>assistant\n",
			"<|im_start|>user\nWrite a haiku about autumn.<|im_end|>\n<|im_start|>assistant\n",
			"1, 2, 3, 4, 5, 6, 7, 8,", "3.14159265358979323846 is the beginning of", "12345 + 67890 =",
			"Le café est très chaud, et la crème brûlée", "Grüße aus München: Straße, Größe,", "日本の首都は",
			"Привет, как дела? Сегодня", "emoji: 🙂🚀✨ and then", "a    b        c\n\n\n\n\td\t\t\te     ",
			"   leading spaces and trailing   ", "x", "\n", "<html>\n  <body>\n    <div class=\"main\">",
			"{\"key\": [1, 2, {\"nested\": null}],", "To be, or not to be, that is the question:", longPrompt());

	private static Path model;

	private static Path python;

	private static LlamaModel engine;

	@BeforeAll
	static void findModelAndReference() throws Exception {
		model = ModelReference.model();
		python = ModelReference.python();
		engine = LlamaModel.load(model);
	}

	@AfterAll
	static void closeEngine() {
		if (engine != null) {
			engine.close();
		}
	}

	/** About 300 tokens of ordinary English and code. */
	private static String longPrompt() {
		return """
				The history of computing is a story of abstraction. Early machines were programmed by \
				rewiring panels; later, stored programs let the same hardware run many tasks. Assembly \
				languages named the instructions, compilers translated higher-level languages, and operating \
				systems shared one machine among many users. Each layer hid the details of the one below it, \
				so that programmers could think about their problem instead of the circuitry.

				Consider a simple function that sums the squares of a list:

				    def sum_of_squares(values):
				        total = 0
				        for v in values:
				            total += v * v
				        return total

				    print(sum_of_squares([1, 2, 3, 4]))  # prints 30

				Today a program may run on thousands of machines at once, moving data between memories \
				that differ in speed by orders of magnitude. Networks, caches and accelerators each add \
				their own rules. The art of systems design is to choose which details to expose and which to \
				hide, and the best abstractions are the ones that remain useful as the hardware beneath them \
				changes. Processes that share memory must agree on who writes where and when; locks, queues \
				and a careful ordering of reads and writes make that agreement explicit, and mistakes there are \
				among the hardest bugs to find, because they appear only under load and vanish when observed. \
				In the next section we look at how memory is shared between processes, and why the \
				""";
	}

	@Test
	void logitsAndGreedyIdsMatchTheFloat32Reference() throws Exception {
		assertThat(PROMPTS).hasSize(Integer.parseInt(PROMPT_COUNT_TEXT));
		List<String> requests = new ArrayList<>();
		for (String prompt : PROMPTS) {
			requests.add("{\"text\": " + ModelReference.jsonString(prompt) + ", \"steps\": " + STEPS + "}");
		}
		long start = System.nanoTime();
		String[] lines = ModelReference.jsonLines(python, ModelReference.script("reference.py"), model, requests, 1200)
			.toArray(String[]::new);
		System.out.printf("reference.py: %d prompts in %.1f s%n", PROMPTS.size(), (System.nanoTime() - start) / 1e9);

		double worstDiff = 0;
		double smallestGap = Double.MAX_VALUE;
		List<String> failures = new ArrayList<>();
		for (int p = 0; p < PROMPTS.size(); p++) {
			Answer answer = Answer.of(lines[p]);
			Compared compared = compare(answer);
			worstDiff = Math.max(worstDiff, compared.maxDiff());
			smallestGap = Math.min(smallestGap, answer.gap());
			System.out.printf(
					"prompt %2d (%3d tokens): max |logit diff| %.3e (logit scale %.1f), greedy gap %.4f, %s%n", p,
					answer.ids().length, compared.maxDiff(), compared.scale(), answer.gap(),
					(compared.mismatch() == null) ? "greedy ids identical" : compared.mismatch());
			if (compared.maxDiff() > TOLERANCE) {
				failures.add("prompt " + p + ": max |logit diff| " + compared.maxDiff() + " > " + TOLERANCE
						+ " at token " + compared.worstToken());
			}
			if (compared.mismatch() != null) {
				failures.add("prompt " + p + ": " + compared.mismatch());
			}
		}
		System.out.printf("all prompts: max |logit diff| %.3e (tolerance %.0e), smallest greedy gap %.4f%n", worstDiff,
				TOLERANCE, smallestGap);
		if (!failures.isEmpty()) {
			fail(String.join("\n", failures));
		}
	}

	/** Runs the engine on the answer's prompt and greedy steps. */
	private static Compared compare(Answer answer) {
		int[] ids = answer.ids();
		int pages = (ids.length + STEPS + BLOCK_SIZE - 1) / BLOCK_SIZE;
		try (Arena arena = Arena.ofShared()) {
			KvPages kv = KvPages.allocate(arena, engine.config(), BLOCK_SIZE, pages);
			float[] logits = engine.forward(ids, 0, kv);
			assertThat(logits).as("logits").hasSameSizeAs(answer.logits());
			double maxDiff = 0;
			double scale = 0;
			int worstToken = -1;
			for (int i = 0; i < logits.length; i++) {
				double d = Math.abs(logits[i] - answer.logits()[i]);
				if (!(d <= maxDiff)) {
					maxDiff = d;
					worstToken = i;
				}
				scale = Math.max(scale, Math.abs(answer.logits()[i]));
			}
			Sampler greedy = Sampler.greedy();
			String mismatch = null;
			int position = ids.length;
			for (int s = 0; s < STEPS; s++) {
				int next = greedy.next(logits);
				if (next != answer.greedy()[s]) {
					mismatch = "greedy step " + s + ": engine " + next + ", reference " + answer.greedy()[s]
							+ " (engine logits " + logits[next] + " vs " + logits[answer.greedy()[s]]
							+ "); reference ids " + Arrays.toString(answer.greedy());
					break;
				}
				if (s + 1 < STEPS) {
					logits = engine.forward(new int[] { next }, position++, kv);
				}
			}
			return new Compared(maxDiff, worstToken, scale, mismatch);
		}
	}

	private record Compared(double maxDiff, int worstToken, double scale, String mismatch) {
	}

	/** One answer line of reference.py. */
	private record Answer(int[] ids, float[] logits, int[] greedy, double gap) {

		@SuppressWarnings("unchecked")
		static Answer of(String line) {
			Map<String, Object> json = (Map<String, Object>) MiniJson.parse(line);
			List<Object> rows = (List<Object>) json.get("logits");
			assertThat(rows).as("logits rows").hasSize(1);
			List<Object> logits = (List<Object>) rows.get(0);
			float[] values = new float[logits.size()];
			for (int i = 0; i < values.length; i++) {
				values[i] = ((Double) logits.get(i)).floatValue();
			}
			return new Answer(ints((List<Object>) json.get("ids")), values, ints((List<Object>) json.get("greedy")),
					(Double) json.get("gap"));
		}

		private static int[] ints(List<Object> list) {
			return list.stream().mapToInt((o) -> ((Double) o).intValue()).toArray();
		}

	}

}
