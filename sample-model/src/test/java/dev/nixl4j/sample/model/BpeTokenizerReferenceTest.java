package dev.nixl4j.sample.model;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The Java tokenizer against Hugging Face {@code tokenizers} built from the same GGUF by
 * {@code src/model/hf_tokenize.py}: identical ids for every string of a seeded corpus,
 * identical text when decoding random id sequences, and {@code decode(encode(s)) == s}.
 */
class BpeTokenizerReferenceTest {

	private static Path model;

	private static Path python;

	private static GgufFile file;

	private static BpeTokenizer tokenizer;

	@BeforeEach
	void open() throws IOException, InterruptedException {
		ModelReference.Opened real = ModelReference.open();
		model = real.model();
		python = real.python();
		file = real.file();
		tokenizer = real.tokenizer();
	}

	@Test
	void encodesAsHuggingFaceTokenizersDoes() throws IOException, InterruptedException {
		List<String> strings = new TokenizerCorpus(20_260_107L).strings(80);
		strings.add("");
		strings.add(new ChatTemplate(file.metadata().getString(ChatTemplate.KEY)).prompt("What is 2+2?"));
		assertThat(strings).hasSizeGreaterThanOrEqualTo(1000);
		List<String> json = new ArrayList<>();
		for (String s : strings) {
			json.add(ModelReference.jsonString(s));
		}
		List<String> requests = ModelReference.requests("encode", json);
		long start = System.nanoTime();
		List<String> answers = ModelReference.jsonLines(python, ModelReference.script("hf_tokenize.py"), model,
				requests, 300);
		long python = System.nanoTime();
		int agreed = 0;
		long tokens = 0;
		List<String> disagreements = new ArrayList<>();
		long javaNanos = 0;
		int roundTrips = 0;
		for (int i = 0; i < strings.size(); i++) {
			String s = strings.get(i);
			int[] expected = ModelReference.ids(answers.get(i), requests.get(i));
			long t0 = System.nanoTime();
			int[] actual = tokenizer.encode(s);
			javaNanos += System.nanoTime() - t0;
			tokens += actual.length;
			if (Arrays.equals(actual, expected)) {
				agreed++;
			}
			else if (disagreements.size() < 10) {
				disagreements.add(requests.get(i) + "\n  hf:   " + Arrays.toString(expected) + "\n  java: "
						+ Arrays.toString(actual));
			}
			if (isValid(s)) {
				roundTrips++;
				assertThat(tokenizer.decode(actual)).as("decode(encode(%s))", requests.get(i)).isEqualTo(s);
			}
		}
		System.out.printf(
				"Tokenizer: %d of %d strings encoded as Hugging Face tokenizers encodes them (%d tokens),"
						+ " %d decoded back to themselves; hf_tokenize.py %.0f ms in all, Java encode %.1f ms in all%n",
				agreed, strings.size(), tokens, roundTrips, (python - start) / 1e6, javaNanos / 1e6);
		if (!disagreements.isEmpty()) {
			fail((strings.size() - agreed) + " strings disagree, first ones:\n" + String.join("\n", disagreements));
		}
	}

	/**
	 * Every code point (surrogates aside) in contexts where its class (letter, number,
	 * space, other) decides the split: Java's Unicode tables against those of Oniguruma
	 * and Rust under Hugging Face.
	 */
	@Test
	void splitsEveryCodePointAsHuggingFaceTokenizersDoes() throws IOException, InterruptedException {
		List<String> strings = new ArrayList<>();
		StringBuilder b = new StringBuilder();
		for (int cp = 0; cp <= Character.MAX_CODE_POINT; cp++) {
			if (cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE) {
				continue;
			}
			b.append("a").appendCodePoint(cp).append(' ').appendCodePoint(cp).append("'s").appendCodePoint(cp);
			if (b.length() > 2000) {
				strings.add(b.toString());
				b.setLength(0);
			}
		}
		strings.add(b.toString());
		List<String> json = new ArrayList<>();
		for (String s : strings) {
			json.add(ModelReference.jsonString(s));
		}
		List<String> requests = ModelReference.requests("encode", json);
		List<String> answers = ModelReference.jsonLines(python, ModelReference.script("hf_tokenize.py"), model,
				requests, 300);
		List<String> disagreements = new ArrayList<>();
		for (int i = 0; i < strings.size(); i++) {
			int[] expected = ModelReference.ids(answers.get(i), requests.get(i));
			if (!Arrays.equals(tokenizer.encode(strings.get(i)), expected) && disagreements.size() < 5) {
				disagreements.add(requests.get(i));
			}
		}
		assertThat(disagreements).isEmpty();
		System.out.printf("Tokenizer: all %d code points split as Hugging Face splits them (%d strings)%n",
				Character.MAX_CODE_POINT + 1 - 2048, strings.size());
	}

	@Test
	void decodesRandomIdsAsHuggingFaceTokenizersDoes() throws IOException, InterruptedException {
		Random random = new Random(7);
		List<int[]> sequences = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			int[] ids = new int[random.nextInt(12)];
			for (int k = 0; k < ids.length; k++) {
				// Mostly the byte tokens and short merges, whose bytes are often not
				// whole UTF-8 sequences.
				ids[k] = random.nextBoolean() ? random.nextInt(600) : random.nextInt(tokenizer.vocabularySize());
			}
			sequences.add(ids);
		}
		List<String> json = new ArrayList<>();
		for (int[] ids : sequences) {
			json.add(Arrays.toString(ids));
		}
		List<String> requests = ModelReference.requests("decode", json);
		List<String> answers = ModelReference.jsonLines(python, ModelReference.script("hf_tokenize.py"), model,
				requests, 300);
		int malformed = 0;
		for (int i = 0; i < sequences.size(); i++) {
			String actual = tokenizer.decode(sequences.get(i));
			assertThat(actual).as("decode %s", requests.get(i))
				.isEqualTo(ModelReference.text(answers.get(i), requests.get(i)));
			malformed += actual.contains("\uFFFD") ? 1 : 0;
		}
		System.out.printf("Tokenizer: %d id sequences decoded as Hugging Face decodes them (%d with U+FFFD)%n",
				sequences.size(), malformed);
		assertThat(malformed).as("sequences that decode to malformed UTF-8").isGreaterThan(10);
	}

	/** Whether the string is well-formed UTF-16 and all its bytes have tokens. */
	private static boolean isValid(String s) {
		try {
			ByteBuffer bytes = StandardCharsets.UTF_8.newEncoder().encode(CharBuffer.wrap(s));
			while (bytes.hasRemaining()) {
				if (!tokenizer.hasByteToken(bytes.get() & 0xFF)) {
					return false;
				}
			}
			return true;
		}
		catch (CharacterCodingException ex) {
			return false;
		}
	}

}
