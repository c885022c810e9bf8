package dev.nixl4j.sample.model;

import org.jspecify.annotations.Nullable;

/**
 * The type of a tensor in a GGUF file (ggml's type), with its id, the number of values in
 * one block and the bytes of one block. Every type is listed; the data of {@link #F32},
 * {@link #F16}, {@link #Q8_0} and {@link #Q4_1} can be read ({@link #isReadable()}).
 */
public enum GgmlType {

	/** 32-bit float. */
	F32(0, 1, 4),
	/** 16-bit IEEE 754 half float. */
	F16(1, 1, 2),
	/** 4-bit blocks of 32 with an f16 scale. */
	Q4_0(2, 32, 18),
	/**
	 * 4-bit blocks of 32 with an f16 scale {@code d} and an f16 minimum {@code m}, then
	 * 16 bytes: value {@code j} (0..15) is the low nibble of byte {@code j}, value
	 * {@code j + 16} its high nibble; {@code x = d * q + m}.
	 */
	Q4_1(3, 32, 20),
	/** 5-bit blocks of 32 with an f16 scale. */
	Q5_0(6, 32, 22),
	/** 5-bit blocks of 32 with an f16 scale and minimum. */
	Q5_1(7, 32, 24),
	/**
	 * 8-bit blocks of 32: an f16 scale {@code d} and 32 int8 {@code q};
	 * {@code x = d * q}.
	 */
	Q8_0(8, 32, 34),
	/** 8-bit blocks of 32 with an f16 scale and sum. */
	Q8_1(9, 32, 36),
	/** K-quant, 2 bits. */
	Q2_K(10, 256, 84),
	/** K-quant, 3 bits. */
	Q3_K(11, 256, 110),
	/** K-quant, 4 bits. */
	Q4_K(12, 256, 144),
	/** K-quant, 5 bits. */
	Q5_K(13, 256, 176),
	/** K-quant, 6 bits. */
	Q6_K(14, 256, 210),
	/** K-quant, 8 bits. */
	Q8_K(15, 256, 292),
	/** I-quant. */
	IQ2_XXS(16, 256, 66),
	/** I-quant. */
	IQ2_XS(17, 256, 74),
	/** I-quant. */
	IQ3_XXS(18, 256, 98),
	/** I-quant. */
	IQ1_S(19, 256, 50),
	/** I-quant, non-linear 4 bits. */
	IQ4_NL(20, 32, 18),
	/** I-quant. */
	IQ3_S(21, 256, 110),
	/** I-quant. */
	IQ2_S(22, 256, 82),
	/** I-quant. */
	IQ4_XS(23, 256, 136),
	/** 8-bit integer. */
	I8(24, 1, 1),
	/** 16-bit integer. */
	I16(25, 1, 2),
	/** 32-bit integer. */
	I32(26, 1, 4),
	/** 64-bit integer. */
	I64(27, 1, 8),
	/** 64-bit float. */
	F64(28, 1, 8),
	/** I-quant. */
	IQ1_M(29, 256, 56),
	/** bfloat16. */
	BF16(30, 1, 2),
	/** Ternary quant. */
	TQ1_0(34, 256, 54),
	/** Ternary quant. */
	TQ2_0(35, 256, 66),
	/** Microscaling FP4. */
	MXFP4(39, 32, 17);

	private final int id;

	private final int blockValues;

	private final int blockBytes;

	GgmlType(int id, int blockValues, int blockBytes) {
		this.id = id;
		this.blockValues = blockValues;
		this.blockBytes = blockBytes;
	}

	/**
	 * Returns the type's id in a GGUF file.
	 * @return the id
	 */
	public int id() {
		return this.id;
	}

	/**
	 * Returns the number of values in one block (1 for plain types).
	 * @return values per block
	 */
	public int blockValues() {
		return this.blockValues;
	}

	/**
	 * Returns the size in bytes of one block.
	 * @return bytes per block
	 */
	public int blockBytes() {
		return this.blockBytes;
	}

	/**
	 * Returns whether this reader reads (and dequantizes) tensors of this type: F32, F16,
	 * Q8_0 and Q4_1.
	 * @return whether tensors of this type can be read
	 */
	public boolean isReadable() {
		return this == F32 || this == F16 || this == Q8_0 || this == Q4_1;
	}

	/**
	 * Returns the type with an id.
	 * @param id the id, as read from a file (unsigned 32-bit)
	 * @return the type, or {@code null} when no type has that id
	 */
	public static @Nullable GgmlType ofId(long id) {
		for (GgmlType type : values()) {
			if (type.id == id) {
				return type;
			}
		}
		return null;
	}

}
