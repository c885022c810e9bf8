package dev.nixl4j.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads JSON into maps, lists, strings, doubles, booleans and {@code null}, so that tests can
 * check the tool's {@code --json} output without a JSON library.
 */
final class JsonReader {

	private final String text;

	private int position;

	private JsonReader(String text) {
		this.text = text;
	}

	/**
	 * Parses a document.
	 * @param text the JSON text
	 * @return the value
	 */
	static Object parse(String text) {
		JsonReader reader = new JsonReader(text);
		Object value = reader.value();
		reader.skipSpace();
		if (reader.position != text.length()) {
			throw reader.error("trailing characters");
		}
		return value;
	}

	private Object value() {
		skipSpace();
		char c = peek();
		return switch (c) {
			case '{' -> object();
			case '[' -> array();
			case '"' -> string();
			case 't' -> literal("true", Boolean.TRUE);
			case 'f' -> literal("false", Boolean.FALSE);
			case 'n' -> literal("null", null);
			default -> number();
		};
	}

	private Map<String, Object> object() {
		Map<String, Object> map = new LinkedHashMap<>();
		this.position++;
		skipSpace();
		if (peek() == '}') {
			this.position++;
			return map;
		}
		while (true) {
			skipSpace();
			String key = string();
			skipSpace();
			expect(':');
			map.put(key, value());
			skipSpace();
			if (peek() == ',') {
				this.position++;
				continue;
			}
			expect('}');
			return map;
		}
	}

	private List<Object> array() {
		List<Object> list = new ArrayList<>();
		this.position++;
		skipSpace();
		if (peek() == ']') {
			this.position++;
			return list;
		}
		while (true) {
			list.add(value());
			skipSpace();
			if (peek() == ',') {
				this.position++;
				continue;
			}
			expect(']');
			return list;
		}
	}

	private String string() {
		expect('"');
		StringBuilder out = new StringBuilder();
		while (true) {
			char c = this.text.charAt(this.position++);
			if (c == '"') {
				return out.toString();
			}
			if (c != '\\') {
				out.append(c);
				continue;
			}
			char escaped = this.text.charAt(this.position++);
			switch (escaped) {
				case 'n' -> out.append('\n');
				case 'r' -> out.append('\r');
				case 't' -> out.append('\t');
				case 'b' -> out.append('\b');
				case 'f' -> out.append('\f');
				case 'u' -> {
					out.append((char) Integer.parseInt(this.text.substring(this.position, this.position + 4), 16));
					this.position += 4;
				}
				default -> out.append(escaped);
			}
		}
	}

	private Object literal(String word, Object value) {
		if (!this.text.startsWith(word, this.position)) {
			throw error("expected " + word);
		}
		this.position += word.length();
		return value;
	}

	private Double number() {
		int start = this.position;
		while (this.position < this.text.length() && "+-0123456789.eE".indexOf(this.text.charAt(this.position)) >= 0) {
			this.position++;
		}
		if (start == this.position) {
			throw error("unexpected character");
		}
		return Double.valueOf(this.text.substring(start, this.position));
	}

	private void expect(char c) {
		if (peek() != c) {
			throw error("expected '" + c + "'");
		}
		this.position++;
	}

	private char peek() {
		if (this.position >= this.text.length()) {
			throw error("unexpected end");
		}
		return this.text.charAt(this.position);
	}

	private void skipSpace() {
		while (this.position < this.text.length() && Character.isWhitespace(this.text.charAt(this.position))) {
			this.position++;
		}
	}

	private IllegalArgumentException error(String what) {
		return new IllegalArgumentException(what + " at offset " + this.position);
	}

}
