package dev.nixl4j.sample.web;

import java.io.IOException;
import java.security.Principal;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import dev.nixl4j.sample.WorkerToken;
import org.jspecify.annotations.Nullable;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Authenticates a request that presents a worker's token ({@link WorkerToken}) as
 * {@link WorkerToken#PRINCIPAL}, on every path, and lets every other request through as
 * it is, anonymous. Actuator decides by the principal what it shows
 * ({@code management.endpoint.health.show-details=when-authorized},
 * {@code nixl.endpoint.show-names=when-authorized}), and the sample's own answers hide
 * agent names and paths from a request without one. Refusing a request is left to
 * {@link BearerTokenFilter}.
 */
public final class WorkerAuthenticationFilter extends OncePerRequestFilter {

	private final WorkerToken token;

	/**
	 * Creates the filter.
	 * @param token the workers' tokens
	 */
	public WorkerAuthenticationFilter(WorkerToken token) {
		this.token = token;
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		chain.doFilter((request.getUserPrincipal() == null && this.token.isPresentedBy(request))
				? new WorkerRequest(request) : request, response);
	}

	/** A request whose caller presented a worker's token. */
	private static final class WorkerRequest extends HttpServletRequestWrapper {

		WorkerRequest(HttpServletRequest request) {
			super(request);
		}

		@Override
		public Principal getUserPrincipal() {
			return WorkerToken.PRINCIPAL;
		}

		@Override
		public String getRemoteUser() {
			return WorkerToken.PRINCIPAL.getName();
		}

		@Override
		public String getAuthType() {
			return "Bearer";
		}

		@Override
		public boolean isUserInRole(@Nullable String role) {
			return false;
		}

	}

}
