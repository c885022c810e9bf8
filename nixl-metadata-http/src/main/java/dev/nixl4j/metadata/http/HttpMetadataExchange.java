package dev.nixl4j.metadata.http;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.SettingChecks;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataValues;
import dev.nixl4j.metadata.http.OwnerSecrets.Ownership;
import org.jspecify.annotations.Nullable;

/**
 * A {@link MetadataExchange} that talks to a metadata registry over HTTP with the JDK's
 * {@link HttpClient}: {@link MetadataHttpServer} and the Spring Boot starter serve it.
 * The protocol (paths, methods, the bearer token, owner secrets in
 * {@value MetadataRegistryHandler#OWNER_SECRET_HEADER}, the entry TTL and its renewals,
 * status codes and what each failure means, watches by polling) is described in
 * docs/architecture.md, "The HTTP metadata registry".
 *
 * <p>
 * {@link #fetch} retries while the metadata is not published or the registry cannot be
 * reached, until the deadline; a failure says by {@link NixlException#retryable()}
 * whether it may pass by itself. The exchange keeps the owner secrets of the entries it
 * published in memory and renews those entries on the one daemon thread it shares with
 * its watches. An {@code https} base URI uses the JDK's default TLS context unless
 * {@link Builder#sslContext(SSLContext)} names another; the server's certificate and host
 * name are always verified. The token and owner secrets are never logged or shown, and
 * neither is metadata.
 */
public final class HttpMetadataExchange implements MetadataExchange {

	/**
	 * Says what is wrong with a bearer token, without repeating it: a token travels in an
	 * HTTP header, so it holds visible ASCII characters only.
	 * @param token the token
	 * @return the problem, or {@code null} when it is well formed
	 */
	public static @Nullable String tokenProblem(String token) {
		for (int i = 0; i < token.length(); i++) {
			char c = token.charAt(i);
			if (c <= ' ' || c > '~') {
				return "must hold visible ASCII characters only, without spaces (character " + (i + 1) + " is not)";
			}
		}
		return null;
	}

	/** The default {@linkplain Builder#requestTimeout(Duration) request timeout}. */
	public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(5);

	/**
	 * The default {@linkplain Builder#pollInterval(Duration) poll interval} of watches.
	 */
	public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);

	/**
	 * The default {@linkplain Builder#maxRetryInterval(Duration) longest pause} between
	 * two attempts of a fetch.
	 */
	public static final Duration DEFAULT_MAX_RETRY_INTERVAL = Duration.ofSeconds(1);

	private final RegistryClient client;

	private final OwnerSecrets secrets = new OwnerSecrets();

	private final ExchangeThread thread = new ExchangeThread();

	private final EntryRenewal renewal;

	private final RegistryWatches watches;

	private HttpMetadataExchange(Builder builder, String token) {
		this.client = new RegistryClient(builder, token);
		this.renewal = new EntryRenewal(this.client, this.secrets, this.thread);
		this.watches = new RegistryWatches(this.client, this.thread, builder.pollInterval);
	}

	/**
	 * Starts building an exchange.
	 * @param baseUri the server's base URI, for example
	 * {@code http://127.0.0.1:8080/nixl}
	 * @return the builder
	 */
	public static Builder builder(URI baseUri) {
		return new Builder(baseUri);
	}

	/**
	 * Returns the server's base URI.
	 * @return the base URI
	 */
	public URI baseUri() {
		return this.client.baseUri();
	}

	/**
	 * Publishes an agent's metadata: creates its entry at the registry, or replaces it
	 * when this exchange created it. Publishing again after the entry expired claims the
	 * name anew.
	 * @param agentName the agent
	 * @param metadata its metadata
	 * @throws NixlException {@link NixlStatus#BUSY} when another owner holds the name,
	 * {@link NixlStatus#UNAVAILABLE} when the registry is full or cannot be reached,
	 * {@link NixlStatus#INVALID_METADATA} when the registry refused the value
	 */
	@Override
	public void publish(String agentName, AgentMetadata metadata) {
		String operation = "send_local_md";
		this.client.requireUsable(operation, agentName);
		synchronized (this.secrets) {
			Ownership ownership = this.secrets.get(agentName);
			HttpRequest.Builder builder = this.client.metadataRequest(agentName)
				.header("Content-Type", RegistryClient.OCTET_STREAM);
			if (ownership != null) {
				builder.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownership.secret);
			}
			HttpRequest request = builder.PUT(HttpRequest.BodyPublishers.ofByteArray(metadata.toByteArray())).build();
			HttpResponse<CappedBody> response = this.client.sendOrUnavailable(operation, agentName, request);
			int status = response.statusCode();
			switch (status) {
				case 200, 201, 204 -> this.renewal.published(agentName, response, ownership);
				case 403 -> throw this.client.notOwner(operation, agentName, response);
				case 507 -> throw new NixlException(NixlStatus.UNAVAILABLE, operation, null, agentName,
						"the exchange at " + baseUri() + " is full (HTTP 507: " + RegistryClient.reason(response) + ")",
						null, true);
				case 429 -> throw this.client.overQuota(operation, agentName, response);
				case 413 -> throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, agentName,
						"the exchange at " + baseUri() + " refused the value as too large (HTTP 413: "
								+ RegistryClient.reason(response) + ")");
				case 400 -> throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, agentName,
						"the exchange at " + baseUri() + " refused the value as not NIXL metadata of agent '"
								+ agentName + "' (HTTP 400)");
				default -> throw this.client.unexpected(operation, agentName, status);
			}
		}
	}

	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		String operation = "fetch_remote_md";
		this.client.requireUsable(operation, agentName);
		int maxBytes = this.client.maxBytes();
		byte[] value = this.client.awaitBody(operation, agentName, this.client.metadataPath(agentName), maxBytes,
				timeout, "metadata of agent '" + agentName + "'");
		return MetadataValues.check(operation, agentName, value, maxBytes);
	}

	/**
	 * Publishes a document beside an agent's metadata: a {@code PUT} of
	 * {@code {base}/agents/{name}/documents/{kind}} with the owner secret of the agent's
	 * entry, which this exchange must have published.
	 * @param agentName the agent
	 * @param kind the document's kind
	 * @param document its bytes
	 * @throws NixlException {@link NixlStatus#ERROR_INVALID_PARAM} for a bad kind or an
	 * oversize document, {@link NixlStatus#ERROR_INVALID_STATE} when the registry holds
	 * no metadata entry of the agent (HTTP 409), {@link NixlStatus#BUSY} when the entry
	 * belongs to another owner, {@link NixlStatus#UNAVAILABLE} when the registry is full
	 * or cannot be reached
	 */
	@Override
	public void publishDocument(String agentName, String kind, byte[] document) {
		String operation = "publish_document";
		this.client.requireUsable(operation, agentName);
		MetadataExchange.requireDocumentKind(kind);
		if (document.length > MAX_DOCUMENT_BYTES) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, agentName, null, "the document '" + kind
					+ "' is " + document.length + " bytes, over the limit of " + MAX_DOCUMENT_BYTES + " bytes");
		}
		synchronized (this.secrets) {
			Ownership ownership = this.secrets.get(agentName);
			HttpRequest.Builder builder = this.client
				.requestTo(this.client.documentPath(agentName, kind), this.client.requestTimeout())
				.header("Content-Type", RegistryClient.OCTET_STREAM);
			if (ownership != null) {
				builder.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownership.secret);
			}
			HttpRequest request = builder.PUT(HttpRequest.BodyPublishers.ofByteArray(document)).build();
			HttpResponse<CappedBody> response = this.client.sendOrUnavailable(operation, agentName, request);
			int status = response.statusCode();
			switch (status) {
				case 200, 201, 204 -> {
				}
				case 403 -> throw this.client.notOwner(operation, agentName, response);
				case 409 -> throw new NixlException(NixlStatus.ERROR_INVALID_STATE, operation, agentName, null,
						"the exchange at " + baseUri() + " holds no metadata entry of agent '" + agentName
								+ "' (HTTP 409: " + RegistryClient.reason(response)
								+ "); publish the metadata before its documents");
				case 507 -> throw new NixlException(NixlStatus.UNAVAILABLE, operation, agentName, null,
						"the exchange at " + baseUri() + " is full (HTTP 507: " + RegistryClient.reason(response) + ")",
						null, true);
				case 429 -> throw this.client.overQuota(operation, agentName, response);
				case 413,
						400 ->
					throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, agentName, null,
							"the exchange at " + baseUri() + " refused the document '" + kind + "' (HTTP " + status
									+ ": " + RegistryClient.reason(response) + ")");
				default -> throw this.client.unexpected(operation, agentName, status);
			}
		}
	}

	/**
	 * Fetches a peer's document, retrying while it is not published (404) or the registry
	 * cannot be reached, as {@link #fetch} does.
	 * @param agentName the peer
	 * @param kind the document's kind
	 * @param timeout how long to wait
	 * @return the bytes
	 */
	@Override
	public byte[] fetchDocument(String agentName, String kind, Duration timeout) {
		String operation = "fetch_document";
		this.client.requireUsable(operation, agentName);
		MetadataExchange.requireDocumentKind(kind);
		return this.client.awaitBody(operation, agentName, this.client.documentPath(agentName, kind),
				MAX_DOCUMENT_BYTES, timeout, "document '" + kind + "' of agent '" + agentName + "'");
	}

	/**
	 * Withdraws an agent's metadata: deletes its entry with the owner secret this
	 * exchange holds, and stops renewing it. It stops also when the deletion fails, so
	 * the entry then expires at the registry; the secret is kept for another try.
	 * @param agentName the agent
	 * @throws NixlException {@link NixlStatus#BUSY} when the entry belongs to another
	 * owner, {@link NixlStatus#UNAVAILABLE} when the registry cannot be reached
	 */
	@Override
	public void invalidate(String agentName) {
		String operation = "invalidate_local_md";
		this.client.requireUsable(operation, agentName);
		synchronized (this.secrets) {
			Ownership ownership = this.secrets.get(agentName);
			HttpRequest.Builder builder = this.client.metadataRequest(agentName);
			if (ownership != null) {
				ownership.withdrawn = true;
				builder.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownership.secret);
			}
			HttpResponse<CappedBody> response = this.client.sendOrUnavailable(operation, agentName,
					builder.DELETE().build());
			int status = response.statusCode();
			if (status == 403) {
				throw this.client.notOwner(operation, agentName, response);
			}
			if (status != 200 && status != 204 && status != 404) {
				throw this.client.unexpected(operation, agentName, status);
			}
			this.secrets.remove(agentName);
		}
	}

	/**
	 * Watches a peer. The watch asks the server once right away, so metadata published
	 * now counts as seen and its withdrawal is reported even if it comes before the first
	 * poll.
	 * @param agentName the peer
	 * @param onRemoved called with the peer's name, on the exchange's watch thread
	 * @return the watch
	 */
	@Override
	public Watch watch(String agentName, Consumer<String> onRemoved) {
		this.client.requireUsable("watch", agentName);
		return this.watches.add(agentName, onRemoved, this.watches.probe(agentName) == 200);
	}

	/**
	 * Fetches a peer's metadata, loads it into an agent and watches the peer; the watch
	 * counts the fetched metadata as seen, so a withdrawal right after the fetch is not
	 * missed.
	 * @param agent the local agent
	 * @param remoteAgent the peer
	 * @param timeout how long to wait for the peer's metadata
	 * @return the watch
	 */
	@Override
	public Watch load(NixlAgent agent, String remoteAgent, Duration timeout) {
		agent.loadRemoteMetadata(fetch(remoteAgent, timeout));
		return this.watches.add(remoteAgent, gone -> {
			if (agent.isOpen() && agent.remoteAgents().contains(gone)) {
				agent.invalidateRemoteMetadata(gone);
			}
		}, true);
	}

	/**
	 * Returns how many times the watch thread's work for one watched peer, or a watcher's
	 * {@code onRemoved}, threw and the thread went on. Each was logged once, with the
	 * peer's name.
	 * @return the count
	 */
	public long internalErrors() {
		return this.watches.internalErrors();
	}

	/**
	 * Closes the exchange: stops the watches (without telling them), the renewals and the
	 * HTTP client. Fetches waiting for a retry fail with {@link NixlStatus#CLOSED}.
	 * Published metadata stays on the server until it expires there, no longer renewed.
	 */
	@Override
	public void close() {
		if (!this.client.beginClose()) {
			return;
		}
		this.watches.clear();
		try {
			this.thread.stop(this.client.requestTimeout().plusSeconds(1));
			this.client.shutdown();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public String toString() {
		return "HttpMetadataExchange[" + baseUri() + "]";
	}

	/**
	 * Builds an {@link HttpMetadataExchange}.
	 */
	public static final class Builder {

		// read by the exchange's parts when they are built

		final URI baseUri;

		private @Nullable String token;

		Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;

		Duration pollInterval = DEFAULT_POLL_INTERVAL;

		Duration maxRetryInterval = DEFAULT_MAX_RETRY_INTERVAL;

		int maxBytes = MetadataValues.DEFAULT_MAX_BYTES;

		@Nullable SSLContext sslContext;

		@Nullable SSLParameters sslParameters;

		private Builder(URI baseUri) {
			String scheme = baseUri.getScheme();
			if (!"http".equalsIgnoreCase(scheme) && !"https".equalsIgnoreCase(scheme)) {
				throw new IllegalArgumentException("the base URI must be http or https, was " + baseUri);
			}
			if (baseUri.getHost() == null || baseUri.getRawQuery() != null || baseUri.getRawFragment() != null
					|| baseUri.getRawUserInfo() != null) {
				throw new IllegalArgumentException(
						"the base URI must name a host and have no user info, query or fragment, was " + baseUri);
			}
			this.baseUri = baseUri;
		}

		/**
		 * Sets the bearer token the server expects (required).
		 * @param token the token
		 * @return this builder
		 */
		public Builder token(String token) {
			this.token = token;
			return this;
		}

		/**
		 * Sets how long one request may take, connection included (default
		 * {@link HttpMetadataExchange#DEFAULT_REQUEST_TIMEOUT}).
		 * @param requestTimeout the timeout
		 * @return this builder
		 */
		public Builder requestTimeout(Duration requestTimeout) {
			this.requestTimeout = SettingChecks.requirePositive(requestTimeout, "requestTimeout");
			return this;
		}

		/**
		 * Sets how often watches poll their peers (default
		 * {@link HttpMetadataExchange#DEFAULT_POLL_INTERVAL}).
		 * @param pollInterval the interval
		 * @return this builder
		 */
		public Builder pollInterval(Duration pollInterval) {
			this.pollInterval = SettingChecks.requirePositive(pollInterval, "pollInterval");
			return this;
		}

		/**
		 * Sets the longest pause between two attempts of a fetch (default
		 * {@link HttpMetadataExchange#DEFAULT_MAX_RETRY_INTERVAL}).
		 * @param maxRetryInterval the pause
		 * @return this builder
		 */
		public Builder maxRetryInterval(Duration maxRetryInterval) {
			this.maxRetryInterval = SettingChecks.requirePositive(maxRetryInterval, "maxRetryInterval");
			return this;
		}

		/**
		 * Sets the largest metadata value read from the server (default
		 * {@link MetadataValues#DEFAULT_MAX_BYTES}).
		 * @param maxBytes the cap
		 * @return this builder
		 */
		public Builder maxBytes(int maxBytes) {
			if (maxBytes <= 0) {
				throw new IllegalArgumentException("maxBytes must be positive, was " + maxBytes);
			}
			this.maxBytes = maxBytes;
			return this;
		}

		/**
		 * Sets the TLS context of an {@code https} base URI: its trust material decides
		 * which server certificates are accepted, its key material (if any) is the
		 * client's certificate. Without it the JDK's default context applies. The
		 * server's host name is always verified.
		 * @param sslContext the context
		 * @return this builder
		 */
		public Builder sslContext(SSLContext sslContext) {
			this.sslContext = sslContext;
			return this;
		}

		/**
		 * Sets the TLS parameters of an {@code https} base URI, for example the enabled
		 * protocols and cipher suites. Without it the client's defaults apply.
		 * @param sslParameters the parameters
		 * @return this builder
		 */
		public Builder sslParameters(SSLParameters sslParameters) {
			this.sslParameters = sslParameters;
			return this;
		}

		/**
		 * Builds the exchange.
		 * @return the exchange
		 * @throws IllegalArgumentException when no token, or a blank one, was set
		 */
		public HttpMetadataExchange build() {
			String token = this.token;
			if (token == null || token.isBlank()) {
				throw new IllegalArgumentException("the metadata exchange needs a bearer token: set token(...) to the "
						+ "token the server at " + this.baseUri + " expects; a blank token is refused");
			}
			String problem = tokenProblem(token);
			if (problem != null) {
				throw new IllegalArgumentException("the bearer token " + problem);
			}
			return new HttpMetadataExchange(this, token);
		}

	}

}
