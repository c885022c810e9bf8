package dev.nixl4j.sample;

import java.util.Collection;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.exc.InvalidFormatException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers a {@link SampleException} with an RFC 9457 problem document (with
 * {@code Retry-After} when the refusal says when to retry), and a request body that is
 * not JSON of the request's types with a 400 that names the field. A caller without a
 * worker's token reads the detail without agent names and paths ({@link HiddenNames}).
 */
@RestControllerAdvice
@Order(Ordered.HIGHEST_PRECEDENCE)
class SampleExceptionHandler {

	private final HiddenNames names;

	SampleExceptionHandler(HiddenNames names) {
		this.names = names;
	}

	@ExceptionHandler
	ResponseEntity<ProblemDetail> sampleException(SampleException ex, HttpServletRequest request) {
		String detail = WorkerToken.isAuthenticated(request) ? ex.getMessage() : this.names.hide(ex.getMessage());
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(ex.status(), detail);
		problem.setTitle(ex.title());
		ResponseEntity.BodyBuilder answer = ResponseEntity.status(ex.status());
		Long retryAfter = ex.retryAfterSeconds();
		if (retryAfter != null) {
			answer.header(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter));
		}
		return answer.body(problem);
	}

	@ExceptionHandler
	ProblemDetail unreadableBody(HttpMessageNotReadableException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST,
				describe(ex.getMostSpecificCause()));
		problem.setTitle("Bad request body");
		return problem;
	}

	private static String describe(Throwable cause) {
		if (cause instanceof UnrecognizedPropertyException unknown) {
			return "field '" + path(unknown.getPath()) + "' is not part of this request; its fields are "
					+ unknown.getKnownPropertyIds();
		}
		if (cause instanceof MismatchedInputException mismatch && !mismatch.getPath().isEmpty()) {
			String given = (mismatch instanceof InvalidFormatException format) ? ", not " + format.getValue() : "";
			return "field '" + path(mismatch.getPath()) + "' must be " + kind(mismatch.getTargetType()) + given;
		}
		if (cause instanceof JacksonException json) {
			return "the request body is not JSON of this request's shape: "
					+ json.getOriginalMessage().lines().findFirst().orElse("");
		}
		return "the request body cannot be read";
	}

	private static String path(List<JacksonException.Reference> path) {
		StringBuilder text = new StringBuilder();
		for (JacksonException.Reference reference : path) {
			if (reference.getPropertyName() != null) {
				text.append(text.isEmpty() ? "" : ".").append(reference.getPropertyName());
			}
			else if (reference.getIndex() >= 0) {
				text.append('[').append(reference.getIndex()).append(']');
			}
		}
		return text.toString();
	}

	private static String kind(Class<?> type) {
		if (type == null) {
			return "of another type";
		}
		if (CharSequence.class.isAssignableFrom(type)) {
			return "text";
		}
		if (type == Integer.class || type == Long.class || type == int.class || type == long.class) {
			return "an integer";
		}
		if (Collection.class.isAssignableFrom(type) || type.isArray()) {
			return "an array";
		}
		return "a " + type.getSimpleName();
	}

}
