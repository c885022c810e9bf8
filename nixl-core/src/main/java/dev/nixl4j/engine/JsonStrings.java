package dev.nixl4j.engine;

import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;

/**
 * Writes JSON string literals and containers, for the few places that write JSON by hand (the
 * connect layer's wire format, the CLI's reports); each of them writes its own scalars.
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

	/**
	 * Appends a {@link Map} as an object (keys as strings, in its iteration order) or a
	 * {@link List} as an array, without whitespace, writing each member with {@code members}.
	 * @param json where to append
	 * @param value the value
	 * @param members writes one member value
	 * @return {@code true} when the value was a map or a list, {@code false} (nothing appended)
	 * otherwise
	 */
	public static boolean appendContainer(StringBuilder json, @Nullable Object value,
			BiConsumer<StringBuilder, @Nullable Object> members) {
		if (value instanceof Map<?, ?> map) {
			json.append('{');
			boolean first = true;
			for (Map.Entry<?, ?> entry : map.entrySet()) {
				if (!first) {
					json.append(',');
				}
				first = false;
				append(json, String.valueOf(entry.getKey()));
				json.append(':');
				members.accept(json, entry.getValue());
			}
			json.append('}');
			return true;
		}
		if (value instanceof List<?> list) {
			json.append('[');
			for (int i = 0; i < list.size(); i++) {
				if (i > 0) {
					json.append(',');
				}
				members.accept(json, list.get(i));
			}
			json.append(']');
			return true;
		}
		return false;
	}

}
