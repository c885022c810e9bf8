package dev.nixl4j.sample;

import java.util.Objects;

import jakarta.servlet.http.HttpServletRequest;

import dev.nixl4j.metadata.BearerToken;

import org.springframework.context.annotation.DependsOn;
import org.springframework.http.HttpHeaders;
import org.springframework.stereotype.Component;

/**
 * The workers' shared bearer token ({@code sample.token}) as a check of requests: the
 * prefill worker requires it on its whole API, the decode worker on the parts of
 * {@code POST /generate} that only another worker or an operator may use. Checked by the
 * metadata registry's rule ({@link BearerToken}): {@code Authorization: Bearer <token>},
 * the scheme in any case, the token compared in constant time.
 */
@Component
@DependsOn("sampleRole")
public final class WorkerToken {

	private final BearerToken token;

	WorkerToken(SampleProperties properties) {
		// sampleRole has refused a missing or blank token already
		this.token = BearerToken.of(Objects.requireNonNull(properties.getToken(), "sample.token"));
	}

	/**
	 * Whether a request presents the workers' token.
	 * @param request the request
	 * @return {@code true} when its {@code Authorization} header carries the token
	 */
	public boolean isPresentedBy(HttpServletRequest request) {
		return this.token.matches(request.getHeader(HttpHeaders.AUTHORIZATION));
	}

	@Override
	public String toString() {
		return "WorkerToken[hidden]";
	}

}
