package dev.nixl4j.sample.model;

import org.jspecify.annotations.Nullable;

/**
 * The type of a GGUF metadata value, with its id in the file.
 */
public enum GgufValueType {

	/** Unsigned 8-bit integer. */
	UINT8(0, 1),
	/** Signed 8-bit integer. */
	INT8(1, 1),
	/** Unsigned 16-bit integer. */
	UINT16(2, 2),
	/** Signed 16-bit integer. */
	INT16(3, 2),
	/** Unsigned 32-bit integer. */
	UINT32(4, 4),
	/** Signed 32-bit integer. */
	INT32(5, 4),
	/** 32-bit IEEE 754 float. */
	FLOAT32(6, 4),
	/** Boolean, one byte: 0 or 1. */
	BOOL(7, 1),
	/** UTF-8 string: u64 length and the bytes. */
	STRING(8, 0),
	/** Array: u32 element type, u64 length and the elements. */
	ARRAY(9, 0),
	/** Unsigned 64-bit integer. */
	UINT64(10, 8),
	/** Signed 64-bit integer. */
	INT64(11, 8),
	/** 64-bit IEEE 754 float. */
	FLOAT64(12, 8);

	private final int id;

	private final int size;

	GgufValueType(int id, int size) {
		this.id = id;
		this.size = size;
	}

	/**
	 * Returns the type's id in a GGUF file.
	 * @return the id
	 */
	public int id() {
		return this.id;
	}

	/**
	 * Returns the size in bytes of one value of a fixed-size type; 0 for {@link #STRING}
	 * and {@link #ARRAY}.
	 * @return the size in bytes, or 0
	 */
	public int size() {
		return this.size;
	}

	/**
	 * Returns whether the type is one of the integer types.
	 * @return whether the type is an integer type
	 */
	public boolean isInteger() {
		return switch (this) {
			case UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64 -> true;
			default -> false;
		};
	}

	/**
	 * Returns the type with an id.
	 * @param id the id, as read from a file (unsigned 32-bit)
	 * @return the type, or {@code null} when no type has that id
	 */
	public static @Nullable GgufValueType ofId(long id) {
		for (GgufValueType type : values()) {
			if (type.id == id) {
				return type;
			}
		}
		return null;
	}

}
