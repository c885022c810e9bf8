package dev.nixl4j.sample.decode;

import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.function.Supplier;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.sample.HiddenNames;
import dev.nixl4j.sample.SampleApplication;
import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import dev.nixl4j.sample.api.PrefillRequest;
import dev.nixl4j.sample.api.PrefillResponse;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.context.annotation.Profile;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.stereotype.Component;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.springframework.web.client.RestClientResponseException;

/**
 * The decode worker's client of the prefill worker's API, behind the Resilience4j circuit
 * breaker {@code prefill}: a prefill worker that is down fails requests at once, with an
 * error that says so, and is tried again after the breaker's wait.
 */
@Component
@Profile(SampleApplication.DECODE)
public class PrefillClient {

	/** The circuit breaker's instance name. */
	public static final String CIRCUIT_BREAKER = "prefill";

	private final RestClient client;

	private final URI base;

	private final CircuitBreaker breaker;

	private final String consumerAgent;

	private final HiddenNames names;

	private final Duration retryAfter;

	PrefillClient(SampleProperties properties, CircuitBreakerRegistry breakers, NixlAgent agent, HiddenNames names) {
		SampleProperties.Decode decode = properties.getDecode();
		this.base = decode.getPrefillUrl();
		HttpClient http = HttpClient.newBuilder().connectTimeout(decode.getConnectTimeout()).build();
		JdkClientHttpRequestFactory factory = new JdkClientHttpRequestFactory(http);
		factory.setReadTimeout(decode.getPrefillTimeout());
		this.client = RestClient.builder()
			.requestFactory(factory)
			.baseUrl(this.base.toString())
			.defaultHeader(HttpHeaders.AUTHORIZATION, "Bearer " + properties.getToken())
			.build();
		this.breaker = breakers.circuitBreaker(CIRCUIT_BREAKER);
		this.consumerAgent = agent.name();
		this.names = names;
		this.retryAfter = properties.getRetryAfter();
	}

	/**
	 * Asks the prefill worker to fill and lease a request's blocks, naming this worker's
	 * agent as their consumer (the prefill worker's share per consumer counts by it).
	 * @param request the request
	 * @return the transfer parameters
	 */
	public PrefillResponse prefill(PrefillRequest request) {
		PrefillRequest named = request.withConsumer(this.consumerAgent);
		PrefillResponse answer = call("POST /prefill",
				() -> this.client.post()
					.uri("/prefill")
					.contentType(MediaType.APPLICATION_JSON)
					.body(named)
					.retrieve()
					.body(PrefillResponse.class));
		// the producer's name appears in the words of a failed pull: hidden from
		// callers without a token
		this.names.remember(answer.producerAgent());
		return answer;
	}

	private <T> T call(String what, Supplier<T> call) {
		try {
			return this.breaker.executeSupplier(() -> {
				T answer = translate(what, call);
				if (answer == null) {
					throw new PrefillUnavailableException(
							"the prefill worker at " + this.base + " answered " + what + " with an empty body", null);
				}
				return answer;
			});
		}
		catch (CallNotPermittedException ex) {
			throw new PrefillUnavailableException("calls to the prefill worker at " + this.base
					+ " are suspended after repeated failures (circuit breaker '" + CIRCUIT_BREAKER
					+ "' is open); they are tried again after its wait", ex);
		}
	}

	private <T> T translate(String what, Supplier<T> call) {
		try {
			return call.get();
		}
		catch (RestClientResponseException ex) {
			HttpStatusCode status = ex.getStatusCode();
			String detail = detail(ex);
			if (status.value() == HttpStatus.UNAUTHORIZED.value()) {
				throw new SampleException(HttpStatus.BAD_GATEWAY, "Prefill worker refused the token",
						"the prefill worker at " + this.base + " refused this worker's bearer token (401): the "
								+ "prefill worker must take this worker's sample.token among its sample.peer-tokens "
								+ "(NIXL_DECODE_TOKEN, the same for both workers)",
						ex);
			}
			if (status.is4xxClientError() || status.value() == HttpStatus.SERVICE_UNAVAILABLE.value()) {
				// The prefill worker's own answer (bad prompt, request already leased,
				// share or cache full): passed on, with its Retry-After when it has one.
				throw new SampleException(HttpStatus.valueOf(status.value()), "Prefill refused the request",
						"the prefill worker answered " + what + " with " + status.value() + ": " + detail, ex,
						retryAfter(ex));
			}
			throw new PrefillUnavailableException("the prefill worker at " + this.base + " answered " + what + " with "
					+ status.value() + ": " + detail, ex);
		}
		catch (ResourceAccessException ex) {
			throw new PrefillUnavailableException(
					"the prefill worker at " + this.base + " is not reachable (" + what + "): " + rootMessage(ex), ex);
		}
		catch (RestClientException ex) {
			throw new PrefillUnavailableException("the prefill worker at " + this.base + " sent an answer to " + what
					+ " that could not be read: " + rootMessage(ex), ex);
		}
	}

	/**
	 * The wait the prefill worker's refusal asks for: its {@code Retry-After} in seconds,
	 * or {@code sample.retry-after} when it sent an unreadable one; {@code null} when it
	 * sent none, as for a request that needs more than a request's share.
	 */
	private @Nullable Duration retryAfter(RestClientResponseException ex) {
		HttpHeaders headers = ex.getResponseHeaders();
		String value = (headers != null) ? headers.getFirst(HttpHeaders.RETRY_AFTER) : null;
		if (value == null) {
			return null;
		}
		try {
			return Duration.ofSeconds(Math.clamp(Long.parseLong(value.trim()), 1, 3600));
		}
		catch (NumberFormatException notSeconds) {
			return this.retryAfter;
		}
	}

	private static String detail(RestClientResponseException ex) {
		try {
			ProblemDetail problem = ex.getResponseBodyAs(ProblemDetail.class);
			if (problem != null && problem.getDetail() != null) {
				return problem.getDetail();
			}
		}
		catch (RuntimeException ignored) {
			// not a problem document
		}
		return ex.getStatusText();
	}

	/**
	 * The first message in the chain of causes, or the first cause's type when none has
	 * one.
	 */
	private static String rootMessage(Throwable ex) {
		Throwable first = (ex.getCause() != null) ? ex.getCause() : ex;
		for (Throwable cause = first; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && !cause.getMessage().isBlank()) {
				return cause.getClass().getSimpleName() + ": " + cause.getMessage();
			}
			if (cause.getCause() == cause) {
				break;
			}
		}
		return first.getClass().getSimpleName();
	}

}
