package dev.nixl4j.sample.model;

import java.nio.charset.StandardCharsets;

/**
 * GPT-2's byte-level alphabet: each byte is a printable char, so that a vocabulary entry
 * is text. The printable bytes '!' to '~', U+00A1 to U+00AC and U+00AE to U+00FF stand
 * for themselves; the other 68 bytes, in order, for U+0100 onwards.
 */
final class ByteLevel {

	private static final char[] BYTE_TO_CHAR = new char[256];

	private static final int[] CHAR_TO_BYTE;

	static {
		int shifted = 0;
		for (int b = 0; b < 256; b++) {
			boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
			BYTE_TO_CHAR[b] = printable ? (char) b : (char) (256 + shifted++);
		}
		CHAR_TO_BYTE = new int[256 + shifted];
		java.util.Arrays.fill(CHAR_TO_BYTE, -1);
		for (int b = 0; b < 256; b++) {
			CHAR_TO_BYTE[BYTE_TO_CHAR[b]] = b;
		}
	}

	private ByteLevel() {
	}

	/** The char that stands for a byte. */
	static char charOf(int b) {
		return BYTE_TO_CHAR[b];
	}

	/**
	 * The bytes a vocabulary entry stands for: its chars mapped back to bytes when all
	 * are byte-level chars, else the entry's own UTF-8 bytes.
	 */
	static byte[] bytes(String piece) {
		byte[] bytes = new byte[piece.length()];
		for (int i = 0; i < piece.length(); i++) {
			char c = piece.charAt(i);
			int b = (c < CHAR_TO_BYTE.length) ? CHAR_TO_BYTE[c] : -1;
			if (b < 0) {
				return piece.getBytes(StandardCharsets.UTF_8);
			}
			bytes[i] = (byte) b;
		}
		return bytes;
	}

}
