package com.example.kvsession;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ResponseStatusException;

/**
 * The bearer token that every endpoint of this application requires ({@code app.token},
 * by default the registry's token {@code nixl.metadata.http.token}). Compared in constant
 * time; never logged.
 */
@Component
class AccessToken {

	private static final int MIN_LENGTH = 16;

	private final byte[] expected;

	AccessToken(@Value("${app.token:${nixl.metadata.http.token:}}") String token) {
		if (token.isBlank() || token.strip().length() < MIN_LENGTH) {
			throw new IllegalStateException(
					"app.token (or nixl.metadata.http.token) must be set, at least " + MIN_LENGTH + " characters");
		}
		this.expected = ("Bearer " + token.strip()).getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Checks a request's {@code Authorization} header.
	 * @param authorization the header, {@code null} when absent
	 * @throws ResponseStatusException 401 when it does not carry the token
	 */
	void require(String authorization) {
		if (authorization == null
				|| !MessageDigest.isEqual(this.expected, authorization.strip().getBytes(StandardCharsets.UTF_8))) {
			throw new ResponseStatusException(HttpStatus.UNAUTHORIZED, "a valid bearer token is required");
		}
	}

	/**
	 * The header value that carries the token, for calls to the other role.
	 * @return {@code Bearer <token>}
	 */
	String header() {
		return new String(this.expected, StandardCharsets.UTF_8);
	}

}
