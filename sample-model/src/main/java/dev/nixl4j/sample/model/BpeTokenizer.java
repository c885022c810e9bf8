package dev.nixl4j.sample.model;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Byte-level BPE over the GGUF's {@code tokenizer.ggml.*} vocabulary, merges and token
 * types, as SmolLM2 defines it (pre-tokenizer {@code smollm}). {@link #encode} first
 * matches the special (CONTROL-type) tokens in the text, leftmost and then longest; each
 * stretch of text between them is split into words (every number character on its own,
 * then the GPT-2 pattern), each word's UTF-8 bytes become the byte-level tokens, and the
 * merges apply by rank. No BOS is added. Immutable and safe to share between threads.
 *
 * <p>
 * A lone surrogate in the text is encoded as U+FFFD (the bytes EF BF BD), as if the text
 * held U+FFFD there ({@code String.getBytes(UTF_8)} would write '?' instead; Hugging
 * Face's tokenizers refuses such a string). A byte that has no token in the vocabulary
 * ({@link #hasByteToken}) is dropped, as Hugging Face's BPE without an unknown token
 * drops it, so {@code decode(encode(s))} gives back {@code s} when all of its bytes have
 * tokens.
 */
public final class BpeTokenizer {

	/** The longest text {@link #encode} accepts, in chars. */
	public static final int MAX_TEXT_CHARS = 1 << 20;

	/** The most tokens a vocabulary may have. */
	public static final int MAX_VOCABULARY = 1 << 20;

	/** The most merges a file may have. */
	public static final int MAX_MERGES = 1 << 21;

	/** The longest special token, in code points. */
	public static final int MAX_SPECIAL_CODE_POINTS = 256;

	static final String TOKENS = "tokenizer.ggml.tokens";

	static final String TYPES = "tokenizer.ggml.token_type";

	static final String MERGES = "tokenizer.ggml.merges";

	static final String EOS = "tokenizer.ggml.eos_token_id";

	/** GGUF token types. */
	static final int NORMAL = 1;

	static final int CONTROL = 3;

	static final int USER_DEFINED = 4;

	static final int BYTE = 6;

	private final String[] pieces;

	private final byte[][] pieceBytes;

	private final boolean[] special;

	private final int[] byteToId = new int[256];

	private final BpeMerges merges;

	private final SpecialTokens specials = new SpecialTokens();

	private final int eos;

	BpeTokenizer(List<String> tokens, int[] types, List<String> mergeList, int eos) {
		int n = tokens.size();
		if (types.length != n) {
			throw new GgufFormatException(
					"metadata key '" + TYPES + "' has " + types.length + " elements, not " + n + " (the tokens)");
		}
		if (eos < 0 || eos >= n) {
			throw new GgufFormatException(
					"metadata key '" + EOS + "': " + eos + " is not a token id (0 to " + (n - 1) + ")");
		}
		this.eos = eos;
		this.pieces = tokens.toArray(new String[0]);
		this.pieceBytes = new byte[n][];
		this.special = new boolean[n];
		Map<String, Integer> ids = HashMap.newHashMap(n);
		for (int id = 0; id < n; id++) {
			String piece = this.pieces[id];
			Integer earlier = ids.putIfAbsent(piece, id);
			if (earlier != null) {
				throw new GgufFormatException("metadata key '" + TOKENS + "': token " + id + " " + quote(piece)
						+ " repeats token " + earlier);
			}
			int type = types[id];
			if (type < NORMAL || type > BYTE || type == USER_DEFINED) {
				throw new GgufFormatException("metadata key '" + TYPES + "': token " + id + " " + quote(piece)
						+ " has type " + type + ", not NORMAL (1), UNKNOWN (2), CONTROL (3), UNUSED (5) or BYTE (6)");
			}
			if (type == CONTROL) {
				this.special[id] = true;
				this.specials.add(piece, id);
			}
			this.pieceBytes[id] = ByteLevel.bytes(piece);
		}
		// A byte without a token is dropped from the text, as Hugging Face's BPE drops it
		// when the vocabulary has no unknown token (SmolLM2's lacks 21 bytes: C0, C1, F5
		// to FF, which UTF-8 never uses, and six control characters).
		for (int b = 0; b < 256; b++) {
			Integer id = ids.get(String.valueOf(ByteLevel.charOf(b)));
			this.byteToId[b] = (id != null) ? id : -1;
		}
		this.merges = new BpeMerges(mergeList.size());
		for (int rank = 0; rank < mergeList.size(); rank++) {
			String merge = mergeList.get(rank);
			int space = (merge.length() > 1) ? merge.indexOf(' ', 1) : -1;
			if (space < 0 || space == merge.length() - 1) {
				throw new GgufFormatException("metadata key '" + MERGES + "': merge " + rank + " " + quote(merge)
						+ " is not two tokens separated by a space");
			}
			String left = merge.substring(0, space);
			String right = merge.substring(space + 1);
			Integer leftId = ids.get(left);
			Integer rightId = ids.get(right);
			Integer result = ids.get(left + right);
			if (leftId == null || rightId == null || result == null) {
				String missing = (leftId == null) ? left : (rightId == null) ? right : left + right;
				throw new GgufFormatException("metadata key '" + MERGES + "': merge " + rank + " " + quote(merge)
						+ " needs " + quote(missing) + ", which is not a token");
			}
			int earlier = this.merges.put(leftId, rightId, rank, result);
			if (earlier >= 0) {
				throw new GgufFormatException("metadata key '" + MERGES + "': merge " + rank + " " + quote(merge)
						+ " repeats merge " + earlier);
			}
		}
	}

	/**
	 * Reads the tokenizer from a GGUF file's metadata.
	 * @param file the open file
	 * @return the tokenizer
	 * @throws GgufFormatException if the file's tokenizer is not a byte-level BPE with
	 * the {@code smollm} pre-tokenizer, adds a BOS, or its vocabulary, token types,
	 * merges or EOS id are missing, too large or inconsistent (the message names the key
	 * and element)
	 */
	public static BpeTokenizer fromGguf(GgufFile file) {
		GgufMetadata m = file.metadata();
		expect(m, "tokenizer.ggml.model", "gpt2");
		expect(m, "tokenizer.ggml.pre", "smollm");
		if (m.contains("tokenizer.ggml.add_bos_token") && m.getBoolean("tokenizer.ggml.add_bos_token")) {
			throw new GgufFormatException(
					"metadata key 'tokenizer.ggml.add_bos_token' is true; this tokenizer never adds a BOS");
		}
		int n = m.arrayLength(TOKENS);
		if (n < 1 || n > MAX_VOCABULARY) {
			throw new GgufFormatException(
					"metadata key '" + TOKENS + "' has " + n + " tokens, not 1 to " + MAX_VOCABULARY);
		}
		int types = m.arrayLength(TYPES);
		if (types != n) {
			throw new GgufFormatException(
					"metadata key '" + TYPES + "' has " + types + " elements, not " + n + " (the tokens)");
		}
		int merges = m.arrayLength(MERGES);
		if (merges > MAX_MERGES) {
			throw new GgufFormatException(
					"metadata key '" + MERGES + "' has " + merges + " merges, more than " + MAX_MERGES);
		}
		return new BpeTokenizer(m.getStringArray(TOKENS), m.getIntArray(TYPES), m.getStringArray(MERGES),
				m.getInt(EOS));
	}

	private static void expect(GgufMetadata m, String key, String expected) {
		String actual = m.getString(key);
		if (!actual.equals(expected)) {
			throw new GgufFormatException(
					"metadata key '" + key + "' is " + quote(actual) + ", not " + quote(expected));
		}
	}

	/**
	 * Encodes text into token ids.
	 * @param text the text, at most {@link #MAX_TEXT_CHARS} chars
	 * @return the ids, without a BOS
	 * @throws IllegalArgumentException if the text is longer than {@link #MAX_TEXT_CHARS}
	 */
	public int[] encode(String text) {
		if (text.length() > MAX_TEXT_CHARS) {
			throw new IllegalArgumentException(
					"text of " + text.length() + " chars is longer than " + MAX_TEXT_CHARS + " chars");
		}
		int[] cps = codePoints(text);
		Encoding out = new Encoding(cps);
		int segment = 0;
		int i = 0;
		while (i < cps.length) {
			long match = this.specials.longestAt(cps, i);
			if (match < 0) {
				i++;
				continue;
			}
			SmolLmPreTokenizer.split(cps, segment, i, out::word);
			out.add((int) match);
			i += (int) (match >>> 32);
			segment = i;
		}
		SmolLmPreTokenizer.split(cps, segment, cps.length, out::word);
		return Arrays.copyOf(out.ids, out.count);
	}

	/** The ids of one encoding, and its working arrays. */
	private final class Encoding {

		final int[] cps;

		int[] ids = new int[16];

		int count;

		int[] word = new int[64];

		final BpeMerges.Scratch scratch = new BpeMerges.Scratch();

		Encoding(int[] cps) {
			this.cps = cps;
		}

		void add(int id) {
			if (this.count == this.ids.length) {
				this.ids = Arrays.copyOf(this.ids, 2 * this.count);
			}
			this.ids[this.count++] = id;
		}

		/** A word's UTF-8 bytes as byte-level tokens, merged. */
		void word(int start, int end) {
			int capacity = 4 * (end - start);
			if (this.word.length < capacity) {
				this.word = new int[capacity];
			}
			int n = 0;
			for (int i = start; i < end; i++) {
				n = utf8(this.cps[i], this.word, n);
			}
			n = BpeTokenizer.this.merges.merge(this.word, n, this.scratch);
			for (int i = 0; i < n; i++) {
				add(this.word[i]);
			}
		}

		/**
		 * Appends the byte tokens of a code point's UTF-8 bytes, skipping bytes without
		 * one.
		 */
		private int utf8(int cp, int[] dst, int at) {
			if (cp < 0x80) {
				return put(cp, dst, at);
			}
			if (cp < 0x800) {
				at = put(0xC0 | (cp >>> 6), dst, at);
			}
			else if (cp < 0x10000) {
				at = put(0xE0 | (cp >>> 12), dst, at);
				at = put(0x80 | ((cp >>> 6) & 0x3F), dst, at);
			}
			else {
				at = put(0xF0 | (cp >>> 18), dst, at);
				at = put(0x80 | ((cp >>> 12) & 0x3F), dst, at);
				at = put(0x80 | ((cp >>> 6) & 0x3F), dst, at);
			}
			return put(0x80 | (cp & 0x3F), dst, at);
		}

		private int put(int b, int[] dst, int at) {
			int id = BpeTokenizer.this.byteToId[b];
			if (id >= 0) {
				dst[at++] = id;
			}
			return at;
		}

	}

	/** The text's code points, a lone surrogate replaced by U+FFFD. */
	private static int[] codePoints(String text) {
		int[] cps = new int[text.length()];
		int n = 0;
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
				cps[n++] = Character.toCodePoint(c, text.charAt(++i));
			}
			else {
				cps[n++] = Character.isSurrogate(c) ? 0xFFFD : c;
			}
		}
		return Arrays.copyOf(cps, n);
	}

	/**
	 * Decodes token ids: the bytes of all their pieces joined, then read as UTF-8, a
	 * malformed sequence becoming U+FFFD. A piece whose chars are all byte-level chars
	 * stands for those bytes; any other piece (a special token with other chars) for its
	 * own UTF-8 bytes.
	 * @param ids the ids
	 * @return the text
	 * @throws IllegalArgumentException if an id is not in the vocabulary (naming its
	 * position), or the text would be too long for a string
	 */
	public String decode(int[] ids) {
		long total = 0;
		for (int i = 0; i < ids.length; i++) {
			checkId(ids[i], "ids[" + i + "]");
			total += this.pieceBytes[ids[i]].length;
		}
		if (total > Integer.MAX_VALUE - 16) {
			throw new IllegalArgumentException(
					ids.length + " ids decode to " + total + " bytes, too many for a string");
		}
		byte[] bytes = new byte[(int) total];
		int at = 0;
		for (int id : ids) {
			byte[] piece = this.pieceBytes[id];
			System.arraycopy(piece, 0, bytes, at, piece.length);
			at += piece.length;
		}
		return new String(bytes, StandardCharsets.UTF_8);
	}

	/**
	 * Returns whether a byte has a token; text with a byte that has none loses it.
	 * @param b the byte, 0 to 255
	 * @return whether {@link #encode} keeps it
	 * @throws IllegalArgumentException if {@code b} is not a byte value
	 */
	public boolean hasByteToken(int b) {
		if (b < 0 || b > 255) {
			throw new IllegalArgumentException("byte = " + b + " is not 0 to 255");
		}
		return this.byteToId[b] >= 0;
	}

	/**
	 * Returns the number of tokens in the vocabulary.
	 * @return the vocabulary size
	 */
	public int vocabularySize() {
		return this.pieces.length;
	}

	/**
	 * Returns the end-of-sequence id ({@code tokenizer.ggml.eos_token_id}).
	 * @return the EOS id
	 */
	public int eosId() {
		return this.eos;
	}

	/**
	 * Returns whether a token is special (CONTROL-type): matched in text before
	 * pre-tokenization.
	 * @param id the id
	 * @return whether it is special
	 * @throws IllegalArgumentException if the id is not in the vocabulary
	 */
	public boolean isSpecial(int id) {
		checkId(id, "id");
		return this.special[id];
	}

	/**
	 * Returns a token's vocabulary entry (byte-level chars for ordinary tokens), for
	 * diagnostics.
	 * @param id the id
	 * @return the piece
	 * @throws IllegalArgumentException if the id is not in the vocabulary
	 */
	public String piece(int id) {
		checkId(id, "id");
		return this.pieces[id];
	}

	private void checkId(int id, String what) {
		if (id < 0 || id >= this.pieces.length) {
			throw new IllegalArgumentException(
					what + " = " + id + " is not a token id (0 to " + (this.pieces.length - 1) + ")");
		}
	}

	static String quote(String s) {
		String shown = (s.length() > 64) ? s.substring(0, 64) + "..." : s;
		return "'" + shown.replace("\n", "\\n") + "'";
	}

}
