package dev.nixl4j.json;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Writes compact JSON (no whitespace) that {@link JsonReader} reads back, so that the
 * core module needs no JSON library. It writes only what has one JSON form and refuses
 * the rest with an {@link IllegalArgumentException}: a {@link Map} with {@link String}
 * keys as an object (members in the map's iteration order), a {@link List} as an array, a
 * {@link String}, a {@link Boolean}, {@code null}, and the numbers {@link Long},
 * {@link Integer}, {@link Short}, {@link Byte}, {@link BigInteger}, {@link BigDecimal}
 * and finite {@link Double}s and {@link Float}s. Strings are written with {@code "},
 * {@code \} and control characters escaped and everything else as it is; a string with an
 * unpaired surrogate, which has no UTF-8 form, is refused.
 */
public final class JsonWriter {

	/**
	 * The deepest nesting written, so that a map that contains itself is refused, not
	 * followed.
	 */
	public static final int MAX_DEPTH = 256;

	private JsonWriter() {
	}

	/**
	 * Writes a value.
	 * @param value the value
	 * @return its JSON text
	 * @throws IllegalArgumentException when the value, or a value in it, has no JSON form
	 */
	public static String write(@Nullable Object value) {
		StringBuilder json = new StringBuilder();
		append(json, value, 0);
		return json.toString();
	}

	private static void append(StringBuilder json, @Nullable Object value, int depth) {
		switch (value) {
			case null -> json.append("null");
			case String string -> appendString(json, string);
			case Boolean bool -> json.append(bool.booleanValue());
			case Long _, Integer _, Short _, Byte _, BigInteger _, BigDecimal _ -> json.append(value);
			case Double number -> json.append(finite(number, number.isNaN() || number.isInfinite()));
			case Float number -> json.append(finite(number, number.isNaN() || number.isInfinite()));
			case Map<?, ?> map -> appendObject(json, map, nested(depth));
			case List<?> list -> appendArray(json, list, nested(depth));
			default -> throw new IllegalArgumentException(
					"a " + value.getClass().getName() + " has no JSON form (write it as a string or a number)");
		}
	}

	private static int nested(int depth) {
		if (depth >= MAX_DEPTH) {
			throw new IllegalArgumentException(
					"value nested deeper than " + MAX_DEPTH + " levels (does it contain itself?)");
		}
		return depth + 1;
	}

	private static Number finite(Number number, boolean notFinite) {
		if (notFinite) {
			throw new IllegalArgumentException(number + " has no JSON form");
		}
		return number;
	}

	private static void appendObject(StringBuilder json, Map<?, ?> map, int depth) {
		json.append('{');
		boolean first = true;
		for (Map.Entry<?, ?> entry : map.entrySet()) {
			if (!(entry.getKey() instanceof String key)) {
				throw new IllegalArgumentException("a JSON member name must be a string, not " + entry.getKey());
			}
			if (!first) {
				json.append(',');
			}
			first = false;
			appendString(json, key);
			json.append(':');
			append(json, entry.getValue(), depth);
		}
		json.append('}');
	}

	private static void appendArray(StringBuilder json, List<?> list, int depth) {
		json.append('[');
		for (int i = 0; i < list.size(); i++) {
			if (i > 0) {
				json.append(',');
			}
			append(json, list.get(i), depth);
		}
		json.append(']');
	}

	private static void appendString(StringBuilder json, String text) {
		json.append('"');
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\b' -> json.append("\\b");
				case '\f' -> json.append("\\f");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				default -> {
					if (c < 0x20) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else if (Character.isHighSurrogate(c) && i + 1 < text.length()
							&& Character.isLowSurrogate(text.charAt(i + 1))) {
						json.append(c).append(text.charAt(++i));
					}
					else if (Character.isSurrogate(c)) {
						throw new IllegalArgumentException("the string has an unpaired surrogate U+"
								+ String.format("%04X", (int) c) + " at index " + i);
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
