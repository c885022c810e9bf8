package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The real tokenizer on hostile and boundary input: megabyte-long words, whitespace runs,
 * digits and special tokens (each under a hang guard, and each compared with Hugging Face
 * {@code tokenizers}), the length limit, the empty string, lone surrogates, NUL, every
 * special token inside text, and ids out of range.
 */
class BpeTokenizerHostileTest {

	private static final int MAX = BpeTokenizer.MAX_TEXT_CHARS;

	private static Path model;

	private static Path python;

	private static BpeTokenizer tokenizer;

	@BeforeEach
	void open() throws IOException, InterruptedException {
		ModelReference.Opened real = ModelReference.open();
		model = real.model();
		python = real.python();
		tokenizer = real.tokenizer();
	}

	private static String repeat(int length, Random random, String alphabet) {
		int[] cps = alphabet.codePoints().toArray();
		StringBuilder b = new StringBuilder(length);
		while (b.length() < length) {
			int cp = cps[random.nextInt(cps.length)];
			if (b.length() + Character.charCount(cp) > length) {
				break;
			}
			b.appendCodePoint(cp);
		}
		return b.toString();
	}

	/** Encodes with a hang guard; the ids agree with Hugging Face's. */
	private static void assertAgree(Map<String, String> inputs, Duration guard)
			throws IOException, InterruptedException {
		List<String> requests = new ArrayList<>();
		for (String text : inputs.values()) {
			requests.add("{\"encode\": " + ModelReference.jsonString(text) + "}");
		}
		List<String> answers = ModelReference.jsonLines(python, ModelReference.script("hf_tokenize.py"), model,
				requests, 300);
		int i = 0;
		for (Map.Entry<String, String> input : inputs.entrySet()) {
			String text = input.getValue();
			long start = System.nanoTime();
			int[] ids = assertTimeoutPreemptively(guard, () -> tokenizer.encode(text), input.getKey());
			long nanos = System.nanoTime() - start;
			int[] expected = ModelReference.ids(answers.get(i), input.getKey());
			assertThat(ids).as(input.getKey()).isEqualTo(expected);
			if (text.length() < 1000) {
				i++;
				continue;
			}
			System.out.printf("Tokenizer: %s (%d chars): %d tokens in %.1f ms, as Hugging Face's%n", input.getKey(),
					text.length(), ids.length, nanos / 1e6);
			i++;
		}
	}

	@Test
	void megabyteInputsEncodeWithinAHangGuardAsHuggingFaceDoes() throws IOException, InterruptedException {
		Random random = new Random(3);
		Map<String, String> inputs = new LinkedHashMap<>();
		inputs.put("one word of random letters", repeat(MAX, random, "abcdefghijklmnopqrstuvwxyz"));
		inputs.put("one word of 'a'", "a".repeat(MAX));
		inputs.put("one word of CJK", repeat(MAX, random, "的一是不了人我在有他这中大来上国个到说们为子和你地出道"));
		inputs.put("one word of emoji (surrogate pairs)", repeat(MAX, random, "😀🤖🦀👍"));
		inputs.put("spaces", " ".repeat(MAX));
		inputs.put("a whitespace run", repeat(MAX, random, " \t\n\r\u3000\u00a0"));
		inputs.put("punctuation", repeat(MAX, random, "!?.,;:-+*/<>|"));
		inputs.put("digits", repeat(MAX, random, "0123456789"));
		inputs.put("NUL", "\u0000".repeat(MAX));
		inputs.put("special tokens", "<|im_start|>".repeat(MAX / 12));
		inputs.put("special token prefixes", "<|im_start".repeat(MAX / 10));
		assertAgree(inputs, Duration.ofSeconds(10));
	}

	@Test
	void everySpecialTokenInsideTextIsMatchedAsHuggingFaceMatchesIt() throws IOException, InterruptedException {
		Map<String, String> inputs = new LinkedHashMap<>();
		int specials = 0;
		for (int id = 0; id < tokenizer.vocabularySize(); id++) {
			if (!tokenizer.isSpecial(id)) {
				continue;
			}
			specials++;
			String piece = tokenizer.piece(id);
			for (String text : List.of(piece, "x" + piece + "y", " " + piece + "\n", "12" + piece + piece + "34",
					"<" + piece + ">", piece.substring(0, piece.length() - 1) + piece)) {
				inputs.put(text, text);
				int[] ids = tokenizer.encode(text);
				assertThat(Arrays.stream(ids).filter((t) -> t == tokenizer.encode(piece)[0]).count()).as(text)
					.isEqualTo(text.split(java.util.regex.Pattern.quote(piece), -1).length - 1);
				assertThat(tokenizer.decode(ids)).isEqualTo(text);
			}
			assertThat(tokenizer.encode(piece)).containsExactly(id);
		}
		assertThat(specials).isEqualTo(17);
		assertAgree(inputs, Duration.ofSeconds(10));
	}

	@Test
	void textOverTheLimitIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> tokenizer.encode("a".repeat(MAX + 1)))
			.withMessageContaining(Integer.toString(MAX + 1));
	}

	@Test
	void emptyTextHasNoTokens() {
		assertThat(tokenizer.encode("")).isEmpty();
		assertThat(tokenizer.decode(new int[0])).isEmpty();
	}

	@Test
	void nulIsAToken() throws IOException, InterruptedException {
		assertThat(tokenizer.hasByteToken(0)).isTrue();
		assertThat(tokenizer.decode(tokenizer.encode("a\u0000b\u0000"))).isEqualTo("a\u0000b\u0000");
		assertAgree(Map.of("NUL inside text", "a\u0000b\u0000 \u0000"), Duration.ofSeconds(10));
	}

	@Test
	void loneSurrogatesEncodeAsReplacementCharacters() throws IOException, InterruptedException {
		for (String lone : List.of("\uD800", "\uDC00", "\uDBFF", "\uDE00\uD83D")) {
			String text = "a" + lone + "b";
			String replaced = "a" + "\uFFFD".repeat(lone.length()) + "b";
			assertThat(tokenizer.encode(text)).as(ModelReference.jsonString(text))
				.isEqualTo(tokenizer.encode(replaced));
			assertThat(tokenizer.decode(tokenizer.encode(text))).isEqualTo(replaced);
		}
		assertThat(tokenizer.encode("x\uD83D")).isEqualTo(tokenizer.encode("x\uFFFD"));
		// Hugging Face's tokenizers refuses a str holding a lone surrogate.
		String request = "{\"encode\": " + ModelReference.jsonString("a\uD800b") + "}";
		assertThat(
				ModelReference.jsonLines(python, ModelReference.script("hf_tokenize.py"), model, List.of(request), 120))
			.singleElement()
			.asString()
			.startsWith("{\"error\":");
	}

	@Test
	void idsOutOfTheVocabularyAreRefused() {
		int size = tokenizer.vocabularySize();
		assertThatIllegalArgumentException().isThrownBy(() -> tokenizer.decode(new int[] { 1, size }))
			.withMessageContaining("ids[1] = " + size);
		assertThatIllegalArgumentException().isThrownBy(() -> tokenizer.decode(new int[] { -1 }))
			.withMessageContaining("ids[0] = -1");
		assertThatIllegalArgumentException().isThrownBy(() -> tokenizer.piece(size));
		assertThatIllegalArgumentException().isThrownBy(() -> tokenizer.isSpecial(-5));
		assertThatIllegalArgumentException().isThrownBy(() -> tokenizer.hasByteToken(256));
	}

}
