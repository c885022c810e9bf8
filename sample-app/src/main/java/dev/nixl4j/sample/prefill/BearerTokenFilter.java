package dev.nixl4j.sample.prefill;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Answers 401, with no body, to a request without {@code Authorization: Bearer <token>}. The
 * comparison takes the same time wherever the tokens differ.
 */
class BearerTokenFilter extends OncePerRequestFilter {

	private final byte[] expected;

	BearerTokenFilter(String token) {
		this.expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		String given = request.getHeader(HttpHeaders.AUTHORIZATION);
		if (given == null || !MessageDigest.isEqual(this.expected, given.getBytes(StandardCharsets.UTF_8))) {
			response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
			response.setStatus(HttpServletResponse.SC_UNAUTHORIZED);
			return;
		}
		chain.doFilter(request, response);
	}

}
