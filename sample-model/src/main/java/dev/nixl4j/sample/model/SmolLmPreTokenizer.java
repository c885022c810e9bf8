package dev.nixl4j.sample.model;

/**
 * SmolLM2's pre-tokenizer over code points: every number character ({@code \p{N}}) is a
 * word of its own, and each run between them is split by the GPT-2 pattern
 * {@code 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+},
 * with the run's end as the end of the input. Written as a single forward scan rather
 * than a regular expression, so its time is linear in the input whatever the input holds.
 */
final class SmolLmPreTokenizer {

	/** Receives each word as a range of the code point array. */
	@FunctionalInterface
	interface WordSink {

		void word(int start, int end);

	}

	private SmolLmPreTokenizer() {
	}

	/**
	 * Splits {@code cps[start, end)} into words, in order.
	 * @param cps the code points
	 * @param start the first code point
	 * @param end past the last code point
	 * @param sink receives the words
	 */
	static void split(int[] cps, int start, int end, WordSink sink) {
		int runStart = start;
		for (int i = start; i < end; i++) {
			if (isNumber(cps[i])) {
				splitRun(cps, runStart, i, sink);
				sink.word(i, i + 1);
				runStart = i + 1;
			}
		}
		splitRun(cps, runStart, end, sink);
	}

	/** The GPT-2 pattern over a run that holds no number characters. */
	private static void splitRun(int[] cps, int start, int end, WordSink sink) {
		int i = start;
		while (i < end) {
			int c = cps[i];
			int next = (i + 1 < end) ? cps[i + 1] : -1;
			int length = contraction(cps, i, end);
			if (length == 0) {
				int from = (c == ' ' && next >= 0 && !isSpace(next)) ? i + 1 : i;
				int first = cps[from];
				if (from > i || !isSpace(first)) {
					// " ?\p{L}+", " ?\p{N}+" or " ?[^\s\p{L}\p{N}]+": a run of one class.
					int kind = kind(first);
					int j = from + 1;
					while (j < end && kind(cps[j]) == kind) {
						j++;
					}
					length = j - i;
				}
				else {
					// "\s+(?!\S)" leaves the last space of a run followed by a non-space
					// to the next word; "\s+" takes a single space.
					int j = i + 1;
					while (j < end && isSpace(cps[j])) {
						j++;
					}
					length = (j == end || j - i == 1) ? j - i : j - i - 1;
				}
			}
			sink.word(i, i + length);
			i += length;
		}
	}

	/** The length of a contraction ('s 't 're 've 'm 'll 'd) at {@code i}, or 0. */
	private static int contraction(int[] cps, int i, int end) {
		if (cps[i] != '\'' || i + 1 >= end) {
			return 0;
		}
		int a = cps[i + 1];
		if (a == 's' || a == 't' || a == 'm' || a == 'd') {
			return 2;
		}
		if (i + 2 < end) {
			int b = cps[i + 2];
			if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) {
				return 3;
			}
		}
		return 0;
	}

	private static final int LETTER = 0;

	private static final int NUMBER = 1;

	private static final int SPACE = 2;

	private static final int OTHER = 3;

	private static int kind(int cp) {
		if (Character.isLetter(cp)) {
			return LETTER;
		}
		if (isNumber(cp)) {
			return NUMBER;
		}
		return isSpace(cp) ? SPACE : OTHER;
	}

	/** {@code \p{N}}: the general categories Nd, Nl and No. */
	static boolean isNumber(int cp) {
		int type = Character.getType(cp);
		return type == Character.DECIMAL_DIGIT_NUMBER || type == Character.LETTER_NUMBER
				|| type == Character.OTHER_NUMBER;
	}

	/**
	 * {@code \s} as Oniguruma defines it for Unicode: U+0009 to U+000D, U+0085 and the
	 * space, line and paragraph separators.
	 */
	static boolean isSpace(int cp) {
		if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x85) {
			return true;
		}
		int type = Character.getType(cp);
		return type == Character.SPACE_SEPARATOR || type == Character.LINE_SEPARATOR
				|| type == Character.PARAGRAPH_SEPARATOR;
	}

}
