package dev.nixl4j.sample.model;

/**
 * A model file whose shape the engine cannot run: a missing or out-of-range metadata key,
 * a missing tensor, or a tensor with the wrong dimensions or type. The message names the
 * key or tensor.
 */
public class ModelShapeException extends GgufFormatException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param message what was wrong, naming the key or tensor
	 */
	public ModelShapeException(String message) {
		super(message);
	}

	/**
	 * Creates the exception with a cause.
	 * @param message what was wrong, naming the key or tensor
	 * @param cause the cause
	 */
	public ModelShapeException(String message, Throwable cause) {
		super(message, cause);
	}

}
