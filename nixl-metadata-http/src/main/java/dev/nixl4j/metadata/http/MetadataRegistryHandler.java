package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.nixl4j.NixlException;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataValues;
import org.jspecify.annotations.Nullable;

/**
 * The request handling of a metadata registry, apart from any HTTP server: {@code GET},
 * {@code PUT}, {@code POST} and {@code DELETE} of {@code {base}/agents/{name}/metadata}
 * and of {@code {base}/agents/{name}/documents/{kind}} (the layout
 * {@link HttpMetadataExchange} talks to), answered from a backing
 * {@link MetadataExchange}. {@link MetadataHttpServer} and the Spring Boot starter's
 * servlet both delegate to it, so its rules hold for every transport: bearer tokens
 * (shared, or a client's own with agent-name prefixes; each with a quota that counts the
 * room its uploads in progress reserved), an owner secret per entry
 * ({@value #OWNER_SECRET_HEADER}; a client's token reclaims the entries of its names
 * without it), an entry TTL ({@value #ENTRY_TTL_HEADER}), bounds on entries and bytes,
 * and the status code of every answer. A server admits a request with {@link #begin},
 * reads an admitted body under its own deadlines, and completes the call with it. They
 * are described in docs/architecture.md, "The HTTP metadata registry"; docs/operations.md
 * says what each party can do with them.
 *
 * <p>
 * The handler authenticates and routes; {@link RegistryEntries} keeps the entries, their
 * owners, bounds and expiry, and {@link RegistryDocuments} the entries' documents. A
 * {@code GET} asks the backing exchange with a zero timeout, so a request never waits for
 * metadata to appear. The handler has no thread of its own: a server calls
 * {@link #expireDue()} every {@link #sweepInterval()}. Bodies, tokens and owner secrets
 * are never logged. Instances are thread-safe.
 */
public final class MetadataRegistryHandler {

	private static final System.Logger logger = System.getLogger(MetadataRegistryHandler.class.getName());

	/**
	 * The header that carries an entry's owner secret, in the answer to its creation and
	 * in the owner's requests.
	 */
	public static final String OWNER_SECRET_HEADER = "Nixl-Owner-Secret";

	/**
	 * The header of a {@code PUT} or {@code POST} answer that gives the entry TTL in
	 * milliseconds.
	 */
	public static final String ENTRY_TTL_HEADER = "Nixl-Entry-Ttl-Ms";

	/** The default path the registry is served under. */
	public static final String DEFAULT_BASE_PATH = "/nixl";

	/** The default cap on the number of entries created over HTTP. */
	public static final int DEFAULT_MAX_ENTRIES = 1024;

	/** The default cap on the bytes of metadata of entries created over HTTP: 256 MiB. */
	public static final long DEFAULT_MAX_TOTAL_BYTES = 256L << 20;

	/** The default cap on the number of entries one client may hold. */
	public static final int DEFAULT_CLIENT_MAX_ENTRIES = 64;

	/** The default cap on the bytes one client's entries may hold: 16 MiB. */
	public static final long DEFAULT_CLIENT_MAX_TOTAL_BYTES = 16L << 20;

	/** The most documents one entry may carry. */
	public static final int MAX_DOCUMENTS_PER_ENTRY = 16;

	/** The default time an entry lives after its owner last renewed it. */
	public static final Duration DEFAULT_ENTRY_TTL = Duration.ofSeconds(30);

	private final String basePath;

	private final @Nullable ClientGrant shared;

	private final List<ClientGrant> clients;

	private final int maxBytes;

	private final int maxEntries;

	private final long maxTotalBytes;

	private final Duration entryTtl;

	private final RegistryEntries entries;

	private final RegistryDocuments documents;

	private MetadataRegistryHandler(Builder builder, MetadataExchange store, @Nullable String token) {
		this.basePath = builder.basePath;
		this.clients = List.copyOf(builder.clients.values());
		this.shared = (token != null)
				? ClientGrant.shared(BearerToken.of(token), builder.sharedMaxEntries(), builder.sharedMaxTotalBytes())
				: null;
		this.maxBytes = builder.maxBytes;
		this.maxEntries = builder.maxEntries;
		this.maxTotalBytes = builder.maxTotalBytes;
		this.entryTtl = builder.entryTtl;
		this.entries = new RegistryEntries(store, builder.maxBytes, builder.maxEntries, builder.maxTotalBytes,
				builder.entryTtl);
		this.documents = new RegistryDocuments(this.entries);
	}

	/**
	 * Starts building a handler.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns the base path the handler serves, without a trailing slash ({@code ""} for
	 * the root).
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
	 * Returns the cap on the number of entries created over HTTP.
	 * @return the cap
	 */
	public int maxEntries() {
		return this.maxEntries;
	}

	/**
	 * Returns the cap on the bytes of metadata of entries created over HTTP.
	 * @return the cap in bytes
	 */
	public long maxTotalBytes() {
		return this.maxTotalBytes;
	}

	/**
	 * Returns how long an entry lives after its owner last renewed it.
	 * @return the TTL
	 */
	public Duration entryTtl() {
		return this.entryTtl;
	}

	/**
	 * Returns how many entries created over HTTP the registry holds now (at most
	 * {@link #maxEntries()}); entries past their TTL count until the next sweep.
	 * @return the number of entries
	 */
	public int entries() {
		return this.entries.size();
	}

	/**
	 * Returns how many bytes of metadata and documents the entries created over HTTP hold
	 * now (at most {@link #maxTotalBytes()}).
	 * @return the bytes held
	 */
	public long entryBytes() {
		return this.entries.storedBytes();
	}

	/**
	 * Handles one request without an owner secret: reads, creations of free names and
	 * deletions of free names succeed; changes of an existing entry get 403.
	 * @param method the request method, for example {@code GET}
	 * @param rawPath the request path as sent, still percent-encoded and without a query
	 * @param authorization the value of the {@code Authorization} header, or {@code null}
	 * @param contentLength the declared length of the body, or {@code -1} when unknown
	 * @param body the request body
	 * @return the response to send
	 * @throws IOException when reading the body fails
	 * @see #handle(String, String, String, String, long, InputStream)
	 */
	public Response handle(String method, String rawPath, @Nullable String authorization, long contentLength,
			InputStream body) throws IOException {
		return handle(method, rawPath, authorization, null, contentLength, body);
	}

	/**
	 * Handles one request, reading its body from a stream. The body is read only for an
	 * authorized {@code PUT} that may go ahead (the name is free or the secret is the
	 * owner's, and the registry and the caller's quota have room), and then no further
	 * than the room it was given plus one byte; the caller closes it. A server that
	 * bounds the body's read in time uses {@link #begin} instead.
	 * @param method the request method, for example {@code GET}
	 * @param rawPath the request path as sent, still percent-encoded and without a query,
	 * for example {@code /nixl/agents/prefill-0/metadata}
	 * @param authorization the value of the {@code Authorization} header, or {@code null}
	 * when there was none
	 * @param ownerSecret the value of the {@value #OWNER_SECRET_HEADER} header, or
	 * {@code null} when there was none
	 * @param contentLength the declared length of the body, or {@code -1} when unknown
	 * @param body the request body
	 * @return the response to send; a 201 carries the new owner secret, a secret: hand it
	 * to the client, never log it
	 * @throws IOException when reading the body fails
	 */
	public Response handle(String method, String rawPath, @Nullable String authorization, @Nullable String ownerSecret,
			long contentLength, InputStream body) throws IOException {
		try (Call call = begin(method, rawPath, authorization, ownerSecret, contentLength)) {
			Response answer = call.response();
			if (answer != null) {
				return answer;
			}
			return call.complete(body.readNBytes(call.maxBodyBytes() + 1));
		}
	}

	/**
	 * Starts handling one request, before its body is read: the answer at once for every
	 * request but an admitted {@code PUT}, whose room (its declared length, or what is
	 * left to it when the length is unknown) is then reserved against the registry's
	 * bounds and the caller's quota until the call is {@linkplain Call#complete
	 * completed} or {@linkplain Call#close() closed}. A declared length over what the
	 * caller may still hold is refused here (413 past its whole quota, 429 past what is
	 * left of it), without reading the body. The server reads the body under its own
	 * deadlines, no further than {@link Call#maxBodyBytes()} plus one byte, and closes
	 * the call in every case; a body it gives up on (a deadline passed, the client went
	 * away) is dropped by closing the call without completing it.
	 * @param method the request method, for example {@code GET}
	 * @param rawPath the request path as sent, still percent-encoded and without a query
	 * @param authorization the value of the {@code Authorization} header, or {@code null}
	 * @param ownerSecret the value of the {@value #OWNER_SECRET_HEADER} header, or
	 * {@code null}
	 * @param contentLength the declared length of the body, or {@code -1} when unknown
	 * @return the call
	 */
	public Call begin(String method, String rawPath, @Nullable String authorization, @Nullable String ownerSecret,
			long contentLength) {
		try {
			ClientGrant caller = caller(authorization);
			if (caller == null) {
				logger.log(System.Logger.Level.DEBUG, "Refused a request without a valid bearer token");
				return Call.answered(Response.of(401, Map.of("WWW-Authenticate", "Bearer realm=\"nixl4j\""), null));
			}
			Target target = target(rawPath);
			if (target == null) {
				return Call.answered(Response.of(404, Map.of(), null));
			}
			String agentName = target.agentName();
			byte @Nullable [] secretDigest = (ownerSecret != null && !ownerSecret.isBlank())
					? BearerToken.sha256(ownerSecret.trim().getBytes(StandardCharsets.UTF_8)) : null;
			if (!method.equals("GET") && !caller.permits(agentName)) {
				return Call
					.answered(RegistryAnswers.text(403, "client '" + caller.id + "' may not change the entry of agent '"
							+ agentName + "': its agent names start with one of " + caller.agentNamePrefixes));
			}
			String kind = target.kind();
			if (kind != null) {
				String problem = RegistryDocuments.kindProblem(kind);
				if (problem != null) {
					return Call.answered(RegistryAnswers.text(400, problem));
				}
				return switch (method) {
					case "GET" -> Call.answered(this.documents.get(agentName, kind));
					case "PUT" -> Call.of(this.documents.beginPut(agentName, kind, secretDigest, contentLength));
					case "DELETE" -> Call.answered(this.documents.delete(agentName, kind, secretDigest));
					default -> Call.answered(Response.of(405, Map.of("Allow", "GET, PUT, DELETE"), null));
				};
			}
			return switch (method) {
				case "GET" -> Call.answered(this.entries.get(agentName));
				case "PUT" -> Call.of(this.entries.beginPut(agentName, caller, secretDigest, contentLength));
				case "POST" -> Call.answered(this.entries.renew(agentName, secretDigest));
				case "DELETE" -> Call.answered(this.entries.delete(agentName, secretDigest));
				default -> Call.answered(Response.of(405, Map.of("Allow", "GET, PUT, POST, DELETE"), null));
			};
		}
		catch (NixlException ex) {
			return Call.answered(storeFailed(ex));
		}
	}

	static Response storeFailed(NixlException ex) {
		logger.log(System.Logger.Level.WARNING, "The metadata store failed: " + ex.status());
		return Response.of(503, Map.of(), null);
	}

	/** The grant of the token a request carries; {@code null} when it carries none. */
	private @Nullable ClientGrant caller(@Nullable String authorization) {
		byte @Nullable [] presented = BearerToken.presented(authorization);
		if (presented == null) {
			return null;
		}
		ClientGrant found = null;
		// every token is compared, so the time taken does not tell which matched
		ClientGrant shared = this.shared;
		if (shared != null && shared.token.matchesDigest(presented)) {
			found = shared;
		}
		for (ClientGrant client : this.clients) {
			if (client.token.matchesDigest(presented)) {
				found = client;
			}
		}
		return found;
	}

	/**
	 * Withdraws every entry whose owner did not renew it in time, now. Requests do it as
	 * they arrive; a server also calls it every {@link #sweepInterval()}, so that an
	 * entry whose owner died expires (and watchers of the store learn it) within a tenth
	 * of its TTL after its deadline even when no request comes.
	 */
	public void expireDue() {
		this.entries.expireDue();
	}

	/**
	 * Returns how often a server should call {@link #expireDue()}: a tenth of the entry
	 * TTL.
	 * @return the interval
	 */
	public Duration sweepInterval() {
		return this.entries.sweepInterval();
	}

	/**
	 * The entry a path names: {@code {base}/agents/{name}/metadata}, or
	 * {@code {base}/agents/{name}/documents/{kind}}; {@code null} for any other path.
	 */
	private @Nullable Target target(String rawPath) {
		String prefix = this.basePath + AgentPaths.AGENTS;
		if (!rawPath.startsWith(prefix)) {
			return null;
		}
		int slash = rawPath.indexOf('/', prefix.length());
		if (slash < 0) {
			return null;
		}
		String agentName = AgentPaths.decode(rawPath.substring(prefix.length(), slash));
		if (agentName == null) {
			return null;
		}
		String rest = rawPath.substring(slash);
		if (rest.equals(AgentPaths.METADATA)) {
			return new Target(agentName, null);
		}
		if (rest.startsWith(AgentPaths.DOCUMENTS) && rest.length() > AgentPaths.DOCUMENTS.length()
				&& rest.indexOf('/', AgentPaths.DOCUMENTS.length()) < 0) {
			return new Target(agentName, rest.substring(AgentPaths.DOCUMENTS.length()));
		}
		return null;
	}

	/**
	 * What a request is about: an agent's metadata ({@code kind} {@code null}) or one of
	 * its documents.
	 */
	private record Target(String agentName, @Nullable String kind) {
	}

	@Override
	public String toString() {
		return "MetadataRegistryHandler[basePath=" + this.basePath + ", store=" + this.entries.store + "]";
	}

	/**
	 * One request being handled ({@link #begin}): either answered already
	 * ({@link #response()} is not {@code null}), or an admitted {@code PUT} whose body is
	 * to be read, up to {@link #maxBodyBytes()} plus one byte, and handed to
	 * {@link #complete}. Its reserved room is held until it is completed or closed;
	 * closing is always safe and gives it back. Not for use by several threads at once.
	 */
	public static final class Call implements AutoCloseable {

		private final @Nullable Response response;

		private final @Nullable RegistryUpload upload;

		private boolean done;

		private Call(@Nullable Response response, @Nullable RegistryUpload upload) {
			this.response = response;
			this.upload = upload;
		}

		static Call answered(Response response) {
			return new Call(response, null);
		}

		static Call of(Object begun) {
			return (begun instanceof Response response) ? answered(response) : new Call(null, (RegistryUpload) begun);
		}

		/**
		 * Returns the answer, when the request needs no body read.
		 * @return the answer, or {@code null} when the body is to be read and
		 * {@linkplain #complete completed}
		 */
		public @Nullable Response response() {
			return this.response;
		}

		/**
		 * Returns the most bytes the body may have: read at most one more, so that a
		 * longer body is told apart (and refused).
		 * @return the room reserved for the body; 0 when the call is answered already
		 */
		public int maxBodyBytes() {
			RegistryUpload upload = this.upload;
			return (upload != null) ? upload.limit : 0;
		}

		/**
		 * Hands over the body and returns the answer: the body is stored when the
		 * decision taken before it was read still holds (the entry may have changed hands
		 * meanwhile). The reservation is given back.
		 * @param body the body, read up to {@link #maxBodyBytes()} plus one byte
		 * @return the answer to send; a 201 carries the new owner secret, a secret
		 * @throws IllegalStateException when the call was answered already, completed or
		 * closed
		 */
		public Response complete(byte[] body) {
			RegistryUpload upload = this.upload;
			if (upload == null || this.done) {
				throw new IllegalStateException("this call reads no body, or was completed or closed");
			}
			this.done = true;
			try {
				return upload.complete(body);
			}
			catch (NixlException ex) {
				return storeFailed(ex);
			}
			finally {
				upload.release();
			}
		}

		/**
		 * Gives back the room reserved for the body, unless it was completed: a body
		 * given up on is dropped.
		 */
		@Override
		public void close() {
			this.done = true;
			RegistryUpload upload = this.upload;
			if (upload != null) {
				upload.release();
			}
		}

		@Override
		public String toString() {
			return (this.response != null) ? "Call[" + this.response + "]"
					: "Call[a body of at most " + maxBodyBytes() + " bytes]";
		}

	}

	/**
	 * The answer to one request: a status, headers to set, and a body (empty when there
	 * is none).
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

		static Response of(int status, Map<String, String> headers, byte @Nullable [] body) {
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
		 * Returns the body. For a 200 it is the agent's metadata, a secret: send it,
		 * never log it; for a 403 or 507 a plain-text reason. The array belongs to this
		 * response and is not copied.
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

	/**
	 * Builds a {@link MetadataRegistryHandler}.
	 */
	public static final class Builder {

		private @Nullable String token;

		private String basePath = DEFAULT_BASE_PATH;

		private @Nullable MetadataExchange store;

		private int maxBytes = MetadataValues.DEFAULT_MAX_BYTES;

		private int maxEntries = DEFAULT_MAX_ENTRIES;

		private long maxTotalBytes = DEFAULT_MAX_TOTAL_BYTES;

		private Duration entryTtl = DEFAULT_ENTRY_TTL;

		private @Nullable Integer sharedMaxEntries;

		private @Nullable Long sharedMaxTotalBytes;

		private final Map<String, ClientGrant> clients = new LinkedHashMap<>();

		private final List<byte[]> clientTokenDigests = new ArrayList<>();

		private Builder() {
		}

		/**
		 * Sets the shared bearer token: its holders may create, replace and delete the
		 * entry of any free name, all of them together within the shared token's quota
		 * ({@link #sharedTokenQuota}). Required unless {@linkplain #client clients} are
		 * set; with clients it may be left out, so that every caller is held to its names
		 * and quota.
		 * @param token the token
		 * @return this builder
		 */
		public Builder token(String token) {
			this.token = token;
			return this;
		}

		/**
		 * Sets the quota of the shared token: what all its holders together may hold,
		 * uploads in progress included; past it they get 429, so that they cannot take
		 * the room of the clients. By default it is the registry's bounds when no client
		 * is set (the shared token is then the only caller), and a client's default quota
		 * ({@value MetadataRegistryHandler#DEFAULT_CLIENT_MAX_ENTRIES} entries, 16 MiB)
		 * when clients are set.
		 * @param maxEntries the most entries
		 * @param maxTotalBytes the most bytes of metadata and documents
		 * @return this builder
		 * @throws IllegalArgumentException when a bound is not positive
		 */
		public Builder sharedTokenQuota(int maxEntries, long maxTotalBytes) {
			this.sharedMaxEntries = RegistryEntries.checkMaxEntries(maxEntries);
			this.sharedMaxTotalBytes = RegistryEntries.checkMaxTotalBytes(maxTotalBytes);
			return this;
		}

		int sharedMaxEntries() {
			Integer set = this.sharedMaxEntries;
			return (set != null) ? set : (this.clients.isEmpty() ? this.maxEntries : DEFAULT_CLIENT_MAX_ENTRIES);
		}

		long sharedMaxTotalBytes() {
			Long set = this.sharedMaxTotalBytes;
			return (set != null) ? set : (this.clients.isEmpty() ? this.maxTotalBytes : DEFAULT_CLIENT_MAX_TOTAL_BYTES);
		}

		/**
		 * Grants a client its own token, with the default quota
		 * ({@value MetadataRegistryHandler#DEFAULT_CLIENT_MAX_ENTRIES} entries, 16 MiB).
		 * @param clientId the client's name, shown in refusals and logs
		 * @param token the client's bearer token; never shown
		 * @param agentNamePrefixes the prefixes of the agent names it may publish
		 * @return this builder
		 * @throws IllegalArgumentException as
		 * {@link #client(String, String, Collection, int, long)}
		 */
		public Builder client(String clientId, String token, Collection<String> agentNamePrefixes) {
			return client(clientId, token, agentNamePrefixes, DEFAULT_CLIENT_MAX_ENTRIES,
					DEFAULT_CLIENT_MAX_TOTAL_BYTES);
		}

		/**
		 * Grants a client its own token: with it, the client may create, replace, renew
		 * and delete only entries (and their documents) whose agent name starts with one
		 * of its prefixes, and hold at most {@code maxEntries} entries and
		 * {@code maxTotalBytes} bytes of metadata and documents; it reads every entry.
		 * @param clientId the client's name, shown in refusals and logs
		 * @param token the client's bearer token; never shown
		 * @param agentNamePrefixes the prefixes of the agent names it may publish, none
		 * empty
		 * @param maxEntries the most entries it may hold
		 * @param maxTotalBytes the most bytes its entries may hold
		 * @return this builder
		 * @throws IllegalArgumentException when the id or token is blank, the id or the
		 * token is another client's, no prefix or an empty one is given, or a quota is
		 * not positive
		 */
		public Builder client(String clientId, String token, Collection<String> agentNamePrefixes, int maxEntries,
				long maxTotalBytes) {
			if (clientId.isBlank()) {
				throw new IllegalArgumentException("a registry client needs a non-blank id");
			}
			if (this.clients.containsKey(clientId)) {
				throw new IllegalArgumentException("registry client '" + clientId + "' is granted twice");
			}
			if (token.isBlank()) {
				throw new IllegalArgumentException("registry client '" + clientId + "' needs a non-blank token");
			}
			List<String> prefixes = List.copyOf(agentNamePrefixes);
			if (prefixes.isEmpty() || prefixes.stream().anyMatch(String::isEmpty)) {
				throw new IllegalArgumentException("registry client '" + clientId
						+ "' needs at least one agent-name prefix, none empty (a client that may publish any name "
						+ "uses the shared token)");
			}
			byte[] digest = BearerToken.sha256(token.trim().getBytes(StandardCharsets.UTF_8));
			for (byte[] other : this.clientTokenDigests) {
				if (MessageDigest.isEqual(other, digest)) {
					throw new IllegalArgumentException(
							"registry client '" + clientId + "' has the token of another client; each needs its own");
				}
			}
			this.clients.put(clientId, new ClientGrant(clientId, BearerToken.of(token), prefixes,
					RegistryEntries.checkMaxEntries(maxEntries), RegistryEntries.checkMaxTotalBytes(maxTotalBytes)));
			this.clientTokenDigests.add(digest);
			return this;
		}

		/**
		 * Sets the base path (default
		 * {@value MetadataRegistryHandler#DEFAULT_BASE_PATH}).
		 * @param basePath the path; {@code ""} or {@code "/"} serves from the root
		 * @return this builder
		 * @throws IllegalArgumentException when a non-root path does not start with
		 * {@code /}
		 */
		public Builder basePath(String basePath) {
			this.basePath = AgentPaths.checkBasePath(basePath);
			return this;
		}

		/**
		 * Sets the exchange whose metadata is served (required); the handler never closes
		 * it.
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
			this.maxBytes = RegistryEntries.checkMaxBytes(maxBytes);
			return this;
		}

		/**
		 * Sets the cap on the number of entries created over HTTP (default
		 * {@value MetadataRegistryHandler#DEFAULT_MAX_ENTRIES}).
		 * @param maxEntries the cap
		 * @return this builder
		 * @throws IllegalArgumentException when not positive
		 */
		public Builder maxEntries(int maxEntries) {
			this.maxEntries = RegistryEntries.checkMaxEntries(maxEntries);
			return this;
		}

		/**
		 * Sets the cap on the bytes of metadata of all entries created over HTTP (default
		 * 256 MiB). It should be at least {@link #maxBytes(int)}, or no entry of the
		 * largest size fits.
		 * @param maxTotalBytes the cap
		 * @return this builder
		 * @throws IllegalArgumentException when not positive
		 */
		public Builder maxTotalBytes(long maxTotalBytes) {
			this.maxTotalBytes = RegistryEntries.checkMaxTotalBytes(maxTotalBytes);
			return this;
		}

		/**
		 * Sets how long an entry lives after its owner last created, replaced or renewed
		 * it (default 30 s). Clients renew at a third of it.
		 * @param entryTtl the TTL, at least one millisecond
		 * @return this builder
		 * @throws IllegalArgumentException when shorter than a millisecond
		 */
		public Builder entryTtl(Duration entryTtl) {
			this.entryTtl = RegistryEntries.checkEntryTtl(entryTtl);
			return this;
		}

		/**
		 * Builds the handler.
		 * @return the handler
		 * @throws IllegalArgumentException when no store was set, when neither a token
		 * nor a client was set, when the token is blank, or when a client has the shared
		 * token
		 */
		public MetadataRegistryHandler build() {
			MetadataExchange store = this.store;
			if (store == null) {
				throw new IllegalArgumentException("the metadata registry needs a store: set store(...)");
			}
			String token = this.token;
			if ((token == null && this.clients.isEmpty()) || (token != null && token.isBlank())) {
				throw new IllegalArgumentException("the metadata registry needs a bearer token: set token(...) or "
						+ "client(...); a blank token is refused");
			}
			if (token != null) {
				byte[] shared = BearerToken.sha256(token.trim().getBytes(StandardCharsets.UTF_8));
				if (this.clientTokenDigests.stream().anyMatch(digest -> MessageDigest.isEqual(digest, shared))) {
					throw new IllegalArgumentException("a registry client has the shared token; each needs its own");
				}
			}
			warnWhenQuotasPassTheBounds(token != null);
			return new MetadataRegistryHandler(this, store, (token != null) ? token.trim() : null);
		}

		/**
		 * Quotas that together pass the registry's bounds leave a client under its quota
		 * open to a 507 when the others fill the registry: said once, at build.
		 */
		private void warnWhenQuotasPassTheBounds(boolean shared) {
			long entries = shared ? sharedMaxEntries() : 0;
			long bytes = shared ? sharedMaxTotalBytes() : 0;
			for (ClientGrant client : this.clients.values()) {
				entries += client.maxEntries;
				bytes += client.maxTotalBytes;
			}
			if (entries > this.maxEntries || bytes > this.maxTotalBytes) {
				long totalEntries = entries;
				long totalBytes = bytes;
				logger.log(System.Logger.Level.WARNING,
						() -> "The quotas of the metadata registry's " + (shared ? "shared token and " : "")
								+ "clients together (" + totalEntries + " entries, " + totalBytes
								+ " bytes) pass its bounds (" + this.maxEntries + " entries, " + this.maxTotalBytes
								+ " bytes): a client under its quota can be refused with 507 when "
								+ "the others fill the registry");
			}
		}

	}

}
