package dev.nixl4j.json;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The project's JSON: what {@link JsonWriter} writes, what {@link JsonReader} reads back,
 * and every kind of text the reader refuses, with the offset and what it expected.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class JsonTest {

	private static final JsonReader READER = JsonReader.strict();

	private static JsonException refused(JsonReader reader, String json) {
		JsonException refused = catchThrowableOfType(JsonException.class, () -> reader.read(json));
		assertThat(refused).as("refused: " + json).isNotNull();
		return refused;
	}

	private static JsonException refused(String json) {
		return refused(READER, json);
	}

	@Test
	void aDocumentRoundTripsWithItsMembersInOrder() {
		Map<String, Object> inner = new LinkedHashMap<>();
		inner.put("z", 1L);
		inner.put("a", List.of());
		inner.put("m", Map.of());
		Map<String, Object> document = new LinkedHashMap<>();
		document.put("name", "nixl4j");
		document.put("count", 42L);
		document.put("big", new BigInteger("18446744073709551615"));
		document.put("ratio", new BigDecimal("0.125"));
		document.put("on", true);
		document.put("off", false);
		document.put("nothing", null);
		document.put("list", Arrays.asList(1L, "two", null, List.of(3L), inner));
		document.put("inner", inner);

		String json = JsonWriter.write(document);

		assertThat(json).isEqualTo("{\"name\":\"nixl4j\",\"count\":42,\"big\":18446744073709551615,\"ratio\":0.125,"
				+ "\"on\":true,\"off\":false,\"nothing\":null,\"list\":[1,\"two\",null,[3],{\"z\":1,\"a\":[],\"m\":{}}],"
				+ "\"inner\":{\"z\":1,\"a\":[],\"m\":{}}}");
		@SuppressWarnings("unchecked")
		Map<String, Object> read = (Map<String, Object>) READER.read(json);
		assertThat(read).isEqualTo(document).containsKey("nothing");
		assertThat(read.keySet()).containsExactlyElementsOf(document.keySet());
		assertThat(JsonWriter.write(read)).isEqualTo(json);
	}

	@Test
	void whitespaceBetweenTokensIsAllowed() {
		assertThat(READER.read(" \t\r\n{ \"a\" : [ 1 , 2 ] , \"b\" : { } } \n"))
			.isEqualTo(Map.of("a", List.of(1L, 2L), "b", Map.of()));
		assertThat(READER.read("\"top-level string\"")).isEqualTo("top-level string");
		assertThat(READER.read(" null ")).isNull();
	}

	@Test
	void whatIsReadCannotBeChanged() {
		Map<?, ?> object = (Map<?, ?>) READER.read("{\"a\":[1]}");
		assertThat(catchThrowableOfType(UnsupportedOperationException.class, () -> object.clear())).isNotNull();
		List<?> list = (List<?>) object.get("a");
		assertThat(catchThrowableOfType(UnsupportedOperationException.class, () -> list.clear())).isNotNull();
	}

	@Test
	void stringsRoundTripWithEscapesAndEveryKindOfCharacter() {
		StringBuilder controls = new StringBuilder();
		for (char c = 0; c < 0x20; c++) {
			controls.append(c);
		}
		String text = "quote \" backslash \\ slash / " + controls + " é ß € 日本 \uD83D\uDE80 \u2028 \u007f end";

		String json = JsonWriter.write(text);

		assertThat(json).contains("\\\"", "\\\\", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0000", "\\u001f", "é", "日本",
				"\uD83D\uDE80", "/");
		assertThat(json.chars().filter(c -> c < 0x20)).isEmpty();
		assertThat(READER.read(json)).isEqualTo(text);
	}

	@Test
	void unicodeEscapesAreReadIncludingSurrogatePairs() {
		assertThat(READER.read("\"\\u0041\\u00e9\\u20AC\\uD83D\\uDE80\\ud83d\\ude00\\/\""))
			.isEqualTo("Aé€\uD83D\uDE80\uD83D\uDE00/");
		assertThat(READER.read("\"\\b\\f\\n\\r\\t\\\"\\\\\"")).isEqualTo("\b\f\n\r\t\"\\");
		assertThat(READER.read("{\"\\u006bey\":1}")).isEqualTo(Map.of("key", 1L));
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '`', value = {
			// text | offset | message
			"`\"\\uD83D\"` | 1 | high surrogate \\uD83D not followed by a \\u escape of a low surrogate",
			"`\"\\uD83Dx\"` | 1 | high surrogate \\uD83D not followed by a \\u escape of a low surrogate",
			"`\"\\uD83D\\u0041\"` | 7 | high surrogate \\uD83D followed by \\u0041, which is not a low surrogate",
			"`\"\\uDE80\"` | 1 | unpaired low surrogate \\uDE80",
			"`\"\\u12\"` | 5 | expected four hexadecimal digits after \\u, found '\"'",
			"`\"\\u12` | 5 | expected four hexadecimal digits after \\u, found the end of the text",
			"`\"\\uZZZZ\"` | 3 | expected four hexadecimal digits after \\u, found 'Z'",
			"`\"\\x\"` | 2 | expected an escape", "`\"\\'\"` | 2 | expected an escape",
			"`\"abc` | 4 | unterminated string", "`\"abc\\` | 5 | unterminated string" })
	void badEscapesAndUnterminatedStringsAreRefused(String json, int offset, String message) {
		JsonException refused = refused(json);
		assertThat(refused.offset()).isEqualTo(offset);
		assertThat(refused.getMessage()).startsWith(message).endsWith(" at offset " + offset);
	}

	@Test
	void rawControlCharactersAndUnpairedSurrogatesInStringsAreRefused() {
		JsonException control = refused("\"a\tb\"");
		assertThat(control.getMessage())
			.isEqualTo("control character U+0009 in a string (it must be escaped) at offset 2");
		assertThat(refused("\"a\u0000\"").getMessage()).contains("control character U+0000");
		assertThat(refused("\"x\uD83D\"").getMessage()).isEqualTo("unpaired surrogate U+D83D in a string at offset 2");
		assertThat(refused("\"\uDE80\"").getMessage()).isEqualTo("unpaired surrogate U+DE80 in a string at offset 1");
		assertThat(READER.read("\"\uD83D\uDE80\"")).isEqualTo("\uD83D\uDE80");
	}

	@Test
	void numbersAreReadExactly() {
		assertThat(READER.read("[0,-0,7,-7,9223372036854775807,-9223372036854775808]"))
			.isEqualTo(List.of(0L, 0L, 7L, -7L, Long.MAX_VALUE, Long.MIN_VALUE));
		assertThat(READER.read("[9223372036854775808,-9223372036854775809,18446744073709551615]"))
			.isEqualTo(List.of(new BigInteger("9223372036854775808"), new BigInteger("-9223372036854775809"),
					new BigInteger("18446744073709551615")));
		assertThat(READER.read("[0.1,-2.50,1e3,1E+3,2.5e-3,1e00001]"))
			.isEqualTo(List.of(new BigDecimal("0.1"), new BigDecimal("-2.50"), new BigDecimal("1e3"),
					new BigDecimal("1E+3"), new BigDecimal("2.5e-3"), new BigDecimal("1e1")));
		assertThat(READER.read("0.30000000000000000000000000000000000001"))
			.isEqualTo(new BigDecimal("0.30000000000000000000000000000000000001"));
	}

	@Test
	void numbersCanBeReadAsDoubles() {
		JsonReader doubles = JsonReader.builder().numbers(JsonReader.Numbers.DOUBLE).build();
		assertThat(doubles.read("[1,-2.5,1e3,18446744073709551615,1e-400]"))
			.isEqualTo(List.of(1.0, -2.5, 1000.0, 1.8446744073709552E19, 0.0));
		assertThat(refused(doubles, "[1e400]").getMessage())
			.isEqualTo("number 1e400 beyond the range of a double at offset 1");
	}

	@Test
	void doublesAndFloatsAreWrittenSoThatTheyReadBackEqual() {
		JsonReader doubles = JsonReader.builder().numbers(JsonReader.Numbers.DOUBLE).build();
		List<Double> values = List.of(0.0, -0.0, 1.5, 0.1, 1e-300, 1.7976931348623157E308, 4.9E-324, 123456789.125);
		assertThat(doubles.read(JsonWriter.write(values))).isEqualTo(values);
		assertThat(JsonWriter.write(List.of(1.5f, (short) 3, (byte) -4, 5))).isEqualTo("[1.5,3,-4,5]");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '`',
			value = { "01 | 0 | number with a leading zero", "-01 | 0 | number with a leading zero",
					"[00] | 1 | number with a leading zero",
					"1. | 2 | expected a digit after the decimal point, found the end of the text",
					".5 | 0 | expected a value, found '.'", "+1 | 0 | expected a value, found '+'",
					"- | 1 | expected a digit, found the end of the text", "-x | 1 | expected a digit, found 'x'",
					"1e | 2 | expected a digit in the exponent, found the end of the text",
					"1e+ | 3 | expected a digit in the exponent, found the end of the text",
					"0x10 | 1 | expected the end of the text after the JSON value, found 'x'",
					"NaN | 0 | expected a value, found 'N'", "-NaN | 1 | expected a digit, found 'N'",
					"Infinity | 0 | expected a value, found 'I'", "-Infinity | 1 | expected a digit, found 'I'",
					"[1e1001] | 1 | number with an exponent beyond 1000",
					"[1e99999999999] | 1 | number with an exponent beyond 1000" })
	void malformedNumbersAreRefused(String json, int offset, String message) {
		JsonException refused = refused(json);
		assertThat(refused.getMessage()).isEqualTo(message + " at offset " + offset);
		assertThat(refused.offset()).isEqualTo(offset);
	}

	@Test
	void numbersLongerThanTheLimitAreRefused() {
		String longest = "1".repeat(JsonReader.MAX_NUMBER_CHARS);
		assertThat(READER.read(longest)).isEqualTo(new BigInteger(longest));
		assertThat(refused("[" + longest + "1]").getMessage())
			.isEqualTo("number longer than " + JsonReader.MAX_NUMBER_CHARS + " characters at offset 1");
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', quoteCharacter = '`', value = { "`` | 0 | expected a value, found the end of the text",
			"`   ` | 3 | expected a value, found the end of the text",
			"`{} x` | 3 | expected the end of the text after the JSON value, found 'x'",
			"`{}{}` | 2 | expected the end of the text after the JSON value, found '{'",
			"`[1] ]` | 4 | expected the end of the text after the JSON value, found ']'",
			"`{` | 1 | expected a member name or '}', found the end of the text",
			"`{\"a\"` | 4 | expected ':' after the member name, found the end of the text",
			"`{\"a\";1}` | 4 | expected ':' after the member name, found ';'",
			"`{\"a\":}` | 5 | expected a value, found '}'",
			"`{\"a\":1,}` | 7 | expected a member name in double quotes, found '}'",
			"`{\"a\":1 \"b\":2}` | 7 | expected ',' or '}' after an object member, found '\"'",
			"`{\"a\":1]` | 6 | expected ',' or '}' after an object member, found ']'",
			"`{'a':1}` | 1 | expected a member name in double quotes, found '''",
			"`{a:1}` | 1 | expected a member name in double quotes, found 'a'",
			"`[1,]` | 3 | expected a value, found ']'", "`[,1]` | 1 | expected a value, found ','",
			"`[1 2]` | 3 | expected ',' or ']' after an array element, found '2'",
			"`[1}` | 2 | expected ',' or ']' after an array element, found '}'",
			"`[` | 1 | expected a value or ']', found the end of the text",
			"`[1` | 2 | expected ',' or ']' after an array element, found the end of the text",
			"`tru` | 0 | expected a value, found 't'", "`nul` | 0 | expected a value, found 'n'",
			"`True` | 0 | expected a value, found 'T'",
			"`truex` | 4 | expected the end of the text after the JSON value, found 'x'",
			"`/* c */1` | 0 | expected a value, found '/'", "`\u00a01` | 0 | expected a value, found '\\u00A0'" })
	void malformedStructureIsRefusedNamingWhatWasExpected(String json, int offset, String message) {
		JsonException refused = refused(json);
		assertThat(refused.getMessage()).isEqualTo(message + " at offset " + offset);
		assertThat(refused.offset()).isEqualTo(offset);
	}

	@Test
	void aDuplicateKeyIsRefusedAtTheSecondOccurrence() {
		JsonException refused = refused("{\"a\":1,\"b\":{\"a\":2},\"a\":3}");
		assertThat(refused.getMessage()).isEqualTo("duplicate key \"a\" at offset 19");
		assertThat(refused("{\"a\":1,\"\\u0061\":1}").getMessage()).startsWith("duplicate key \"a\"");
		assertThat(READER.read("[{\"a\":1},{\"a\":1}]")).isEqualTo(List.of(Map.of("a", 1L), Map.of("a", 1L)));
	}

	@Test
	void nestingDeeperThanTheLimitIsRefusedWithoutRecursion() {
		String deepest = "[".repeat(JsonReader.DEFAULT_MAX_DEPTH) + "]".repeat(JsonReader.DEFAULT_MAX_DEPTH);
		assertThat(READER.read(deepest)).isInstanceOf(List.class);
		JsonException refused = refused("[".repeat(JsonReader.DEFAULT_MAX_DEPTH + 1));
		assertThat(refused.getMessage()).isEqualTo("JSON nested deeper than 32 levels at offset 32");
		assertThat(refused("{\"a\":".repeat(40) + "1" + "}".repeat(40)).getMessage())
			.startsWith("JSON nested deeper than 32 levels");

		// a deep limit is followed on the heap: a million levels need no deep stack
		int levels = 1_000_000;
		JsonReader deep = JsonReader.builder().maxDepth(levels).maxChars(4 * levels).build();
		Object value = deep.read("[".repeat(levels) + "]".repeat(levels));
		for (int i = 1; i < levels; i++) {
			value = ((List<?>) value).getFirst();
		}
		assertThat((List<?>) value).isEmpty();
	}

	@Test
	void textLongerThanTheLimitIsRefusedBeforeReadingIt() {
		JsonReader reader = JsonReader.builder().maxChars(10).build();
		assertThat(reader.read("[1,2,3,45]")).isEqualTo(List.of(1L, 2L, 3L, 45L));
		assertThat(refused(reader, "[1,2,3,456").getMessage())
			.isEqualTo("expected ',' or ']' after an array element, found the end of the text at offset 10");
		JsonException refused = refused(reader, "[1,2,3,4567");
		assertThat(refused.getMessage()).isEqualTo("the JSON text has 11 characters, more than the limit of 10");
		assertThat(refused.offset()).isEqualTo(-1);
		assertThat(JsonReader.strict().read(" ".repeat(JsonReader.DEFAULT_MAX_CHARS - 1) + "1")).isEqualTo(1L);
		assertThat(refused(" ".repeat(JsonReader.DEFAULT_MAX_CHARS) + "1").getMessage())
			.contains("more than the limit of " + JsonReader.DEFAULT_MAX_CHARS);
	}

	@Test
	void stringsLongerThanTheLimitAreRefused() {
		JsonReader reader = JsonReader.builder().maxStringChars(4).build();
		assertThat(reader.read("[\"abcd\",\"ab\\nc\"]")).isEqualTo(List.of("abcd", "ab\nc"));
		assertThat(refused(reader, "[\"abcde\"]").getMessage())
			.isEqualTo("string longer than 4 characters at offset 6");
		assertThat(refused(reader, "[\"ab\\ncde\"]").getMessage()).startsWith("string longer than 4 characters");
		assertThat(refused(reader, "{\"abcde\":1}").getMessage()).startsWith("string longer than 4 characters");
	}

	@Test
	void objectsAndArraysWithMoreMembersThanTheLimitAreRefused() {
		JsonReader reader = JsonReader.builder().maxMembers(3).build();
		assertThat(reader.read("{\"a\":[1,2,3],\"b\":2,\"c\":3}"))
			.isEqualTo(Map.of("a", List.of(1L, 2L, 3L), "b", 2L, "c", 3L));
		assertThat(refused(reader, "[1,2,3,4]").getMessage()).isEqualTo("more than 3 elements in an array at offset 7");
		assertThat(refused(reader, "{\"a\":1,\"b\":2,\"c\":3,\"d\":4}").getMessage())
			.isEqualTo("more than 3 members in an object at offset 19");
	}

	@Test
	void limitsMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> JsonReader.builder().maxChars(0))
			.withMessage("maxChars must be at least 1, was 0");
		assertThatIllegalArgumentException().isThrownBy(() -> JsonReader.builder().maxDepth(-1));
		assertThatIllegalArgumentException().isThrownBy(() -> JsonReader.builder().maxStringChars(0));
		assertThatIllegalArgumentException().isThrownBy(() -> JsonReader.builder().maxMembers(0));
	}

	@Test
	void errorsShowOddCharactersAsEscapesAndLongKeysShortened() {
		assertThat(refused("[\u0001]").getMessage()).isEqualTo("expected a value, found '\\u0001' at offset 1");
		String key = "k".repeat(100);
		assertThat(refused("{\"" + key + "\":1,\"" + key + "\":2}").getMessage())
			.isEqualTo("duplicate key \"" + "k".repeat(64) + "...\" at offset 106");
	}

	@Test
	void theWriterRefusesWhatHasNoJsonForm() {
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write(Double.NaN))
			.withMessage("NaN has no JSON form");
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write(List.of(Double.POSITIVE_INFINITY)))
			.withMessage("Infinity has no JSON form");
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write(Float.NEGATIVE_INFINITY));
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write(Map.of(1, "one")))
			.withMessage("a JSON member name must be a string, not 1");
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write(new Object()))
			.withMessageStartingWith("a java.lang.Object has no JSON form");
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write(Thread.State.NEW))
			.withMessageStartingWith("a java.lang.Thread$State has no JSON form");
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write("a\uD800b"))
			.withMessage("the string has an unpaired surrogate U+D800 at index 1");
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write("\uDC00"));
	}

	@Test
	void theWriterRefusesAValueThatContainsItself() {
		Map<String, Object> loop = new HashMap<>();
		loop.put("self", loop);
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write(loop))
			.withMessageContaining("nested deeper than " + JsonWriter.MAX_DEPTH + " levels");
		List<Object> list = new ArrayList<>();
		list.add(list);
		assertThatIllegalArgumentException().isThrownBy(() -> JsonWriter.write(list));
	}

	@Test
	void randomDocumentsRoundTrip() {
		Random random = new Random(42);
		for (int i = 0; i < 2_000; i++) {
			Object document = randomValue(random, 0);
			String json = JsonWriter.write(document);
			assertThat(READER.read(json)).as(json).isEqualTo(document);
		}
	}

	@Test
	void damagedDocumentsAreReadOrRefusedWithAJsonExceptionOnly() {
		Random random = new Random(7);
		String alphabet = "{}[]:,\"\\/-+.0123456789eEtrufalsn \t\nxu\u00e9\uD83D\uDE80";
		int refusals = 0;
		for (int i = 0; i < 20_000; i++) {
			StringBuilder json = new StringBuilder(JsonWriter.write(randomValue(random, 0)));
			for (int edits = 1 + random.nextInt(3); edits > 0 && !json.isEmpty(); edits--) {
				int at = random.nextInt(json.length());
				switch (random.nextInt(3)) {
					case 0 -> json.deleteCharAt(at);
					case 1 -> json.insert(at, alphabet.charAt(random.nextInt(alphabet.length())));
					default -> json.setLength(at);
				}
			}
			String text = json.toString();
			try {
				READER.read(text);
			}
			catch (JsonException ex) {
				assertThat(ex.offset()).as(text).isBetween(0, text.length());
				refusals++;
			}
		}
		assertThat(refusals).isGreaterThan(10_000);
	}

	private static Object randomValue(Random random, int depth) {
		int kind = random.nextInt((depth < 4) ? 9 : 7);
		return switch (kind) {
			case 0 -> randomString(random);
			case 1 -> random.nextLong();
			// integers beyond a long, and numbers with a scale, which read back as
			// BigInteger and BigDecimal
			case 2 -> BigInteger.ONE.shiftLeft(63 + random.nextInt(64))
				.add(BigInteger.valueOf(random.nextLong() & Long.MAX_VALUE))
				.multiply(BigInteger.valueOf(random.nextBoolean() ? 1 : -1));
			case 3 -> BigDecimal.valueOf(random.nextLong(), random.nextInt(1, 20) * (random.nextBoolean() ? 1 : -1));
			case 4 -> random.nextBoolean();
			case 5 -> BigDecimal.valueOf(random.nextInt(1000), 3);
			case 6 -> (long) random.nextInt(10);
			case 7 -> {
				List<Object> list = new ArrayList<>();
				for (int i = random.nextInt(5); i > 0; i--) {
					list.add(randomValue(random, depth + 1));
				}
				yield list;
			}
			default -> {
				Map<String, Object> map = new LinkedHashMap<>();
				for (int i = random.nextInt(5); i > 0; i--) {
					map.put(randomString(random), randomValue(random, depth + 1));
				}
				yield map;
			}
		};
	}

	private static String randomString(Random random) {
		StringBuilder text = new StringBuilder();
		for (int i = random.nextInt(8); i > 0; i--) {
			int codePoint = switch (random.nextInt(4)) {
				case 0 -> random.nextInt(0x20);
				case 1 -> 0x20 + random.nextInt(0x60);
				case 2 -> 0xa0 + random.nextInt(0xd000);
				default -> 0x10000 + random.nextInt(0x1000);
			};
			text.appendCodePoint(codePoint);
		}
		return text.toString();
	}

	@ParameterizedTest
	@ValueSource(strings = { "{\"a\":[{\"b\":null}]}", "[true,false,null]", "\"\"", "[]", "{}", "-0.125",
			"18446744073709551616" })
	void writingWhatWasReadGivesTheSameText(String json) {
		assertThat(JsonWriter.write(READER.read(json))).isEqualTo(json);
	}

}
