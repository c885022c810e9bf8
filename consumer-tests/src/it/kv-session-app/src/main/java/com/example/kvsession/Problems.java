package com.example.kvsession;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.kv.KvIncompatibleException;
import dev.nixl4j.kv.KvIntegrityException;
import dev.nixl4j.kv.KvLeaseLostException;
import dev.nixl4j.kv.KvProducerUnavailableException;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;

/**
 * Problem documents ({@code application/problem+json}) whose {@code type} is the simple
 * name of the failure's class, chosen by the class (most specific first), never by its
 * message.
 */
final class Problems {

	private static final MediaType PROBLEM = MediaType.parseMediaType("application/problem+json");

	private Problems() {
	}

	/**
	 * The problem of a NIXL failure.
	 * @param ex the failure
	 * @return the answer
	 */
	static ResponseEntity<Map<String, Object>> of(NixlException ex) {
		Map<String, Object> body = new LinkedHashMap<>();
		HttpStatus http;
		if (ex instanceof KvIntegrityException integrity) {
			http = HttpStatus.UNPROCESSABLE_CONTENT;
			body.put("producerBlockId", integrity.producerBlockId());
			body.put("localBlockId", integrity.localBlockId());
		}
		else if (ex instanceof KvLeaseLostException lost) {
			http = HttpStatus.CONFLICT;
			body.put("confirmation", (lost.confirmation() != null) ? lost.confirmation().name() : null);
		}
		else if (ex instanceof KvProducerUnavailableException unavailable) {
			http = HttpStatus.SERVICE_UNAVAILABLE;
			body.put("state", unavailable.state().name());
		}
		else if (ex instanceof KvIncompatibleException incompatible) {
			http = HttpStatus.CONFLICT;
			body.put("producerFingerprint", incompatible.producerFingerprint());
			body.put("consumerFingerprint", incompatible.consumerFingerprint());
		}
		else {
			http = (ex.status() == NixlStatus.ERROR_INVALID_PARAM) ? HttpStatus.BAD_REQUEST
					: (ex.status() == NixlStatus.BUSY) ? HttpStatus.SERVICE_UNAVAILABLE : HttpStatus.BAD_GATEWAY;
		}
		Map<String, Object> problem = problem(http, typeName(ex), ex.getMessage());
		problem.put("nixlStatus", ex.status().name());
		problem.put("retryable", ex.retryable());
		problem.putAll(body);
		return ResponseEntity.status(http).contentType(PROBLEM).body(problem);
	}

	/**
	 * A problem of this application's own.
	 * @param http the HTTP status
	 * @param type the problem's type
	 * @param detail what went wrong
	 * @return the answer
	 */
	static ResponseEntity<Map<String, Object>> of(HttpStatus http, String type, String detail) {
		return ResponseEntity.status(http).contentType(PROBLEM).body(problem(http, type, detail));
	}

	/**
	 * A request that names something wrong.
	 * @param detail what is wrong
	 * @return the answer
	 */
	static ResponseEntity<Map<String, Object>> badRequest(String detail) {
		return of(HttpStatus.BAD_REQUEST, "BadRequest", detail);
	}

	private static String typeName(NixlException ex) {
		if (ex instanceof KvIntegrityException) {
			return KvIntegrityException.class.getSimpleName();
		}
		if (ex instanceof KvLeaseLostException) {
			return KvLeaseLostException.class.getSimpleName();
		}
		if (ex instanceof KvProducerUnavailableException) {
			return KvProducerUnavailableException.class.getSimpleName();
		}
		if (ex instanceof KvIncompatibleException) {
			return KvIncompatibleException.class.getSimpleName();
		}
		return NixlException.class.getSimpleName();
	}

	private static Map<String, Object> problem(HttpStatus http, String type, String detail) {
		Map<String, Object> problem = new LinkedHashMap<>();
		problem.put("type", type);
		problem.put("title", http.getReasonPhrase());
		problem.put("status", http.value());
		problem.put("detail", detail);
		return problem;
	}

}
