package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * The requests of an {@link HttpMetadataExchange} to its registry: each carries the
 * bearer token and a deadline, an answer's body is read up to a cap, and what an answer
 * or a failure means becomes a {@link NixlException}. It also knows whether the exchange
 * is closing, which ends the fetches that wait for their next attempt.
 */
final class RegistryClient {

	/** The exchange's logger: the name its users configure covers all of its parts. */
	private static final System.Logger logger = System.getLogger(HttpMetadataExchange.class.getName());

	static final String OCTET_STREAM = "application/octet-stream";

	private static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/** How much of a body other than metadata (an error page) is read. */
	private static final int OTHER_BODY_BYTES = 4096;

	private final URI baseUri;

	private final String base;

	private final String authorization;

	private final Duration requestTimeout;

	private final Duration maxRetryInterval;

	private final int maxBytes;

	private final HttpClient client;

	private final CountDownLatch closing = new CountDownLatch(1);

	RegistryClient(HttpMetadataExchange.Builder builder, String token) {
		this.baseUri = builder.baseUri;
		this.base = AgentPaths.trimBase(builder.baseUri.toString());
		this.authorization = "Bearer " + token;
		this.requestTimeout = builder.requestTimeout;
		this.maxRetryInterval = builder.maxRetryInterval;
		this.maxBytes = builder.maxBytes;
		HttpClient.Builder client = HttpClient.newBuilder()
			.connectTimeout(builder.requestTimeout)
			.followRedirects(HttpClient.Redirect.NEVER);
		if (builder.sslContext != null) {
			client.sslContext(builder.sslContext);
		}
		if (builder.sslParameters != null) {
			client.sslParameters(builder.sslParameters);
		}
		this.client = client.build();
	}

	URI baseUri() {
		return this.baseUri;
	}

	Duration requestTimeout() {
		return this.requestTimeout;
	}

	int maxBytes() {
		return this.maxBytes;
	}

	String metadataPath(String agentName) {
		return AgentPaths.metadataPath(this.base, agentName);
	}

	String documentPath(String agentName, String kind) {
		return AgentPaths.documentPath(this.base, agentName, kind);
	}

	/** A request for an agent's metadata entry, with the request timeout. */
	HttpRequest.Builder metadataRequest(String agentName) {
		return requestTo(metadataPath(agentName), this.requestTimeout);
	}

	HttpRequest.Builder requestTo(String path, Duration timeout) {
		return HttpRequest.newBuilder(URI.create(path)).timeout(timeout).header("Authorization", this.authorization);
	}

	/**
	 * Sends a request with the request timeout, reading a body up to the metadata cap.
	 */
	HttpResponse<CappedBody> send(HttpRequest request) throws IOException, InterruptedException {
		return send(request, this.requestTimeout.toNanos(), this.maxBytes);
	}

	private HttpResponse<CappedBody> send(HttpRequest request, long timeoutNanos, int cap)
			throws IOException, InterruptedException {
		CompletableFuture<HttpResponse<CappedBody>> response = this.client.sendAsync(request,
				CappedBody.handler(cap, OTHER_BODY_BYTES));
		try {
			return response.get(Math.max(timeoutNanos, 1), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			response.cancel(true);
			throw new HttpTimeoutException("no complete response within " + Duration.ofNanos(timeoutNanos));
		}
		catch (InterruptedException ex) {
			response.cancel(true);
			throw ex;
		}
		catch (ExecutionException ex) {
			Throwable cause = ex.getCause();
			while (cause instanceof CompletionException && cause.getCause() != null) {
				cause = cause.getCause();
			}
			if (cause instanceof IOException io) {
				throw io;
			}
			throw new IOException("the request failed", cause);
		}
	}

	/**
	 * Sends an owner's request: a registry that cannot be reached is
	 * {@link NixlStatus#UNAVAILABLE}, a refused token fails at once.
	 */
	HttpResponse<CappedBody> sendOrUnavailable(String operation, String agentName, HttpRequest request) {
		try {
			HttpResponse<CappedBody> response = send(request);
			if (response.statusCode() == 401) {
				throw tokenRefused(operation, agentName, 401);
			}
			return response;
		}
		catch (IOException ex) {
			throw new NixlException(NixlStatus.UNAVAILABLE, operation, null, agentName,
					"cannot reach the exchange at " + this.baseUri + ": " + describe(ex), ex, passes(ex));
		}
		catch (InterruptedException ex) {
			throw interrupted(operation, agentName);
		}
	}

	/**
	 * GETs a path until it answers 200 or the deadline passes, and returns the body, at
	 * most {@code cap} bytes: retries while it is not published (404) or the registry
	 * cannot be reached, with a back-off that starts at 50 ms and doubles up to the
	 * longest retry interval; a zero timeout makes one attempt.
	 */
	byte[] awaitBody(String operation, String agentName, String path, int cap, Duration timeout, String what) {
		long start = System.nanoTime();
		long deadline = start + saturatedNanos(timeout);
		long backoff = FIRST_RETRY_NANOS;
		boolean first = true;
		String lastCause = "not published";
		@Nullable Throwable lastFailure = null;
		boolean answered = false;
		while (true) {
			long remaining = deadline - System.nanoTime();
			if (!first && remaining <= 0) {
				throw new NixlException(NixlStatus.TIMEOUT, operation, null, agentName, "no " + what + " from "
						+ this.baseUri + " within " + timeout + " (last attempt: " + lastCause + ")", lastFailure);
			}
			long attemptNanos = first ? this.requestTimeout.toNanos()
					: Math.min(this.requestTimeout.toNanos(), remaining);
			first = false;
			HttpRequest request = requestTo(path, Duration.ofNanos(Math.max(attemptNanos, 1_000_000)))
				.header("Accept", OCTET_STREAM)
				.GET()
				.build();
			try {
				HttpResponse<CappedBody> response = send(request, attemptNanos, cap);
				int status = response.statusCode();
				if (status == 200) {
					if (response.body().oversize()) {
						throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, agentName,
								"the exchange answered with a value over the limit of " + cap + " bytes");
					}
					return response.body().bytes();
				}
				if (status == 401 || status == 403) {
					throw tokenRefused(operation, agentName, status);
				}
				lastCause = (status == 404) ? "not published" : "the exchange answered HTTP " + status;
				lastFailure = null;
				answered = true;
			}
			catch (IOException ex) {
				// an attempt that the caller's deadline cut short says nothing about the
				// exchange: the last answer it gave stands
				boolean cutShort = attemptNanos < this.requestTimeout.toNanos() && timedOut(ex);
				if (!(cutShort && answered)) {
					lastCause = describe(ex);
					lastFailure = ex;
				}
			}
			catch (InterruptedException ex) {
				throw interrupted(operation, agentName);
			}
			logger.log(System.Logger.Level.DEBUG, () -> "The " + what + " is not fetched yet, retrying");
			long pause = Math.min(backoff, deadline - System.nanoTime());
			backoff = Math.min(backoff * 2, this.maxRetryInterval.toNanos());
			if (pause > 0) {
				try {
					if (this.closing.await(pause, TimeUnit.NANOSECONDS)) {
						requireUsable(operation, agentName);
					}
				}
				catch (InterruptedException ex) {
					throw interrupted(operation, agentName);
				}
			}
		}
	}

	/**
	 * Fails a call with an empty agent name, or one made once the exchange is closing.
	 */
	void requireUsable(String operation, String agentName) {
		if (agentName.isEmpty()) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, null, "the agent name is empty");
		}
		if (isClosing()) {
			throw new NixlException(NixlStatus.CLOSED, operation, null, agentName, "the exchange is closed");
		}
	}

	boolean isClosing() {
		return this.closing.getCount() == 0;
	}

	/**
	 * Marks the exchange closing, which wakes the fetches waiting for a retry.
	 * @return {@code false} when it was closing already
	 */
	synchronized boolean beginClose() {
		if (isClosing()) {
			return false;
		}
		this.closing.countDown();
		return true;
	}

	/** Stops the HTTP client, waiting at most a request timeout and a second. */
	void shutdown() throws InterruptedException {
		this.client.shutdownNow();
		this.client.awaitTermination(this.requestTimeout.plusSeconds(1));
	}

	NixlException tokenRefused(String operation, String agentName, int status) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, agentName,
				"the exchange at " + this.baseUri + " refused the bearer token (HTTP " + status
						+ "); configure the token the server expects");
	}

	NixlException notOwner(String operation, String agentName, HttpResponse<CappedBody> response) {
		return new NixlException(NixlStatus.BUSY, operation, null, agentName,
				"the exchange at " + this.baseUri + " refused the change to the entry of agent '" + agentName
						+ "' (HTTP 403: " + reason(response) + "); a name another owner holds comes back when its entry"
						+ " expires, or at once to the client token whose prefixes cover it");
	}

	NixlException overQuota(String operation, String agentName, HttpResponse<CappedBody> response) {
		return new NixlException(
				NixlStatus.UNAVAILABLE, operation, null, agentName, "the exchange at " + this.baseUri
						+ " refused the entry: this client's quota is used up (HTTP 429: " + reason(response) + ")",
				null, true);
	}

	NixlException unexpected(String operation, String agentName, int status) {
		return new NixlException(NixlStatus.UNAVAILABLE, operation, null, agentName,
				"the exchange at " + this.baseUri + " answered HTTP " + status, null, status >= 500);
	}

	/** The plain-text reason of a refusal, for messages; never a metadata body. */
	static String reason(HttpResponse<CappedBody> response) {
		CappedBody body = response.body();
		if (body.oversize() || body.bytes().length == 0) {
			return "no reason given";
		}
		String text = new String(body.bytes(), StandardCharsets.UTF_8);
		StringBuilder printable = new StringBuilder(Math.min(text.length(), 300));
		for (int i = 0; i < text.length() && printable.length() < 300; i++) {
			char c = text.charAt(i);
			printable.append((c >= 0x20 && c < 0x7F) ? c : '?');
		}
		return printable.toString();
	}

	static NixlException interrupted(String operation, String agentName) {
		Thread.currentThread().interrupt();
		return new NixlException(NixlStatus.CANCELLED, operation, null, agentName, "interrupted");
	}

	private static boolean timedOut(IOException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof HttpTimeoutException) {
				return true;
			}
		}
		return false;
	}

	static String describe(IOException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof HttpConnectTimeoutException) {
				return "connection timed out";
			}
			if (cause instanceof ConnectException) {
				return "connection refused";
			}
			if (cause instanceof HttpTimeoutException) {
				return "no response in time";
			}
			if (cause instanceof SSLHandshakeException) {
				return "the TLS handshake failed: " + cause.getMessage() + " (check that the client trusts the "
						+ "server's certificate and that the certificate names the host)";
			}
		}
		return "I/O failure (" + ex.getClass().getSimpleName() + ")";
	}

	/**
	 * Whether a failure to reach the exchange may pass by itself: a server not listening
	 * yet, a timeout, a connection cut. A TLS failure does not: the trust or the
	 * certificate must change.
	 */
	private static boolean passes(IOException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof SSLException) {
				return false;
			}
		}
		return true;
	}

	private static long saturatedNanos(Duration timeout) {
		if (timeout.isNegative()) {
			return 0;
		}
		try {
			return timeout.toNanos();
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE / 2;
		}
	}

	@Override
	public String toString() {
		return "RegistryClient[" + this.baseUri + "]";
	}

}
