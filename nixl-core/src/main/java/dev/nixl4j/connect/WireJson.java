package dev.nixl4j.connect;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.nixl4j.engine.JsonStrings;
import org.jspecify.annotations.Nullable;

/**
 * A small strict JSON reader and writer for {@link RdmaMetadata}, so that the core module needs no
 * JSON library. The reader accepts RFC 8259 JSON only: no comments, no trailing commas, no
 * duplicate keys, no leading zeros, nothing after the value; it refuses input longer than its
 * limit before looking at it, and nesting deeper than {@value #MAX_DEPTH}. Numbers are read as
 * {@link BigInteger} when they are integers and kept as text otherwise, so that callers decide
 * which ranges they accept.
 */
final class WireJson {

	static final int MAX_DEPTH = 32;

	private final String text;

	private int position;

	private int depth;

	private WireJson(String text) {
		this.text = text;
	}

	/**
	 * Reads one JSON value.
	 * @param text the JSON text
	 * @param maxChars the longest text accepted
	 * @return a {@link Map} (keys in order), {@link List}, {@link String}, {@link BigInteger},
	 * {@link Decimal}, {@link Boolean} or {@link Null#VALUE}
	 * @throws JsonException when the text is not JSON or too long
	 */
	static Object read(String text, int maxChars) {
		if (text.length() > maxChars) {
			throw new JsonException("the JSON text has " + text.length() + " characters, more than the limit of "
					+ maxChars);
		}
		WireJson reader = new WireJson(text);
		reader.skipWhitespace();
		Object value = reader.value();
		reader.skipWhitespace();
		if (reader.position != text.length()) {
			throw reader.error("unexpected text after the JSON value");
		}
		return value;
	}

	private Object value() {
		if (this.position >= this.text.length()) {
			throw error("unexpected end of the JSON text");
		}
		char c = this.text.charAt(this.position);
		return switch (c) {
			case '{' -> object();
			case '[' -> array();
			case '"' -> string();
			case 't' -> literal("true", Boolean.TRUE);
			case 'f' -> literal("false", Boolean.FALSE);
			case 'n' -> literal("null", Null.VALUE);
			default -> {
				if (c == '-' || (c >= '0' && c <= '9')) {
					yield number();
				}
				throw error("unexpected character '" + printable(c) + "'");
			}
		};
	}

	private Map<String, Object> object() {
		enter();
		this.position++;
		Map<String, Object> members = new LinkedHashMap<>();
		skipWhitespace();
		if (peek() == '}') {
			this.position++;
			this.depth--;
			return members;
		}
		while (true) {
			skipWhitespace();
			if (peek() != '"') {
				throw error("expected a member name in double quotes");
			}
			int at = this.position;
			String key = string();
			skipWhitespace();
			expect(':');
			skipWhitespace();
			Object value = value();
			if (members.putIfAbsent(key, value) != null) {
				this.position = at;
				throw error("duplicate key \"" + key + "\"");
			}
			skipWhitespace();
			char next = peek();
			this.position++;
			if (next == '}') {
				this.depth--;
				return members;
			}
			if (next != ',') {
				this.position--;
				throw error("expected ',' or '}' in an object");
			}
		}
	}

	private List<Object> array() {
		enter();
		this.position++;
		List<Object> elements = new ArrayList<>();
		skipWhitespace();
		if (peek() == ']') {
			this.position++;
			this.depth--;
			return elements;
		}
		while (true) {
			skipWhitespace();
			elements.add(value());
			skipWhitespace();
			char next = peek();
			this.position++;
			if (next == ']') {
				this.depth--;
				return elements;
			}
			if (next != ',') {
				this.position--;
				throw error("expected ',' or ']' in an array");
			}
		}
	}

	private void enter() {
		if (++this.depth > MAX_DEPTH) {
			throw error("JSON nested deeper than " + MAX_DEPTH + " levels");
		}
	}

	private String string() {
		this.position++;
		StringBuilder value = new StringBuilder();
		while (true) {
			if (this.position >= this.text.length()) {
				throw error("unterminated string");
			}
			char c = this.text.charAt(this.position++);
			if (c == '"') {
				return value.toString();
			}
			if (c < 0x20) {
				this.position--;
				throw error("control character in a string");
			}
			if (c != '\\') {
				value.append(c);
				continue;
			}
			if (this.position >= this.text.length()) {
				throw error("unterminated string");
			}
			char escaped = this.text.charAt(this.position++);
			switch (escaped) {
				case '"', '\\', '/' -> value.append(escaped);
				case 'b' -> value.append('\b');
				case 'f' -> value.append('\f');
				case 'n' -> value.append('\n');
				case 'r' -> value.append('\r');
				case 't' -> value.append('\t');
				case 'u' -> value.append(unicodeEscape());
				default -> {
					this.position--;
					throw error("invalid escape '\\" + printable(escaped) + "'");
				}
			}
		}
	}

	private char unicodeEscape() {
		if (this.position + 4 > this.text.length()) {
			throw error("truncated \\u escape");
		}
		int code = 0;
		for (int i = 0; i < 4; i++) {
			int digit = Character.digit(this.text.charAt(this.position + i), 16);
			if (digit < 0) {
				throw error("invalid \\u escape");
			}
			code = code * 16 + digit;
		}
		this.position += 4;
		return (char) code;
	}

	private Object number() {
		int start = this.position;
		if (peek() == '-') {
			this.position++;
		}
		if (this.position >= this.text.length() || !isDigit(this.text.charAt(this.position))) {
			throw error("invalid number");
		}
		if (this.text.charAt(this.position) == '0' && this.position + 1 < this.text.length()
				&& isDigit(this.text.charAt(this.position + 1))) {
			throw error("number with a leading zero");
		}
		digits();
		boolean integer = true;
		if (this.position < this.text.length() && this.text.charAt(this.position) == '.') {
			integer = false;
			this.position++;
			requireDigit();
			digits();
		}
		if (this.position < this.text.length() && (this.text.charAt(this.position) | 0x20) == 'e') {
			integer = false;
			this.position++;
			if (this.position < this.text.length()
					&& (this.text.charAt(this.position) == '+' || this.text.charAt(this.position) == '-')) {
				this.position++;
			}
			requireDigit();
			digits();
		}
		String literal = this.text.substring(start, this.position);
		if (!integer) {
			return new Decimal(literal);
		}
		if (literal.length() > 40) {
			throw error("integer with more than 40 digits");
		}
		return new BigInteger(literal);
	}

	private void requireDigit() {
		if (this.position >= this.text.length() || !isDigit(this.text.charAt(this.position))) {
			throw error("invalid number");
		}
	}

	private void digits() {
		while (this.position < this.text.length() && isDigit(this.text.charAt(this.position))) {
			this.position++;
		}
	}

	private static boolean isDigit(char c) {
		return c >= '0' && c <= '9';
	}

	private Object literal(String word, Object value) {
		if (!this.text.startsWith(word, this.position)) {
			throw error("unexpected character '" + printable(this.text.charAt(this.position)) + "'");
		}
		this.position += word.length();
		return value;
	}

	private char peek() {
		if (this.position >= this.text.length()) {
			throw error("unexpected end of the JSON text");
		}
		return this.text.charAt(this.position);
	}

	private void expect(char c) {
		if (peek() != c) {
			throw error("expected '" + c + "'");
		}
		this.position++;
	}

	private void skipWhitespace() {
		while (this.position < this.text.length()) {
			char c = this.text.charAt(this.position);
			if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
				return;
			}
			this.position++;
		}
	}

	private JsonException error(String what) {
		return new JsonException(what + " at offset " + this.position);
	}

	private static String printable(char c) {
		return (c >= 0x20 && c < 0x7f) ? String.valueOf(c) : String.format("\\u%04x", (int) c);
	}

	/**
	 * Writes a value: a {@link Map} with string keys (in its iteration order), a {@link List}, a
	 * {@link String}, a {@link Number} that is an integer, or a {@link Boolean}; no whitespace.
	 * @param value the value
	 * @return its JSON text
	 */
	static String write(Object value) {
		StringBuilder json = new StringBuilder();
		append(json, value);
		return json.toString();
	}

	private static void append(StringBuilder json, @Nullable Object value) {
		if (JsonStrings.appendContainer(json, value, WireJson::append)) {
			return;
		}
		switch (value) {
			case String string -> JsonStrings.append(json, string);
			case Long number -> json.append(number.longValue());
			case Integer number -> json.append(number.intValue());
			case BigInteger number -> json.append(number);
			case Boolean bool -> json.append(bool.booleanValue());
			case null, default -> throw new IllegalArgumentException("cannot write " + value + " as JSON");
		}
	}

	/** JSON {@code null}, distinct from a missing member. */
	enum Null {

		VALUE

	}

	/**
	 * A JSON number that is not an integer, kept as its text.
	 * @param literal the number as written
	 */
	record Decimal(String literal) {
	}

	/** Malformed or oversized JSON. */
	static final class JsonException extends RuntimeException {

		private static final long serialVersionUID = 1L;

		JsonException(String message) {
			super(message);
		}

	}

}
