package dev.nixl4j.sample.model;

import java.util.Arrays;

/**
 * One tensor of a GGUF file as its tensor info describes it: name, type, dimensions
 * (inner first, as GGUF lists them: {@code dimensions()[0]} is the length of a row),
 * offset in the data section and size in bytes. All of it was checked against the file
 * when it was opened.
 */
public final class GgufTensorInfo {

	private final String name;

	private final GgmlType type;

	private final long[] dimensions;

	private final long offset;

	private final long elementCount;

	private final long byteSize;

	GgufTensorInfo(String name, GgmlType type, long[] dimensions, long offset, long elementCount, long byteSize) {
		this.name = name;
		this.type = type;
		this.dimensions = dimensions.clone();
		this.offset = offset;
		this.elementCount = elementCount;
		this.byteSize = byteSize;
	}

	/**
	 * Returns the tensor's name.
	 * @return the name
	 */
	public String name() {
		return this.name;
	}

	/**
	 * Returns the tensor's type.
	 * @return the type
	 */
	public GgmlType type() {
		return this.type;
	}

	/**
	 * Returns the dimensions, inner first as GGUF lists them (a copy).
	 * @return the dimensions
	 */
	public long[] dimensions() {
		return this.dimensions.clone();
	}

	/**
	 * Returns the offset of the tensor's bytes from the start of the data section.
	 * @return the offset in bytes
	 */
	public long offset() {
		return this.offset;
	}

	/**
	 * Returns the number of values: the product of the dimensions.
	 * @return the number of values
	 */
	public long elementCount() {
		return this.elementCount;
	}

	/**
	 * Returns the size of the tensor's bytes.
	 * @return the size in bytes
	 */
	public long byteSize() {
		return this.byteSize;
	}

	/**
	 * Returns the number of values in one row: the first dimension.
	 * @return the row length
	 */
	public long rowLength() {
		return this.dimensions[0];
	}

	/**
	 * Returns the number of rows: the product of all dimensions but the first.
	 * @return the number of rows
	 */
	public long rowCount() {
		return (this.dimensions[0] == 0) ? 0 : this.elementCount / this.dimensions[0];
	}

	/**
	 * Returns the size in bytes of one row.
	 * @return the row's size in bytes
	 */
	public long rowBytes() {
		return this.dimensions[0] / this.type.blockValues() * this.type.blockBytes();
	}

	@Override
	public String toString() {
		return this.name + " " + this.type + " " + Arrays.toString(this.dimensions) + " @" + this.offset + " ("
				+ this.byteSize + " bytes)";
	}

}
