package dev.nixl4j.sample.web;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import dev.nixl4j.sample.WorkerToken;

import org.springframework.http.HttpHeaders;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Answers 401, with no body, to a request without {@code Authorization: Bearer <token>},
 * checked by the same rule as the metadata registry on this port ({@link WorkerToken}):
 * the scheme in any case, the token compared in constant time. The prefill worker puts
 * its API behind it, both workers their meters ({@link SampleWebConfiguration}).
 */
public final class BearerTokenFilter extends OncePerRequestFilter {

	private final WorkerToken token;

	/**
	 * Creates the filter.
	 * @param token the workers' token
	 */
	public BearerTokenFilter(WorkerToken token) {
		this.token = token;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		if (!this.token.isPresentedBy(request)) {
			response.setHeader(HttpHeaders.WWW_AUTHENTICATE, "Bearer");
			response.setStatus(HttpServletResponse.SC_UNAUTHORIZED);
			return;
		}
		chain.doFilter(request, response);
	}

}
