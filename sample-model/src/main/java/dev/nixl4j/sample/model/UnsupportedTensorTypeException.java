package dev.nixl4j.sample.model;

/**
 * A tensor's data was asked for, but its type is one that this reader lists and does not
 * read: only {@link GgmlType#F32}, {@link GgmlType#F16}, {@link GgmlType#Q8_0} and
 * {@link GgmlType#Q4_1} are read.
 */
public class UnsupportedTensorTypeException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String tensor;

	private final GgmlType type;

	/**
	 * Creates the exception.
	 * @param tensor the tensor's name
	 * @param type its type
	 */
	public UnsupportedTensorTypeException(String tensor, GgmlType type) {
		super("tensor '" + tensor + "' has type " + type + ", which is not read (only F32, F16, Q8_0 and Q4_1 are)");
		this.tensor = tensor;
		this.type = type;
	}

	/**
	 * Returns the tensor's name.
	 * @return the tensor's name
	 */
	public String tensor() {
		return this.tensor;
	}

	/**
	 * Returns the tensor's type.
	 * @return the tensor's type
	 */
	public GgmlType type() {
		return this.type;
	}

}
