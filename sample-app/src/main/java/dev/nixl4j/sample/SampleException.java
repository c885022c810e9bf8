package dev.nixl4j.sample;

import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/**
 * A failure of a sample request that the worker answers with a problem document: the HTTP
 * status, a short title and a detail that says what was wrong.
 */
public class SampleException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final HttpStatus status;

	private final String title;

	/**
	 * Creates the exception.
	 * @param status the status to answer
	 * @param title a short, stable summary
	 * @param detail what was wrong, for this request
	 */
	public SampleException(HttpStatus status, String title, String detail) {
		this(status, title, detail, null);
	}

	/**
	 * Creates the exception.
	 * @param status the status to answer
	 * @param title a short, stable summary
	 * @param detail what was wrong, for this request
	 * @param cause the cause, or {@code null}
	 */
	public SampleException(HttpStatus status, String title, String detail, @Nullable Throwable cause) {
		super(detail, cause);
		this.status = status;
		this.title = title;
	}

	/**
	 * Returns the status to answer.
	 * @return the status
	 */
	public HttpStatus status() {
		return this.status;
	}

	/**
	 * Returns the short summary.
	 * @return the title
	 */
	public String title() {
		return this.title;
	}

	/**
	 * A request whose prompt or id is not acceptable.
	 * @param detail what was wrong
	 * @return the exception (400)
	 */
	public static SampleException badRequest(String detail) {
		return new SampleException(HttpStatus.BAD_REQUEST, "Bad request", detail);
	}

}
