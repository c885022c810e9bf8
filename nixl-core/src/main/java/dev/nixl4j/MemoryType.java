package dev.nixl4j;

/**
 * Kinds of memory NIXL can register and transfer, with NIXL's own numbering.
 */
public enum MemoryType {

	/** Host memory. */
	DRAM(0),
	/** GPU memory (CUDA device memory). */
	VRAM(1),
	/** Block devices. */
	BLOCK(2),
	/** Object stores. */
	OBJECT(3),
	/** Files. */
	FILE(4),
	/** Unknown or unspecified memory. */
	UNKNOWN(5);

	private final int code;

	MemoryType(int code) {
		this.code = code;
	}

	/**
	 * Returns NIXL's code for this memory type.
	 * @return the code of {@code nixl_mem_t}
	 */
	public int code() {
		return this.code;
	}

	/**
	 * Returns the memory type of a NIXL code.
	 * @param code the native code
	 * @return the memory type, {@link #UNKNOWN} for codes out of range
	 */
	public static MemoryType ofCode(int code) {
		for (MemoryType type : values()) {
			if (type.code == code) {
				return type;
			}
		}
		return UNKNOWN;
	}

}
