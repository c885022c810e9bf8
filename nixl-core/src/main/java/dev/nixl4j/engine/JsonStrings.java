package dev.nixl4j.engine;

/**
 * Writes JSON string literals, for the few places that write JSON by hand (the connect layer's
 * wire format, the CLI's reports).
 */
public final class JsonStrings {

	private JsonStrings() {
	}

	/**
	 * Appends a string as a quoted JSON literal, escaping quotes, backslashes and control
	 * characters.
	 * @param json where to append
	 * @param text the string
	 */
	public static void append(StringBuilder json, String text) {
		json.append('"');
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					if (c < 0x20) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

}
