package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The BPE logic on a vocabulary of 28 tokens that the test writes in a GGUF file: merge
 * order by rank then position, digits split one by one, the GPT-2 split pattern, special
 * tokens matched longest first, bytes without a token dropped, and the file checks. The
 * expected ids were worked out by hand from the merge list (and agree with Hugging Face
 * {@code tokenizers} built from the same vocabulary).
 */
class BpeTokenizerTinyVocabularyTest {

	// Byte-level chars: 'Ġ' is the space, 'Ċ' the newline, "Ã©" the UTF-8 bytes of 'é'.
	private static final List<String> TOKENS = List.of("<s>", "</s>", "<s>!", "a", "b", "c", "Ġ", "1", "2", "'", "s",
			"!", "?", "<", ">", "/", "Ã", "©", "Ċ", "ab", "bc", "abc", "Ġa", "12", "'s", "Ã©", "aa", "ĠĠ");

	private static final List<String> MERGES = List.of("a b", "b c", "ab c", "a bc", "Ġ a", "1 2", "' s", "Ã ©", "a a",
			"Ġ Ġ");

	@TempDir
	Path dir;

	/** The keys of a valid tokenizer, each replaceable by a test. */
	private final class Keys {

		String model = "gpt2";

		String pre = "smollm";

		List<String> tokens = new ArrayList<>(TOKENS);

		List<Integer> types = new ArrayList<>();

		List<String> merges = new ArrayList<>(MERGES);

		long eos = 1;

		Boolean addBos = false;

		Keys() {
			for (int i = 0; i < this.tokens.size(); i++) {
				this.types.add((i < 3) ? 3 : 1);
			}
		}

		BpeTokenizer open() throws IOException {
			GgufWriter w = new GgufWriter();
			if (this.model != null) {
				w.kv("tokenizer.ggml.model", (b) -> b.u32(8).str(this.model));
			}
			w.kv("tokenizer.ggml.pre", (b) -> b.u32(8).str(this.pre));
			if (this.addBos != null) {
				w.kv("tokenizer.ggml.add_bos_token", (b) -> b.u32(7).u8(this.addBos ? 1 : 0));
			}
			w.kv("tokenizer.ggml.tokens", strings(this.tokens));
			w.kv("tokenizer.ggml.token_type", (b) -> {
				b.u32(9).u32(5).u64(this.types.size());
				this.types.forEach(b::u32);
			});
			w.kv("tokenizer.ggml.merges", strings(this.merges));
			w.kv("tokenizer.ggml.eos_token_id", (b) -> b.u32(4).u32(this.eos));
			Path path = Files.write(Files.createTempFile(BpeTokenizerTinyVocabularyTest.this.dir, "t", ".gguf"),
					w.write());
			try (GgufFile file = GgufFile.open(path)) {
				return BpeTokenizer.fromGguf(file);
			}
		}

		private static Consumer<GgufWriter.Bytes> strings(List<String> values) {
			return (b) -> {
				b.u32(9).u32(8).u64(values.size());
				values.forEach(b::str);
			};
		}

	}

	@Test
	void mergesByRankThenPosition() throws IOException {
		BpeTokenizer t = new Keys().open();
		assertThat(t.encode("abc")).containsExactly(21); // a b -> ab, then ab c -> abc
		assertThat(t.encode("aab")).containsExactly(3, 19); // "a b" outranks "a a"
		assertThat(t.encode("aaa")).containsExactly(26, 3); // leftmost first
		assertThat(t.encode("aaaa")).containsExactly(26, 26);
		assertThat(t.encode("é")).containsExactly(25);
		assertThat(t.encode("")).isEmpty();
	}

	@Test
	void splitsDigitsAndWordsAsSmolLm() throws IOException {
		BpeTokenizer t = new Keys().open();
		assertThat(t.encode("12")).containsExactly(7, 8); // "1 2" never applies
		assertThat(t.encode("a b")).containsExactly(3, 6, 4);
		assertThat(t.encode(" a")).containsExactly(22);
		assertThat(t.encode("a  a")).containsExactly(3, 6, 22); // the last space joins
																// "a"
		assertThat(t.encode("a   ")).containsExactly(3, 27, 6); // a trailing run stays
																// whole
		assertThat(t.encode("a's")).containsExactly(3, 24);
		assertThat(t.encode("a\nb")).containsExactly(3, 18, 4);
	}

	@Test
	void matchesSpecialTokensFirstAndLongest() throws IOException {
		BpeTokenizer t = new Keys().open();
		assertThat(t.encode("<s>abc</s>")).containsExactly(0, 21, 1);
		assertThat(t.encode("<s>!")).containsExactly(2);
		assertThat(t.encode("<s>?")).containsExactly(0, 12);
		assertThat(t.encode("<s")).containsExactly(13, 10);
		assertThat(t.isSpecial(2)).isTrue();
		assertThat(t.isSpecial(3)).isFalse();
		assertThat(t.eosId()).isEqualTo(1);
		assertThat(t.vocabularySize()).isEqualTo(28);
		assertThat(t.piece(22)).isEqualTo("Ġa");
	}

	@Test
	void dropsBytesWithoutATokenAndDecodesMalformedBytesAsReplacement() throws IOException {
		BpeTokenizer t = new Keys().open();
		assertThat(t.hasByteToken('x')).isFalse();
		assertThat(t.hasByteToken('a')).isTrue();
		assertThat(t.encode("axb")).containsExactly(19); // 'x' dropped, a and b merge
		assertThat(t.decode(new int[] { 19, 22 })).isEqualTo("ab a");
		assertThat(t.decode(new int[] { 16 })).isEqualTo("\uFFFD");
		assertThat(t.decode(new int[] { 0, 21, 1 })).isEqualTo("<s>abc</s>");
		assertThat(t.encode("a\uD800")).containsExactly(3); // U+FFFD's bytes have no
															// tokens
	}

	@Test
	void hugeWordEncodesWithinAHangGuard() throws IOException {
		BpeTokenizer t = new Keys().open();
		String word = "ab".repeat(BpeTokenizer.MAX_TEXT_CHARS / 2);
		int[] ids = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(10),
				() -> t.encode(word));
		assertThat(ids).hasSize(BpeTokenizer.MAX_TEXT_CHARS / 2).containsOnly(19);
	}

	private void assertRefused(Consumer<Keys> change, String... messageParts) {
		Keys keys = new Keys();
		change.accept(keys);
		assertThatExceptionOfType(GgufFormatException.class).isThrownBy(keys::open)
			.withMessageContainingAll(messageParts);
	}

	@Test
	void refusesTokenizersItDoesNotImplement() {
		assertRefused((k) -> k.model = "llama", "'tokenizer.ggml.model'", "'llama'");
		assertRefused((k) -> k.model = null, "'tokenizer.ggml.model' is missing");
		assertRefused((k) -> k.pre = "default", "'tokenizer.ggml.pre'", "'default'");
		assertRefused((k) -> k.addBos = true, "'tokenizer.ggml.add_bos_token'");
		assertRefused((k) -> k.types.set(5, 4), "token 5", "type 4");
	}

	@Test
	void refusesInconsistentVocabularies() {
		assertRefused((k) -> k.types.remove(0), "'tokenizer.ggml.token_type'", "27 elements", "not 28");
		assertRefused((k) -> k.merges.add("a z"), "merge 10", "'z'", "not a token");
		assertRefused((k) -> k.merges.add("b a"), "merge 10", "'ba'", "not a token");
		assertRefused((k) -> k.merges.add("ab"), "merge 10", "not two tokens");
		assertRefused((k) -> k.merges.add("a b"), "merge 10", "repeats merge 0");
		assertRefused((k) -> k.tokens.set(4, "a"), "token 4", "repeats token 3");
		assertRefused((k) -> k.eos = 28, "'tokenizer.ggml.eos_token_id'", "28");
		assertRefused((k) -> {
			k.tokens.add("");
			k.types.add(3);
		}, "special token 28", "0 code points");
		assertRefused((k) -> {
			k.tokens.add("<" + "x".repeat(300) + ">");
			k.types.add(3);
		}, "special token 28", "302 code points");
	}

	@Test
	void refusesTooLongText() throws IOException {
		BpeTokenizer t = new Keys().open();
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> t.encode("a".repeat(BpeTokenizer.MAX_TEXT_CHARS + 1)))
			.withMessageContaining((BpeTokenizer.MAX_TEXT_CHARS + 1) + " chars");
	}

}
