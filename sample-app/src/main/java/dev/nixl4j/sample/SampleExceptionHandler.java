package dev.nixl4j.sample;

import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers a {@link SampleException} with an RFC 9457 problem document.
 */
@RestControllerAdvice
class SampleExceptionHandler {

	@ExceptionHandler
	ProblemDetail sampleException(SampleException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(ex.status(), ex.getMessage());
		problem.setTitle(ex.title());
		return problem;
	}

}
