package dev.nixl4j.metadata;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * The request handling of a metadata registry, apart from any HTTP server: {@code GET},
 * {@code PUT} and {@code DELETE} of {@code {base}/agents/{name}/metadata} (the layout
 * {@link HttpMetadataExchange} talks to), answered from a backing {@link MetadataExchange}.
 * {@link MetadataHttpServer} and the Spring Boot starter's servlet both delegate to it, so the
 * rules below hold for every transport:
 * <ul>
 * <li>every request needs {@code Authorization: Bearer <token>}; the token is compared in
 * constant time through its SHA-256 digest; without it, or with another token, the answer is 401
 * with {@code WWW-Authenticate: Bearer} and no body;</li>
 * <li>a path that is not an agent's metadata gets 404, and so does a {@code GET} of an agent with
 * no metadata published;</li>
 * <li>a {@code PUT} body over the cap gets 413 (it is read no further than the cap), and one that
 * is not NIXL metadata of the agent in the path gets 400
 * ({@link MetadataValues#check}); nothing is stored then;</li>
 * <li>{@code DELETE} withdraws the agent's metadata (204, also when none was published);</li>
 * <li>other methods get 405 with {@code Allow: GET, PUT, DELETE};</li>
 * <li>a failing backing exchange gives 503.</li>
 * </ul>
 *
 * <p>A {@code GET} asks the backing exchange with a zero timeout, so a request never waits for
 * metadata to appear. Bodies and tokens are never logged. Instances are thread-safe.
 */
public final class MetadataRegistryHandler {

	private static final System.Logger logger = System.getLogger(MetadataRegistryHandler.class.getName());

	private static final String OCTET_STREAM = "application/octet-stream";

	private final MetadataExchange store;

	private final String basePath;

	private final byte[] tokenDigest;

	private final int maxBytes;

	private MetadataRegistryHandler(Builder builder, MetadataExchange store, String token) {
		this.store = store;
		this.basePath = builder.basePath;
		this.tokenDigest = sha256(token.getBytes(StandardCharsets.UTF_8));
		this.maxBytes = builder.maxBytes;
	}

	/**
	 * Starts building a handler.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns the base path the handler serves, without a trailing slash ({@code ""} for the root).
	 * @return the base path
	 */
	public String basePath() {
		return this.basePath;
	}

	/**
	 * Returns the largest {@code PUT} body accepted.
	 * @return the cap in bytes
	 */
	public int maxBytes() {
		return this.maxBytes;
	}

	/**
	 * Handles one request. The body is read only for an authorized {@code PUT} to an agent's
	 * metadata, and then no further than the cap plus one byte; the caller closes it.
	 * @param method the request method, for example {@code GET}
	 * @param rawPath the request path as sent, still percent-encoded and without a query, for
	 * example {@code /nixl/agents/prefill-0/metadata}
	 * @param authorization the value of the {@code Authorization} header, or {@code null} when
	 * there was none
	 * @param contentLength the declared length of the body, or {@code -1} when unknown
	 * @param body the request body
	 * @return the response to send
	 * @throws IOException when reading the body fails
	 */
	public Response handle(String method, String rawPath, @Nullable String authorization, long contentLength,
			InputStream body) throws IOException {
		try {
			if (!authorized(authorization)) {
				logger.log(System.Logger.Level.DEBUG, "Refused a request without a valid bearer token");
				return Response.of(401, Map.of("WWW-Authenticate", "Bearer realm=\"nixl4j\""), null);
			}
			String agentName = agentName(rawPath);
			if (agentName == null) {
				return Response.of(404, Map.of(), null);
			}
			return switch (method) {
				case "GET" -> get(agentName);
				case "PUT" -> put(agentName, contentLength, body);
				case "DELETE" -> {
					this.store.invalidate(agentName);
					yield Response.of(204, Map.of(), null);
				}
				default -> Response.of(405, Map.of("Allow", "GET, PUT, DELETE"), null);
			};
		}
		catch (NixlException ex) {
			logger.log(System.Logger.Level.WARNING, "The metadata store failed: " + ex.status());
			return Response.of(503, Map.of(), null);
		}
	}

	private Response get(String agentName) {
		AgentMetadata metadata;
		try {
			metadata = this.store.fetch(agentName, Duration.ZERO);
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT) {
				return Response.of(404, Map.of(), null);
			}
			throw ex;
		}
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("Content-Type", OCTET_STREAM);
		headers.put("Cache-Control", "no-store");
		return Response.of(200, headers, metadata.toByteArray());
	}

	private Response put(String agentName, long contentLength, InputStream in) throws IOException {
		if (contentLength > this.maxBytes) {
			return Response.of(413, Map.of(), null);
		}
		byte[] body = in.readNBytes(this.maxBytes + 1);
		if (body.length > this.maxBytes) {
			return Response.of(413, Map.of(), null);
		}
		AgentMetadata metadata;
		try {
			metadata = MetadataValues.check("send_local_md", agentName, body, this.maxBytes);
		}
		catch (NixlException ex) {
			return Response.of(400, Map.of(), null);
		}
		this.store.publish(agentName, metadata);
		return Response.of(204, Map.of(), null);
	}

	private boolean authorized(@Nullable String header) {
		if (header == null || header.length() < 7 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
			return false;
		}
		byte[] presented = sha256(header.substring(7).trim().getBytes(StandardCharsets.UTF_8));
		return MessageDigest.isEqual(this.tokenDigest, presented);
	}

	private @Nullable String agentName(String rawPath) {
		String prefix = this.basePath + AgentPaths.AGENTS;
		if (!rawPath.startsWith(prefix) || !rawPath.endsWith(AgentPaths.METADATA)
				|| rawPath.length() <= prefix.length() + AgentPaths.METADATA.length()) {
			return null;
		}
		return AgentPaths.decode(rawPath.substring(prefix.length(), rawPath.length() - AgentPaths.METADATA.length()));
	}

	private static byte[] sha256(byte[] bytes) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(bytes);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

	@Override
	public String toString() {
		return "MetadataRegistryHandler[basePath=" + this.basePath + ", store=" + this.store + "]";
	}

	/**
	 * The answer to one request: a status, headers to set, and a body (empty when there is none).
	 */
	public static final class Response {

		private static final byte[] EMPTY = new byte[0];

		private final int status;

		private final Map<String, String> headers;

		private final byte[] body;

		private Response(int status, Map<String, String> headers, byte[] body) {
			this.status = status;
			this.headers = headers;
			this.body = body;
		}

		private static Response of(int status, Map<String, String> headers, byte @Nullable [] body) {
			return new Response(status, Collections.unmodifiableMap(headers), (body != null) ? body : EMPTY);
		}

		/**
		 * Returns the HTTP status.
		 * @return the status, for example 200 or 401
		 */
		public int status() {
			return this.status;
		}

		/**
		 * Returns the headers to set, beside the body's length.
		 * @return header names and values, in order
		 */
		public Map<String, String> headers() {
			return this.headers;
		}

		/**
		 * Returns the body. For a 200 it is the agent's metadata, a secret: send it, never log it.
		 * The array belongs to this response and is not copied.
		 * @return the bytes; empty when the response has no body
		 */
		public byte[] body() {
			return this.body;
		}

		@Override
		public String toString() {
			return "Response[status=" + this.status + ", " + this.body.length + " bytes]";
		}

	}

	/** Trims a base path and checks that a non-root one starts with {@code /}. */
	static String checkBasePath(String basePath) {
		String trimmed = AgentPaths.trimBase(basePath);
		if (!trimmed.isEmpty() && !trimmed.startsWith("/")) {
			throw new IllegalArgumentException("the base path must start with '/', was " + basePath);
		}
		return trimmed;
	}

	/** Checks a body cap: positive and below {@link Integer#MAX_VALUE}. */
	static int checkMaxBytes(int maxBytes) {
		if (maxBytes <= 0 || maxBytes == Integer.MAX_VALUE) {
			throw new IllegalArgumentException("maxBytes must be positive and below Integer.MAX_VALUE, was " + maxBytes);
		}
		return maxBytes;
	}

	/**
	 * Builds a {@link MetadataRegistryHandler}.
	 */
	public static final class Builder {

		private @Nullable String token;

		private String basePath = "/nixl";

		private @Nullable MetadataExchange store;

		private int maxBytes = MetadataValues.DEFAULT_MAX_BYTES;

		private Builder() {
		}

		/**
		 * Sets the bearer token clients must present (required).
		 * @param token the token
		 * @return this builder
		 */
		public Builder token(String token) {
			this.token = token;
			return this;
		}

		/**
		 * Sets the base path (default {@code /nixl}).
		 * @param basePath the path; {@code ""} or {@code "/"} serves from the root
		 * @return this builder
		 * @throws IllegalArgumentException when a non-root path does not start with {@code /}
		 */
		public Builder basePath(String basePath) {
			this.basePath = checkBasePath(basePath);
			return this;
		}

		/**
		 * Sets the exchange whose metadata is served (required); the handler never closes it.
		 * @param store the backing exchange
		 * @return this builder
		 */
		public Builder store(MetadataExchange store) {
			this.store = store;
			return this;
		}

		/**
		 * Sets the largest body accepted by {@code PUT} (default
		 * {@link MetadataValues#DEFAULT_MAX_BYTES}).
		 * @param maxBytes the cap
		 * @return this builder
		 * @throws IllegalArgumentException when not positive or {@link Integer#MAX_VALUE}
		 */
		public Builder maxBytes(int maxBytes) {
			this.maxBytes = checkMaxBytes(maxBytes);
			return this;
		}

		/**
		 * Builds the handler.
		 * @return the handler
		 * @throws IllegalArgumentException when no store, no token or a blank token was set
		 */
		public MetadataRegistryHandler build() {
			MetadataExchange store = this.store;
			if (store == null) {
				throw new IllegalArgumentException("the metadata registry needs a store: set store(...)");
			}
			String token = this.token;
			if (token == null || token.isBlank()) {
				throw new IllegalArgumentException(
						"the metadata registry needs a bearer token: set token(...); a blank token is refused");
			}
			return new MetadataRegistryHandler(this, store, token.trim());
		}

	}

}
