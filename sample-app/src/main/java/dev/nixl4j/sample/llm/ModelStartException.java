package dev.nixl4j.sample.llm;

import org.jspecify.annotations.Nullable;

/**
 * The language model could not start: its file is missing, unreadable or of a shape the
 * engine cannot run, the worker's KV cache does not fit it, or the JVM lacks the Vector
 * API. The start-up report ({@link ModelFailureAnalyzer}) gives the message and what to
 * do.
 */
public class ModelStartException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String action;

	/**
	 * Creates the exception.
	 * @param message what is wrong, naming the property or file
	 * @param action what to do
	 * @param cause the failure, or {@code null}
	 */
	public ModelStartException(String message, String action, @Nullable Throwable cause) {
		super(message, cause);
		this.action = action;
	}

	/**
	 * Returns what to do.
	 * @return the action
	 */
	public String action() {
		return this.action;
	}

}
