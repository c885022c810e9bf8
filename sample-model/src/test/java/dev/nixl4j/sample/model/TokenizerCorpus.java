package dev.nixl4j.sample.model;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

/**
 * Seeded test strings for the tokenizer: English, code, long numbers, accents, CJK,
 * emoji, right-to-left scripts, combining marks, whitespace runs, embedded special
 * tokens, random code points, random bytes read as UTF-8, control characters, and
 * mixtures of these.
 */
final class TokenizerCorpus {

	private static final String[] WORDS = { "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "I",
			"don't", "can't", "it's", "we're", "they've", "I'm", "you'll", "he'd", "IT'S", "O'Brien", "rock'n'roll",
			"model", "tokenizer", "GPU", "memory", "transfer", "Hello", "world", "NVIDIA", "agent", "a", "an", "of" };

	private static final String[] PUNCTUATION = { ".", ",", "!", "?", ";", ":", "...", " -", "--", "\"", "'", "(", ")",
			"[", "]", "{", "}", "@", "#", "$", "%", "&", "*", "/", "\\", "|", "~", "`", "^", "_", "+", "=", "<", ">" };

	private static final String[] CODE = { "public static void main(String[] args) {", "    return x + y;",
			"\tif (a == b && c != d) {", "def f(x, y=3):\n    return x ** 2", "for (int i = 0; i < n; i++) {", "}\n",
			"// comment: TODO", "#include <stdio.h>", "x = [1, 2, 3]\n", "console.log(`${a}`);",
			"SELECT * FROM t WHERE id = 42;", "fn main() -> Result<(), Box<dyn Error>> {", "<div class=\"a\">",
			"  \"key\": \"value\",", "a->b->c", "i += 1;;", "@Override", "0x1F2E3D", "lambda: None", "/* x */" };

	private static final String[] EMOJI = { "😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "🇯🇵", "1️⃣", "❤️", "🏳️‍🌈", "🤖",
			"🦀", "☕", "✨", "🧑🏿‍💻", "😂😂😂" };

	private static final String[] SPECIALS = { "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<repo_name>",
			"<reponame>", "<file_sep>", "<filename>", "<gh_stars>", "<issue_start>", "<issue_comment>",
			"<issue_closed>", "<jupyter_start>", "<jupyter_text>", "<jupyter_code>", "<jupyter_output>",
			"<jupyter_script>", "<empty_output>", "<|im_start", "<|im_end|", "im_end|>", "<|", "|>", "<<|im_end|>>",
			"<repo_name", "<|endoftext|><|endoftext|>" };

	private static final int[] SPACES = { ' ', '\t', '\n', '\r', 0x0B, 0x0C, 0x85, 0xA0, 0x1680, 0x2000, 0x2005, 0x200A,
			0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0x1C, 0x1D, 0x1E, 0x1F, 0x200B, 0x180E, 0xFEFF };

	private static final String[] DIGITS = { "0123456789", "٠١٢٣٤٥٦٧٨٩", "０１２３４５６７８９", "²³¹", "ⅠⅡⅫⅿ", "①②⑳", "½¼", "߀߁",
			"०१२" };

	private final Random random;

	TokenizerCorpus(long seed) {
		this.random = new Random(seed);
	}

	/** {@code perKind} strings of each kind, then as many mixtures. */
	List<String> strings(int perKind) {
		List<Function<Random, String>> kinds = List.of(this::english, this::code, this::numbers, this::accents,
				this::cjk, this::emoji, this::rtl, this::combining, this::whitespace, this::specials,
				this::randomCodePoints, this::randomBytes, this::controls);
		List<String> out = new ArrayList<>();
		for (Function<Random, String> kind : kinds) {
			for (int i = 0; i < perKind; i++) {
				out.add(kind.apply(this.random));
			}
		}
		for (int i = 0; i < perKind * 2; i++) {
			StringBuilder b = new StringBuilder();
			int parts = 2 + this.random.nextInt(4);
			for (int p = 0; p < parts; p++) {
				b.append(kinds.get(this.random.nextInt(kinds.size())).apply(this.random));
			}
			out.add(b.toString());
		}
		return out;
	}

	private static String pick(Random r, String[] options) {
		return options[r.nextInt(options.length)];
	}

	private String english(Random r) {
		StringBuilder b = new StringBuilder();
		int words = 1 + r.nextInt(20);
		for (int i = 0; i < words; i++) {
			if (i > 0) {
				b.append(r.nextInt(12) == 0 ? "  " : " ");
			}
			b.append(pick(r, WORDS));
			if (r.nextInt(5) == 0) {
				b.append(pick(r, PUNCTUATION));
			}
		}
		return b.toString();
	}

	private String code(Random r) {
		StringBuilder b = new StringBuilder();
		int lines = 1 + r.nextInt(6);
		for (int i = 0; i < lines; i++) {
			b.append(" ".repeat(r.nextInt(3) * 4)).append(pick(r, CODE)).append(r.nextBoolean() ? "\n" : "\r\n");
		}
		return b.toString();
	}

	private String numbers(Random r) {
		StringBuilder b = new StringBuilder();
		int parts = 1 + r.nextInt(4);
		for (int i = 0; i < parts; i++) {
			String digits = (r.nextInt(4) == 0) ? pick(r, DIGITS) : "0123456789";
			int length = 1 + r.nextInt(40);
			int[] cps = digits.codePoints().toArray();
			for (int k = 0; k < length; k++) {
				b.appendCodePoint(cps[r.nextInt(cps.length)]);
			}
			b.append(pick(r, new String[] { " ", ".", ",", "e-", " x ", "-", "", " 1,234,567.89 ", "%" }));
		}
		return b.toString();
	}

	private String accents(Random r) {
		String[] words = { "café", "naïve", "résumé", "Ærøskøbing", "Straße", "ĳssel", "e\u0301te\u0301", "Ωμέγα",
				"Привет", "čšž", "Ğüzel", "ﬁne", "Å", "A\u030a" };
		return pick(r, words) + " " + pick(r, words) + (r.nextBoolean() ? "" : " " + pick(r, WORDS));
	}

	private String range(Random r, int from, int to, int count) {
		StringBuilder b = new StringBuilder();
		for (int i = 0; i < count; i++) {
			b.appendCodePoint(from + r.nextInt(to - from + 1));
		}
		return b.toString();
	}

	private String cjk(Random r) {
		return switch (r.nextInt(4)) {
			case 0 -> range(r, 0x4E00, 0x9FFF, 1 + r.nextInt(12)) + "。" + range(r, 0x4E00, 0x9FFF, 3);
			case 1 -> range(r, 0x3041, 0x3096, 1 + r.nextInt(8)) + range(r, 0x30A1, 0x30FA, 4) + "、";
			case 2 -> range(r, 0xAC00, 0xD7A3, 1 + r.nextInt(8)) + " " + range(r, 0xAC00, 0xD7A3, 2);
			default -> "日本語 text 中文 " + range(r, 0x20000, 0x2A6DF, 2);
		};
	}

	private String emoji(Random r) {
		return pick(r, EMOJI) + (r.nextBoolean() ? " " : "") + pick(r, WORDS) + pick(r, EMOJI) + pick(r, EMOJI);
	}

	private String rtl(Random r) {
		return switch (r.nextInt(3)) {
			case 0 -> range(r, 0x0627, 0x064A, 2 + r.nextInt(6)) + " " + range(r, 0x0660, 0x0669, 3) + " "
					+ range(r, 0x0627, 0x064A, 4) + "\u064E\u0650";
			case 1 -> range(r, 0x05D0, 0x05EA, 2 + r.nextInt(6)) + " " + range(r, 0x05D0, 0x05EA, 3) + "\u05B7";
			default -> "\u202Eabc\u202C " + range(r, 0x0627, 0x064A, 3) + " 123 " + range(r, 0x05D0, 0x05EA, 3);
		};
	}

	private String combining(Random r) {
		StringBuilder b = new StringBuilder();
		int letters = 1 + r.nextInt(6);
		for (int i = 0; i < letters; i++) {
			b.append((char) ('a' + r.nextInt(26))).append(range(r, 0x0300, 0x036F, r.nextInt(5)));
		}
		return b.append(r.nextBoolean() ? " \u0301x" : "\u20DD").toString();
	}

	private String whitespace(Random r) {
		StringBuilder b = new StringBuilder();
		int parts = 1 + r.nextInt(5);
		for (int i = 0; i < parts; i++) {
			int run = 1 + r.nextInt(r.nextBoolean() ? 4 : 40);
			for (int k = 0; k < run; k++) {
				b.appendCodePoint(SPACES[r.nextInt(r.nextBoolean() ? 4 : SPACES.length)]);
			}
			if (r.nextInt(4) != 0) {
				b.append(r.nextBoolean() ? pick(r, WORDS) : pick(r, PUNCTUATION));
			}
		}
		return b.toString();
	}

	private String specials(Random r) {
		if (r.nextBoolean()) {
			return "<|im_start|>user\n" + english(r) + "<|im_end|>\n<|im_start|>assistant\n" + pick(r, SPECIALS);
		}
		StringBuilder b = new StringBuilder();
		int parts = 1 + r.nextInt(5);
		for (int i = 0; i < parts; i++) {
			b.append(pick(r, SPECIALS)).append(r.nextBoolean() ? pick(r, WORDS) : pick(r, PUNCTUATION));
		}
		return b.toString();
	}

	private String randomCodePoints(Random r) {
		StringBuilder b = new StringBuilder();
		int count = 1 + r.nextInt(24);
		for (int i = 0; i < count; i++) {
			int plane = r.nextInt(4);
			int cp = (plane == 0) ? r.nextInt(0x10000) : (plane == 1) ? 0x10000 + r.nextInt(0x30000) : r.nextInt(0x800);
			if (Character.isSurrogate((char) cp) && cp < 0x10000) {
				cp = 0xFFFD;
			}
			b.appendCodePoint(cp);
		}
		return b.toString();
	}

	private String randomBytes(Random r) {
		byte[] bytes = new byte[1 + r.nextInt(40)];
		r.nextBytes(bytes);
		return new String(bytes, StandardCharsets.UTF_8);
	}

	private String controls(Random r) {
		return range(r, 0x00, 0x1F, 1 + r.nextInt(4)) + pick(r, WORDS) + "\u0000" + range(r, 0x7F, 0x9F, 2) + "\u00AD";
	}

}
