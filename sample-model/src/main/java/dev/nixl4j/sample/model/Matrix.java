package dev.nixl4j.sample.model;

import java.lang.foreign.MemorySegment;

/**
 * A quantized weight matrix (Q4_1 or Q8_0) in the mapped file: {@code rows} rows of
 * {@code columns} values, one output per row.
 *
 * @param name the tensor's name
 * @param data the tensor's bytes
 * @param type Q4_1 or Q8_0
 * @param rows the number of rows (outputs)
 * @param columns the length of a row (inputs), a multiple of 32
 * @param rowBytes the bytes of one row
 */
record Matrix(String name, MemorySegment data, GgmlType type, int rows, int columns, long rowBytes) {

	static Matrix of(GgufFile file, String name) {
		GgufTensorInfo t = file.tensor(name);
		return new Matrix(name, file.tensorData(t), t.type(), (int) t.rowCount(), (int) t.rowLength(), t.rowBytes());
	}

	/**
	 * Returns row {@code row} dotted with {@code x[xOffset ..]}; {@code sums} are the
	 * block sums of that part of {@code x} (read for Q4_1 only).
	 */
	float dot(int row, float[] x, int xOffset, float[] sums) {
		long offset = row * this.rowBytes;
		return (this.type == GgmlType.Q4_1) ? Kernels.dotQ41(this.data, offset, this.columns / 32, x, xOffset, sums)
				: Kernels.dotQ80(this.data, offset, this.columns / 32, x, xOffset);
	}

	/** Dequantizes row {@code row} into {@code dst[0 .. columns)}. */
	void dequantize(int row, float[] dst) {
		long offset = row * this.rowBytes;
		if (this.type == GgmlType.Q4_1) {
			Kernels.dequantizeQ41(this.data, offset, this.columns / 32, dst);
		}
		else {
			Kernels.dequantizeQ80(this.data, offset, this.columns / 32, dst);
		}
	}

}
