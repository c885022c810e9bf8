package dev.nixl4j.sample.model;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * The metadata key/values of a GGUF file, in the file's order, with typed accessors.
 * Scalars and strings were read when the file was opened; arrays are read from the mapped
 * file when asked for, so their accessors need the {@link GgufFile} open. Every accessor
 * throws {@link GgufFormatException} naming the key when the key is missing or its value
 * has another type or does not fit.
 */
public final class GgufMetadata {

	private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

	private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED
		.withOrder(ByteOrder.LITTLE_ENDIAN);

	/**
	 * A value: a scalar (Long for integers, the raw bits for UINT64; Float; Double;
	 * Boolean; String) or an {@link ArrayValue}.
	 */
	record Value(GgufValueType type, Object value) {
	}

	/**
	 * An array's elements, still in the file: {@code elements} starts at the first
	 * element; string elements were checked to lie within it.
	 */
	record ArrayValue(GgufValueType elementType, int length, MemorySegment elements) {
	}

	private final Map<String, Value> values;

	GgufMetadata(Map<String, Value> values) {
		this.values = values;
	}

	/**
	 * Returns the keys, in the file's order.
	 * @return the keys
	 */
	public Set<String> keys() {
		return Collections.unmodifiableSet(this.values.keySet());
	}

	/**
	 * Returns whether a key is present.
	 * @param key the key
	 * @return whether the file has it
	 */
	public boolean contains(String key) {
		return this.values.containsKey(key);
	}

	/**
	 * Returns the type of a key's value.
	 * @param key the key
	 * @return its type
	 * @throws GgufFormatException if the key is missing
	 */
	public GgufValueType type(String key) {
		return value(key).type();
	}

	/**
	 * Returns the element type of an array value.
	 * @param key the key
	 * @return the type of its elements, or {@code null} when the value is not an array
	 * @throws GgufFormatException if the key is missing
	 */
	public @Nullable GgufValueType elementType(String key) {
		return (value(key).value() instanceof ArrayValue array) ? array.elementType() : null;
	}

	/**
	 * Returns a string value.
	 * @param key the key
	 * @return the string
	 * @throws GgufFormatException if the key is missing or not a string
	 */
	public String getString(String key) {
		return (String) typed(key, GgufValueType.STRING).value();
	}

	/**
	 * Returns an integer value (of any of the integer types) as a long.
	 * @param key the key
	 * @return the value
	 * @throws GgufFormatException if the key is missing, not an integer, or a UINT64
	 * above {@link Long#MAX_VALUE}
	 */
	public long getLong(String key) {
		Value value = value(key);
		if (!value.type().isInteger()) {
			throw mistyped(key, value.type(), "an integer");
		}
		long result = (Long) value.value();
		if (value.type() == GgufValueType.UINT64 && result < 0) {
			throw new GgufFormatException(
					"metadata key '" + key + "': " + Long.toUnsignedString(result) + " does not fit a long");
		}
		return result;
	}

	/**
	 * Returns an integer value (of any of the integer types) as an int.
	 * @param key the key
	 * @return the value
	 * @throws GgufFormatException if the key is missing, not an integer, or out of an
	 * int's range
	 */
	public int getInt(String key) {
		long value = getLong(key);
		if (value != (int) value) {
			throw new GgufFormatException("metadata key '" + key + "': " + value + " does not fit an int");
		}
		return (int) value;
	}

	/**
	 * Returns a FLOAT32 value, or a FLOAT64 value rounded to a float.
	 * @param key the key
	 * @return the value
	 * @throws GgufFormatException if the key is missing or not a float
	 */
	public float getFloat(String key) {
		return (float) getDouble(key);
	}

	/**
	 * Returns a FLOAT32 or FLOAT64 value.
	 * @param key the key
	 * @return the value
	 * @throws GgufFormatException if the key is missing or not a float
	 */
	public double getDouble(String key) {
		Value value = value(key);
		return switch (value.value()) {
			case Float f when value.type() == GgufValueType.FLOAT32 -> f;
			case Double d when value.type() == GgufValueType.FLOAT64 -> d;
			default -> throw mistyped(key, value.type(), "FLOAT32 or FLOAT64");
		};
	}

	/**
	 * Returns a BOOL value.
	 * @param key the key
	 * @return the value
	 * @throws GgufFormatException if the key is missing or not a BOOL
	 */
	public boolean getBoolean(String key) {
		return (Boolean) typed(key, GgufValueType.BOOL).value();
	}

	/**
	 * Returns the length of an array value.
	 * @param key the key
	 * @return the number of elements
	 * @throws GgufFormatException if the key is missing or not an array
	 */
	public int arrayLength(String key) {
		return array(key).length();
	}

	/**
	 * Returns an array of strings.
	 * @param key the key
	 * @return the strings
	 * @throws GgufFormatException if the key is missing, not an array of strings, or one
	 * is not valid UTF-8
	 * @throws IllegalStateException if the file is closed
	 */
	public List<String> getStringArray(String key) {
		ArrayValue array = array(key);
		if (array.elementType() != GgufValueType.STRING) {
			throw mistyped(key, array.elementType(), "STRING", "an array of ");
		}
		List<String> result = new ArrayList<>(array.length());
		MemorySegment elements = array.elements();
		long position = 0;
		for (int i = 0; i < array.length(); i++) {
			// GgufFile checked every length against the array's bytes.
			long length = elements.get(U64, position);
			result.add(utf8(elements.asSlice(position + 8, length), "metadata key '" + key + "' element " + i));
			position += 8 + length;
		}
		return Collections.unmodifiableList(result);
	}

	/**
	 * Returns an array of integers (of any of the integer types) as ints.
	 * @param key the key
	 * @return the values
	 * @throws GgufFormatException if the key is missing, not an array of integers, or a
	 * value does not fit an int
	 * @throws IllegalStateException if the file is closed
	 */
	public int[] getIntArray(String key) {
		long[] longs = getLongArray(key);
		int[] result = new int[longs.length];
		for (int i = 0; i < longs.length; i++) {
			if (longs[i] != (int) longs[i]) {
				throw new GgufFormatException(
						"metadata key '" + key + "' element " + i + ": " + longs[i] + " does not fit an int");
			}
			result[i] = (int) longs[i];
		}
		return result;
	}

	/**
	 * Returns an array of integers (of any of the integer types) as longs.
	 * @param key the key
	 * @return the values
	 * @throws GgufFormatException if the key is missing, not an array of integers, or a
	 * UINT64 is above {@link Long#MAX_VALUE}
	 * @throws IllegalStateException if the file is closed
	 */
	public long[] getLongArray(String key) {
		ArrayValue array = array(key);
		GgufValueType type = array.elementType();
		if (!type.isInteger()) {
			throw mistyped(key, type, "an integer type", "an array of ");
		}
		MemorySegment e = array.elements();
		long[] result = new long[array.length()];
		for (int i = 0; i < result.length; i++) {
			result[i] = switch (type) {
				case UINT8 -> e.get(ValueLayout.JAVA_BYTE, i) & 0xFFL;
				case INT8 -> e.get(ValueLayout.JAVA_BYTE, i);
				case UINT16 -> e.get(U16, 2L * i) & 0xFFFFL;
				case INT16 -> e.get(U16, 2L * i);
				case UINT32 -> e.get(U32, 4L * i) & 0xFFFF_FFFFL;
				case INT32 -> e.get(U32, 4L * i);
				case UINT64, INT64 -> e.get(U64, 8L * i);
				default -> throw new IllegalStateException(type.toString());
			};
			if (type == GgufValueType.UINT64 && result[i] < 0) {
				throw new GgufFormatException("metadata key '" + key + "' element " + i + ": "
						+ Long.toUnsignedString(result[i]) + " does not fit a long");
			}
		}
		return result;
	}

	/**
	 * Returns an array of FLOAT32 values, or of FLOAT64 values rounded to floats.
	 * @param key the key
	 * @return the values
	 * @throws GgufFormatException if the key is missing or not an array of floats
	 * @throws IllegalStateException if the file is closed
	 */
	public float[] getFloatArray(String key) {
		ArrayValue array = array(key);
		MemorySegment e = array.elements();
		float[] result = new float[array.length()];
		switch (array.elementType()) {
			case FLOAT32 -> {
				for (int i = 0; i < result.length; i++) {
					result[i] = e.get(F32, 4L * i);
				}
			}
			case FLOAT64 -> {
				for (int i = 0; i < result.length; i++) {
					result[i] = (float) e.get(F64, 8L * i);
				}
			}
			default -> throw mistyped(key, array.elementType(), "FLOAT32 or FLOAT64", "an array of ");
		}
		return result;
	}

	static String utf8(MemorySegment bytes, String what) {
		try {
			return StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT)
				.decode(bytes.asByteBuffer())
				.toString();
		}
		catch (CharacterCodingException ex) {
			throw new GgufFormatException(what + ": the string is not valid UTF-8", ex);
		}
	}

	private Value value(String key) {
		Value value = this.values.get(key);
		if (value == null) {
			throw new GgufFormatException("metadata key '" + key + "' is missing");
		}
		return value;
	}

	private Value typed(String key, GgufValueType type) {
		Value value = value(key);
		if (value.type() != type) {
			throw mistyped(key, value.type(), type.toString());
		}
		return value;
	}

	private ArrayValue array(String key) {
		Value value = value(key);
		if (!(value.value() instanceof ArrayValue array)) {
			throw mistyped(key, value.type(), "an array");
		}
		return array;
	}

	private static GgufFormatException mistyped(String key, GgufValueType actual, String expected) {
		return mistyped(key, actual, expected, "");
	}

	private static GgufFormatException mistyped(String key, GgufValueType actual, String expected, String prefix) {
		return new GgufFormatException(
				"metadata key '" + key + "' is " + prefix + actual + ", not " + prefix + expected);
	}

}
