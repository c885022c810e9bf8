package dev.nixl4j.sample.model;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for the reference scripts' answer lines: objects become
 * {@link Map}s, arrays {@link List}s, numbers {@link Double}s, and {@code null},
 * {@code true}, {@code false} and strings their Java values. Nesting is bounded; bad
 * input throws {@link IllegalArgumentException} naming the offset.
 */
final class MiniJson {

	private static final int MAX_DEPTH = 64;

	private final String text;

	private int pos;

	private MiniJson(String text) {
		this.text = text;
	}

	/** Parses one JSON value that makes up the whole of {@code text}. */
	static Object parse(String text) {
		MiniJson json = new MiniJson(text);
		Object value = json.value(0);
		json.skipSpace();
		if (json.pos != text.length()) {
			throw json.error("trailing characters");
		}
		return value;
	}

	private Object value(int depth) {
		if (depth > MAX_DEPTH) {
			throw error("nested deeper than " + MAX_DEPTH);
		}
		skipSpace();
		if (this.pos >= this.text.length()) {
			throw error("unexpected end");
		}
		char c = this.text.charAt(this.pos);
		return switch (c) {
			case '{' -> object(depth);
			case '[' -> array(depth);
			case '"' -> string();
			case 'n' -> literal("null", null);
			case 't' -> literal("true", Boolean.TRUE);
			case 'f' -> literal("false", Boolean.FALSE);
			default -> number();
		};
	}

	private Map<String, Object> object(int depth) {
		Map<String, Object> map = new LinkedHashMap<>();
		this.pos++;
		skipSpace();
		if (peek() == '}') {
			this.pos++;
			return map;
		}
		while (true) {
			skipSpace();
			if (peek() != '"') {
				throw error("expected a key");
			}
			String key = string();
			skipSpace();
			expect(':');
			map.put(key, value(depth + 1));
			skipSpace();
			if (peek() == ',') {
				this.pos++;
				continue;
			}
			expect('}');
			return map;
		}
	}

	private List<Object> array(int depth) {
		List<Object> list = new ArrayList<>();
		this.pos++;
		skipSpace();
		if (peek() == ']') {
			this.pos++;
			return list;
		}
		while (true) {
			list.add(value(depth + 1));
			skipSpace();
			if (peek() == ',') {
				this.pos++;
				continue;
			}
			expect(']');
			return list;
		}
	}

	private String string() {
		StringBuilder sb = new StringBuilder();
		this.pos++;
		while (true) {
			if (this.pos >= this.text.length()) {
				throw error("unterminated string");
			}
			char c = this.text.charAt(this.pos++);
			if (c == '"') {
				return sb.toString();
			}
			if (c != '\\') {
				sb.append(c);
				continue;
			}
			if (this.pos >= this.text.length()) {
				throw error("unterminated escape");
			}
			char e = this.text.charAt(this.pos++);
			switch (e) {
				case '"', '\\', '/' -> sb.append(e);
				case 'b' -> sb.append('\b');
				case 'f' -> sb.append('\f');
				case 'n' -> sb.append('\n');
				case 'r' -> sb.append('\r');
				case 't' -> sb.append('\t');
				case 'u' -> {
					if (this.pos + 4 > this.text.length()) {
						throw error("short \\u escape");
					}
					sb.append((char) Integer.parseInt(this.text.substring(this.pos, this.pos + 4), 16));
					this.pos += 4;
				}
				default -> throw error("bad escape \\" + e);
			}
		}
	}

	private Object literal(String word, Object value) {
		if (!this.text.startsWith(word, this.pos)) {
			throw error("expected " + word);
		}
		this.pos += word.length();
		return value;
	}

	private Double number() {
		int start = this.pos;
		while (this.pos < this.text.length() && "+-0123456789.eEInfinityNa".indexOf(this.text.charAt(this.pos)) >= 0) {
			this.pos++;
		}
		if (start == this.pos) {
			throw error("unexpected character '" + this.text.charAt(start) + "'");
		}
		try {
			return Double.valueOf(this.text.substring(start, this.pos));
		}
		catch (NumberFormatException ex) {
			throw error("bad number " + this.text.substring(start, this.pos));
		}
	}

	private char peek() {
		if (this.pos >= this.text.length()) {
			throw error("unexpected end");
		}
		return this.text.charAt(this.pos);
	}

	private void expect(char c) {
		if (peek() != c) {
			throw error("expected '" + c + "'");
		}
		this.pos++;
	}

	private void skipSpace() {
		while (this.pos < this.text.length() && Character.isWhitespace(this.text.charAt(this.pos))) {
			this.pos++;
		}
	}

	private IllegalArgumentException error(String what) {
		return new IllegalArgumentException("JSON: " + what + " at offset " + this.pos);
	}

}
