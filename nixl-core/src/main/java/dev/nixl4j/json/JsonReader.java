package dev.nixl4j.json;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A strict JSON reader with limits, so that the core module needs no JSON library. It
 * accepts RFC 8259 JSON only: no comments, no trailing commas, no single quotes, no
 * leading zeros, no {@code NaN} or {@code Infinity}, no unpaired surrogates, no duplicate
 * keys and nothing after the value. Everything is bounded: the text's length is checked
 * before reading it, and nesting depth, string length, members per object or array and
 * number length while reading; nesting is followed with an explicit stack, so deep input
 * cannot overflow the thread's stack. Each refusal is a {@link JsonException} naming what
 * was wrong or expected and the offset.
 *
 * <p>
 * Objects are read as unmodifiable {@link Map}s keeping the members' order, arrays as
 * unmodifiable {@link List}s, strings as {@link String}s, {@code true} and {@code false}
 * as {@link Boolean}s and {@code null} as {@code null} (a member set to {@code null} is
 * present in its map); numbers as {@link Numbers} says. A reader is immutable and can be
 * shared.
 */
public final class JsonReader {

	/** The default of {@link Builder#maxChars(int)}: 1 Mi characters. */
	public static final int DEFAULT_MAX_CHARS = 1 << 20;

	/** The default of {@link Builder#maxDepth(int)}. */
	public static final int DEFAULT_MAX_DEPTH = 32;

	/** The default of {@link Builder#maxMembers(int)}. */
	public static final int DEFAULT_MAX_MEMBERS = 1 << 16;

	/**
	 * The longest number literal read, in characters, so that turning one into a
	 * {@link BigInteger} or {@link BigDecimal} stays cheap.
	 */
	public static final int MAX_NUMBER_CHARS = 100;

	/** The largest exponent magnitude of a number read, well beyond a double's range. */
	public static final int MAX_EXPONENT = 1000;

	/** How numbers are read. */
	public enum Numbers {

		/**
		 * Exactly: an integer as a {@link Long}, or a {@link BigInteger} when it does not
		 * fit one; a number with a fraction or an exponent as a {@link BigDecimal}.
		 */
		EXACT,

		/**
		 * Every number as a {@link Double}, as JavaScript reads JSON; a number beyond a
		 * double's range is refused.
		 */
		DOUBLE

	}

	private static final JsonReader DEFAULT = builder().build();

	private final int maxChars;

	private final int maxDepth;

	private final int maxStringChars;

	private final int maxMembers;

	private final Numbers numbers;

	private JsonReader(Builder builder) {
		this.maxChars = builder.maxChars;
		this.maxDepth = builder.maxDepth;
		this.maxStringChars = builder.maxStringChars;
		this.maxMembers = builder.maxMembers;
		this.numbers = builder.numbers;
	}

	/**
	 * Returns a reader with the default limits that reads numbers {@link Numbers#EXACT
	 * exactly}.
	 * @return the reader
	 */
	public static JsonReader strict() {
		return DEFAULT;
	}

	/**
	 * Starts a reader with the default limits ({@link #DEFAULT_MAX_CHARS},
	 * {@link #DEFAULT_MAX_DEPTH}, strings as long as the text,
	 * {@link #DEFAULT_MAX_MEMBERS}) that reads numbers {@link Numbers#EXACT exactly}.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Reads one JSON value.
	 * @param text the JSON text
	 * @return a {@link Map}, {@link List}, {@link String}, number, {@link Boolean} or
	 * {@code null}
	 * @throws JsonException when the text is not JSON or breaks a limit
	 */
	public @Nullable Object read(String text) {
		if (text.length() > this.maxChars) {
			throw new JsonException(
					"the JSON text has " + text.length() + " characters, more than the limit of " + this.maxChars, -1);
		}
		return new Parser(text).document();
	}

	/** Sets a reader's limits and how it reads numbers. */
	public static final class Builder {

		private int maxChars = DEFAULT_MAX_CHARS;

		private int maxDepth = DEFAULT_MAX_DEPTH;

		private int maxStringChars = Integer.MAX_VALUE;

		private int maxMembers = DEFAULT_MAX_MEMBERS;

		private Numbers numbers = Numbers.EXACT;

		private Builder() {
		}

		/**
		 * Sets the longest text read, checked before reading.
		 * @param maxChars at least 1
		 * @return this builder
		 */
		public Builder maxChars(int maxChars) {
			this.maxChars = positive(maxChars, "maxChars");
			return this;
		}

		/**
		 * Sets how deep objects and arrays may nest; a top-level object or array is one
		 * level.
		 * @param maxDepth at least 1
		 * @return this builder
		 */
		public Builder maxDepth(int maxDepth) {
			this.maxDepth = positive(maxDepth, "maxDepth");
			return this;
		}

		/**
		 * Sets the longest string (key or value) read, in characters after unescaping.
		 * @param maxStringChars at least 1
		 * @return this builder
		 */
		public Builder maxStringChars(int maxStringChars) {
			this.maxStringChars = positive(maxStringChars, "maxStringChars");
			return this;
		}

		/**
		 * Sets the most members of one object, or elements of one array.
		 * @param maxMembers at least 1
		 * @return this builder
		 */
		public Builder maxMembers(int maxMembers) {
			this.maxMembers = positive(maxMembers, "maxMembers");
			return this;
		}

		/**
		 * Sets how numbers are read.
		 * @param numbers exactly (the default) or as doubles
		 * @return this builder
		 */
		public Builder numbers(Numbers numbers) {
			this.numbers = Objects.requireNonNull(numbers, "numbers");
			return this;
		}

		/**
		 * Builds the reader.
		 * @return the reader
		 */
		public JsonReader build() {
			return new JsonReader(this);
		}

		private static int positive(int value, String name) {
			if (value < 1) {
				throw new IllegalArgumentException(name + " must be at least 1, was " + value);
			}
			return value;
		}

	}

	/** An object or array still open. */
	private sealed interface Open {

	}

	/** An object still open, with the name of the member whose value is being read. */
	private static final class OpenObject implements Open {

		private final Map<String, @Nullable Object> members = new LinkedHashMap<>();

		private String key = "";

	}

	/** An array still open. */
	private record OpenArray(List<@Nullable Object> elements) implements Open {

	}

	private final class Parser {

		private final String text;

		private final Deque<Open> open = new ArrayDeque<>();

		private int position;

		private Parser(String text) {
			this.text = text;
		}

		private @Nullable Object document() {
			while (true) {
				skipWhitespace();
				@Nullable Object value;
				char c = peek("a value");
				if (c == '{') {
					OpenObject object = new OpenObject();
					enter(object);
					skipWhitespace();
					if (peek("a member name or '}'") != '}') {
						key(object);
						continue;
					}
					this.position++;
					value = close();
				}
				else if (c == '[') {
					enter(new OpenArray(new ArrayList<>()));
					skipWhitespace();
					if (peek("a value or ']'") != ']') {
						continue;
					}
					this.position++;
					value = close();
				}
				else {
					value = scalar(c);
				}
				while (true) {
					Open container = this.open.peek();
					if (container == null) {
						skipWhitespace();
						if (this.position != this.text.length()) {
							throw expected("the end of the text after the JSON value");
						}
						return value;
					}
					if (afterMember(container, value)) {
						break;
					}
					value = close();
				}
			}
		}

		/**
		 * Adds a value to the innermost container and reads what follows it.
		 * @return {@code true} when another member follows, {@code false} when the
		 * container closed
		 */
		private boolean afterMember(Open container, @Nullable Object value) {
			switch (container) {
				case OpenObject object -> {
					object.members.put(object.key, value);
					skipWhitespace();
					String expected = "',' or '}' after an object member";
					char next = peek(expected);
					if (next == ',') {
						this.position++;
						skipWhitespace();
						key(object);
						return true;
					}
					if (next != '}') {
						throw expected(expected);
					}
				}
				case OpenArray array -> {
					array.elements.add(value);
					skipWhitespace();
					String expected = "',' or ']' after an array element";
					char next = peek(expected);
					if (next == ',') {
						this.position++;
						if (array.elements.size() >= JsonReader.this.maxMembers) {
							skipWhitespace();
							throw error("more than " + JsonReader.this.maxMembers + " elements in an array");
						}
						return true;
					}
					if (next != ']') {
						throw expected(expected);
					}
				}
			}
			this.position++;
			return false;
		}

		private void enter(Open container) {
			if (this.open.size() >= JsonReader.this.maxDepth) {
				throw error("JSON nested deeper than " + JsonReader.this.maxDepth + " levels");
			}
			this.position++;
			this.open.push(container);
		}

		private Object close() {
			return switch (this.open.pop()) {
				case OpenObject object -> Collections.unmodifiableMap(object.members);
				case OpenArray array -> Collections.unmodifiableList(array.elements);
			};
		}

		/**
		 * Reads a member name and its colon, refusing a duplicate and one member too
		 * many.
		 */
		private void key(OpenObject object) {
			if (peek("a member name in double quotes") != '"') {
				throw expected("a member name in double quotes");
			}
			int at = this.position;
			if (object.members.size() >= JsonReader.this.maxMembers) {
				throw error("more than " + JsonReader.this.maxMembers + " members in an object");
			}
			String key = string();
			if (object.members.containsKey(key)) {
				this.position = at;
				throw error("duplicate key \"" + printable(key) + "\"");
			}
			skipWhitespace();
			if (peek("':' after the member name") != ':') {
				throw expected("':' after the member name");
			}
			this.position++;
			object.key = key;
		}

		private @Nullable Object scalar(char c) {
			return switch (c) {
				case '"' -> string();
				case 't' -> literal("true", Boolean.TRUE);
				case 'f' -> literal("false", Boolean.FALSE);
				case 'n' -> literal("null", null);
				default -> {
					if (c == '-' || isDigit(c)) {
						yield number();
					}
					throw expected("a value");
				}
			};
		}

		private @Nullable Object literal(String word, @Nullable Object value) {
			if (!this.text.startsWith(word, this.position)) {
				throw expected("a value");
			}
			this.position += word.length();
			return value;
		}

		private String string() {
			this.position++;
			@Nullable StringBuilder value = null;
			int start = this.position;
			while (true) {
				if (this.position >= this.text.length()) {
					throw error("unterminated string");
				}
				char c = this.text.charAt(this.position);
				if (c == '"') {
					String string = (value == null) ? this.text.substring(start, this.position) : value.toString();
					this.position++;
					return string;
				}
				if (c < 0x20) {
					throw error("control character U+" + hex(c) + " in a string (it must be escaped)");
				}
				if (value == null && (c == '\\' || Character.isSurrogate(c))) {
					value = new StringBuilder().append(this.text, start, this.position);
				}
				if (value != null) {
					if (c == '\\') {
						escape(value);
					}
					else if (Character.isSurrogate(c)) {
						surrogatePair(value);
					}
					else {
						value.append(c);
						this.position++;
					}
					if (value.length() > JsonReader.this.maxStringChars) {
						throw error("string longer than " + JsonReader.this.maxStringChars + " characters");
					}
				}
				else {
					if (this.position - start >= JsonReader.this.maxStringChars) {
						throw error("string longer than " + JsonReader.this.maxStringChars + " characters");
					}
					this.position++;
				}
			}
		}

		private void surrogatePair(StringBuilder value) {
			char high = this.text.charAt(this.position);
			if (Character.isHighSurrogate(high) && this.position + 1 < this.text.length()
					&& Character.isLowSurrogate(this.text.charAt(this.position + 1))) {
				value.append(high).append(this.text.charAt(this.position + 1));
				this.position += 2;
				return;
			}
			throw error("unpaired surrogate U+" + hex(high) + " in a string");
		}

		private void escape(StringBuilder value) {
			this.position++;
			if (this.position >= this.text.length()) {
				throw error("unterminated string");
			}
			char escaped = this.text.charAt(this.position);
			switch (escaped) {
				case '"', '\\', '/' -> value.append(escaped);
				case 'b' -> value.append('\b');
				case 'f' -> value.append('\f');
				case 'n' -> value.append('\n');
				case 'r' -> value.append('\r');
				case 't' -> value.append('\t');
				case 'u' -> {
					this.position--;
					unicodeEscape(value);
					return;
				}
				default ->
					throw expected("an escape ('\\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t' or '\\uXXXX')");
			}
			this.position++;
		}

		/**
		 * Reads the backslash-u escape at the position, and the low half after it when it
		 * is a high surrogate.
		 */
		private void unicodeEscape(StringBuilder value) {
			int at = this.position;
			char c = hexEscape();
			if (Character.isLowSurrogate(c)) {
				this.position = at;
				throw error("unpaired low surrogate \\u" + hex(c) + " in a string");
			}
			if (Character.isHighSurrogate(c)) {
				int low = this.position;
				if (!this.text.startsWith("\\u", low)) {
					this.position = at;
					throw error("high surrogate \\u" + hex(c) + " not followed by a \\u escape of a low surrogate");
				}
				char second = hexEscape();
				if (!Character.isLowSurrogate(second)) {
					this.position = low;
					throw error("high surrogate \\u" + hex(c) + " followed by \\u" + hex(second)
							+ ", which is not a low surrogate");
				}
				value.append(c).append(second);
				return;
			}
			value.append(c);
		}

		private char hexEscape() {
			this.position += 2;
			int code = 0;
			for (int i = 0; i < 4; i++) {
				int digit = (this.position < this.text.length()) ? Character.digit(this.text.charAt(this.position), 16)
						: -1;
				if (digit < 0 || this.text.charAt(this.position) > 'f') {
					throw expected("four hexadecimal digits after \\u");
				}
				code = code * 16 + digit;
				this.position++;
			}
			return (char) code;
		}

		private Object number() {
			int start = this.position;
			if (this.text.charAt(this.position) == '-') {
				this.position++;
			}
			if (!isDigitAt(this.position)) {
				throw expected("a digit");
			}
			if (this.text.charAt(this.position) == '0' && isDigitAt(this.position + 1)) {
				this.position = start;
				throw error("number with a leading zero");
			}
			digits();
			boolean integer = true;
			if (this.position < this.text.length() && this.text.charAt(this.position) == '.') {
				integer = false;
				this.position++;
				if (!isDigitAt(this.position)) {
					throw expected("a digit after the decimal point");
				}
				digits();
			}
			if (this.position < this.text.length() && (this.text.charAt(this.position) | 0x20) == 'e') {
				integer = false;
				this.position++;
				if (this.position < this.text.length()
						&& (this.text.charAt(this.position) == '+' || this.text.charAt(this.position) == '-')) {
					this.position++;
				}
				if (!isDigitAt(this.position)) {
					throw expected("a digit in the exponent");
				}
				int exponent = this.position;
				digits();
				while (exponent < this.position - 1 && this.text.charAt(exponent) == '0') {
					exponent++;
				}
				if (this.position - exponent > 4
						|| Integer.parseInt(this.text, exponent, this.position, 10) > MAX_EXPONENT) {
					this.position = start;
					throw error("number with an exponent beyond " + MAX_EXPONENT);
				}
			}
			if (this.position - start > MAX_NUMBER_CHARS) {
				this.position = start;
				throw error("number longer than " + MAX_NUMBER_CHARS + " characters");
			}
			String literal = this.text.substring(start, this.position);
			if (JsonReader.this.numbers == Numbers.DOUBLE) {
				double number = Double.parseDouble(literal);
				if (Double.isInfinite(number)) {
					this.position = start;
					throw error("number " + literal + " beyond the range of a double");
				}
				return number;
			}
			if (!integer) {
				return new BigDecimal(literal);
			}
			BigInteger number = new BigInteger(literal);
			return (number.bitLength() < 64) ? (Object) number.longValue() : number;
		}

		private void digits() {
			while (isDigitAt(this.position)) {
				this.position++;
			}
		}

		private boolean isDigitAt(int index) {
			return index < this.text.length() && isDigit(this.text.charAt(index));
		}

		private char peek(String expected) {
			if (this.position >= this.text.length()) {
				throw expected(expected);
			}
			return this.text.charAt(this.position);
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

		private JsonException expected(String what) {
			String found = (this.position >= this.text.length()) ? "the end of the text"
					: "'" + printable(String.valueOf(this.text.charAt(this.position))) + "'";
			return error("expected " + what + ", found " + found);
		}

		private JsonException error(String what) {
			return new JsonException(what, this.position);
		}

	}

	private static boolean isDigit(char c) {
		return c >= '0' && c <= '9';
	}

	private static String hex(char c) {
		return String.format("%04X", (int) c);
	}

	/**
	 * Shows text in an error message with control and non-ASCII characters as escapes, at
	 * most 64 of them.
	 */
	private static String printable(String text) {
		StringBuilder out = new StringBuilder();
		for (int i = 0; i < text.length() && i < 64; i++) {
			char c = text.charAt(i);
			out.append((c >= 0x20 && c < 0x7f) ? String.valueOf(c) : "\\u" + hex(c));
		}
		return (text.length() > 64) ? out.append("...").toString() : out.toString();
	}

}
