package dev.nixl4j.sample.model;

import java.util.HashMap;
import java.util.Map;

/**
 * The special tokens of a vocabulary in a trie over code points: {@link #longestAt} finds
 * the longest one that starts at a position, in time bounded by the longest token.
 */
final class SpecialTokens {

	/** The most code points all special tokens together may have. */
	static final int MAX_TOTAL_CODE_POINTS = 1 << 20;

	private static final class Node {

		final Map<Integer, Node> children = new HashMap<>(4);

		int id = -1;

	}

	private final Node root = new Node();

	private int total;

	/**
	 * Adds a special token.
	 * @throws GgufFormatException if the token is empty or too long, or the tokens
	 * together are too long
	 */
	void add(String token, int id) {
		int length = token.codePointCount(0, token.length());
		if (length == 0 || length > BpeTokenizer.MAX_SPECIAL_CODE_POINTS) {
			throw new GgufFormatException(
					"metadata key '" + BpeTokenizer.TOKENS + "': special token " + id + " " + BpeTokenizer.quote(token)
							+ " has " + length + " code points, not 1 to " + BpeTokenizer.MAX_SPECIAL_CODE_POINTS);
		}
		this.total += length;
		if (this.total > MAX_TOTAL_CODE_POINTS) {
			throw new GgufFormatException("metadata key '" + BpeTokenizer.TOKENS
					+ "': the special tokens have more than " + MAX_TOTAL_CODE_POINTS + " code points in all");
		}
		Node node = this.root;
		for (int i = 0; i < token.length();) {
			int cp = token.codePointAt(i);
			node = node.children.computeIfAbsent(cp, (k) -> new Node());
			i += Character.charCount(cp);
		}
		node.id = id;
	}

	/**
	 * Finds the longest special token at {@code cps[start]}.
	 * @return its length in code points in the high 32 bits and its id in the low 32
	 * bits, or {@code -1} if none starts there
	 */
	long longestAt(int[] cps, int start) {
		long found = -1;
		Node node = this.root;
		for (int i = start; i < cps.length; i++) {
			node = node.children.get(cps[i]);
			if (node == null) {
				break;
			}
			if (node.id >= 0) {
				found = ((long) (i + 1 - start) << 32) | node.id;
			}
		}
		return found;
	}

}
