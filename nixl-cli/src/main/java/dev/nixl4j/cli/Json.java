package dev.nixl4j.cli;

import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.nixl4j.engine.JsonStrings;
import org.jspecify.annotations.Nullable;

/**
 * Writes the few JSON values the tool prints (objects, arrays, strings, numbers, booleans), so
 * that the core module needs no JSON library.
 */
final class Json {

	private Json() {
	}

	/**
	 * Writes a value: a {@link Map} with string keys, a {@link List}, a {@link CharSequence}, a
	 * {@link Number}, a {@link Boolean} or {@code null}.
	 * @param value the value
	 * @return its JSON text
	 */
	static String write(@Nullable Object value) {
		StringBuilder json = new StringBuilder();
		append(json, value);
		return json.toString();
	}

	private static void append(StringBuilder json, @Nullable Object value) {
		if (JsonStrings.appendContainer(json, value, Json::append)) {
			return;
		}
		switch (value) {
			case null -> json.append("null");
			case Double number when number.isNaN() || number.isInfinite() -> json.append("null");
			case Double number -> json.append(String.format(Locale.ROOT, "%.3f", number));
			case Number number -> json.append(number);
			case Boolean bool -> json.append(bool);
			default -> JsonStrings.append(json, value.toString());
		}
	}

}
