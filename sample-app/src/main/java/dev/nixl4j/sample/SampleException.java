package dev.nixl4j.sample;

import java.time.Duration;

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

	private final @Nullable Duration retryAfter;

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
		this(status, title, detail, cause, null);
	}

	/**
	 * Creates the exception of a refusal that the caller may retry.
	 * @param status the status to answer, 429 or 503
	 * @param title a short, stable summary
	 * @param detail what was wrong, for this request
	 * @param cause the cause, or {@code null}
	 * @param retryAfter how long the caller should wait before it retries (the answer's
	 * {@code Retry-After}), or {@code null} for no such header
	 */
	public SampleException(HttpStatus status, String title, String detail, @Nullable Throwable cause,
			@Nullable Duration retryAfter) {
		super(detail, cause);
		this.status = status;
		this.title = title;
		this.retryAfter = retryAfter;
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
	 * Returns how long the caller should wait before it retries.
	 * @return the wait, or {@code null} when the answer says none
	 */
	public @Nullable Duration retryAfter() {
		return this.retryAfter;
	}

	/**
	 * Returns the {@code Retry-After} of the answer: whole seconds, rounded up, at least
	 * one.
	 * @return the seconds, or {@code null} when the answer says none
	 */
	public @Nullable Long retryAfterSeconds() {
		return (this.retryAfter != null) ? Math.max(1, (this.retryAfter.toMillis() + 999) / 1000) : null;
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
