package dev.nixl4j.sample;

import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import jakarta.servlet.http.HttpServletRequest;

import dev.nixl4j.metadata.http.BearerToken;

import org.springframework.context.annotation.DependsOn;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Component;

/**
 * The workers' bearer tokens as a check of requests: this worker's own
 * ({@code sample.token}) and those of the other workers it takes
 * ({@code sample.peer-tokens}; the prefill worker takes the decode worker's). The prefill
 * worker requires one on its whole API, both workers on their meters, and the decode
 * worker on the parts of {@code POST /generate} that only another worker or an operator
 * may use; a caller that presents one is authenticated as {@link #PRINCIPAL}, so that
 * Actuator shows it health details and agent names ({@code when-authorized}). Checked by
 * the metadata registry's rule ({@link BearerToken}): {@code Authorization: Bearer
 * <token>}, the scheme in any case, each token compared in constant time.
 */
@Component
@DependsOn("sampleRole")
public final class WorkerToken {

	/** The principal of a caller that presented a worker's token. */
	public static final Principal PRINCIPAL = () -> "sample-worker";

	private final List<BearerToken> tokens = new ArrayList<>();

	WorkerToken(SampleProperties properties) {
		// sampleRole has refused a missing or blank token already, the validation blank
		// peers
		this.tokens.add(BearerToken.of(Objects.requireNonNull(properties.getToken(), "sample.token")));
		properties.getPeerTokens().forEach((peer) -> this.tokens.add(BearerToken.of(peer)));
	}

	/**
	 * Whether a request presents a worker's token.
	 * @param request the request
	 * @return {@code true} when its {@code Authorization} header carries this worker's
	 * token or a peer's
	 */
	public boolean isPresentedBy(HttpServletRequest request) {
		String authorization = request.getHeader(HttpHeaders.AUTHORIZATION);
		boolean found = false;
		// every token is compared, so the time taken does not tell which matched
		for (BearerToken token : this.tokens) {
			found |= token.matches(authorization);
		}
		return found;
	}

	/**
	 * Whether a request comes from a caller authenticated by a worker's token (or by the
	 * server otherwise): such a caller may see agent names and paths.
	 * @param request the request
	 * @return {@code true} when the request has a principal
	 */
	public static boolean isAuthenticated(HttpServletRequest request) {
		return request.getUserPrincipal() != null;
	}

	@Override
	public String toString() {
		return "WorkerToken[" + this.tokens.size() + " tokens, hidden]";
	}

}
