package dev.nixl4j.sample.prefill;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Answers 401, with no body, to a request without {@code Authorization: Bearer <token>}. The
 * scheme is matched in any case (RFC 9110, section 11.1); the token is compared in a time that
 * does not depend on where it differs.
 */
class BearerTokenFilter extends OncePerRequestFilter {

	private static final String SCHEME = "Bearer ";

	private final byte[] expected;

	BearerTokenFilter(String token) {
		this.expected = token.getBytes(StandardCharsets.UTF_8);
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (!authorized(request.getHeader(HttpHeaders.AUTHORIZATION))) {
			response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
			response.setStatus(HttpServletResponse.SC_UNAUTHORIZED);
			return;
		}
		chain.doFilter(request, response);
	}

	private boolean authorized(@Nullable String header) {
		if (header == null || !header.regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
			return false;
		}
		return MessageDigest.isEqual(this.expected,
				header.substring(SCHEME.length()).getBytes(StandardCharsets.UTF_8));
	}

}
