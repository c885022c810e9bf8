package dev.nixl4j.sample.decode;

import dev.nixl4j.sample.SampleException;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpStatus;

/**
 * The prefill worker could not be reached or failed (503); the decode worker's circuit
 * breaker {@code prefill} counts these, and only these, as failures.
 */
public class PrefillUnavailableException extends SampleException {

	private static final long serialVersionUID = 1L;

	PrefillUnavailableException(String detail, @Nullable Throwable cause) {
		super(HttpStatus.SERVICE_UNAVAILABLE, "Prefill worker unavailable", detail, cause);
	}

}
