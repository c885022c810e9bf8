package dev.nixl4j.sample.model;

import org.jspecify.annotations.Nullable;

/**
 * A GGUF file that is not well formed (bad magic, unsupported version, a count, length,
 * offset or size that does not fit the file, an unknown type), or that lacks a metadata
 * key or tensor asked for, or holds it with another type. The message names the key or
 * tensor and what was wrong.
 */
public class GgufFormatException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Creates the exception.
	 * @param message what was wrong, naming the key or tensor
	 */
	public GgufFormatException(String message) {
		super(message);
	}

	/**
	 * Creates the exception with a cause.
	 * @param message what was wrong, naming the key or tensor
	 * @param cause the cause, or {@code null}
	 */
	public GgufFormatException(String message, @Nullable Throwable cause) {
		super(message, cause);
	}

}
