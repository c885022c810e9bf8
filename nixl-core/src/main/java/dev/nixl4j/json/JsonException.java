package dev.nixl4j.json;

/**
 * JSON text that {@link JsonReader} refuses: malformed, or beyond one of the reader's
 * limits. The message names what was wrong, what was expected and where.
 */
public final class JsonException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final int offset;

	JsonException(String message, int offset) {
		super((offset < 0) ? message : message + " at offset " + offset);
		this.offset = offset;
	}

	/**
	 * Returns where in the text the reader stopped.
	 * @return the offset of the offending character (the text's length when the text
	 * ended too early), or {@code -1} when the text was refused as a whole before reading
	 * it
	 */
	public int offset() {
		return this.offset;
	}

}
