package dev.nixl4j.metadata;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * The request handling of a metadata registry, apart from any HTTP server: {@code GET},
 * {@code PUT}, {@code POST} and {@code DELETE} of {@code {base}/agents/{name}/metadata}
 * (the layout {@link HttpMetadataExchange} talks to), answered from a backing
 * {@link MetadataExchange}. {@link MetadataHttpServer} and the Spring Boot starter's
 * servlet both delegate to it, so the rules below hold for every transport:
 * <ul>
 * <li>every request needs {@code Authorization: Bearer <token>}: the shared token
 * ({@link Builder#token}) or a client's own ({@link Builder#client}); tokens are compared
 * in constant time through their SHA-256 digests; without one, or with another token, the
 * answer is 401 with {@code WWW-Authenticate: Bearer} and no body;</li>
 * <li><b>clients have names and quotas.</b> A client's token is granted agent-name
 * prefixes: its {@code PUT}, {@code POST} and {@code DELETE} requests (metadata and
 * documents) for a name that starts with none of them get 403, so a client cannot take
 * another's names. The entries a client created count against its own quota (entries and
 * bytes, documents included): one past it gets 429 with a plain-text reason, while other
 * clients still publish. The shared token may change any free name and has no quota of
 * its own: a holder can take a name before its agent does, or fill the registry up to its
 * global bounds; per-client tokens without a shared one close both. Every authenticated
 * caller may read every entry;</li>
 * <li>a path that is not an agent's metadata gets 404, and so does a {@code GET} of an
 * agent with no metadata published;</li>
 * <li><b>each entry has an owner.</b> A {@code PUT} of a free name creates the entry
 * (201) and hands out a new random owner secret in the {@value #OWNER_SECRET_HEADER}
 * response header; only a request carrying that secret in the same request header may
 * replace the entry ({@code PUT}, 204), renew it ({@code POST}, 204) or delete it
 * ({@code DELETE}, 204). Any other request for a taken name gets 403 and leaves the entry
 * unchanged. The registry keeps only the secret's SHA-256 digest and compares in constant
 * time. Entries the backing exchange holds without having come through this handler (the
 * serving application's own agent) are never changed over HTTP: 403, also when one was
 * published there over an entry created over HTTP, whose claim then ends;</li>
 * <li><b>entries expire.</b> An entry created over HTTP lives for the entry TTL
 * ({@link Builder#entryTtl(Duration)}, default 30 s, sent back in
 * {@value #ENTRY_TTL_HEADER} as milliseconds) after its last {@code PUT} or {@code POST}
 * by its owner, as an etcd lease does; then it is withdrawn from the backing exchange
 * (its watches are told) and the name is free again. A restarted agent that lost its
 * secret therefore gets its name back at most one TTL after its old process stopped
 * renewing; one that shut down cleanly deleted its entry at once. Expiry is checked on
 * every request (for the entry asked about, and for all entries at most ten times per
 * TTL) and whenever the server calls {@link #expireDue()}, which the servers of this
 * project do every tenth of the TTL; the handler has no thread of its own;</li>
 * <li><b>the registry is bounded</b>: at most {@link Builder#maxEntries(int)} entries
 * (default {@value #DEFAULT_MAX_ENTRIES}) and {@link Builder#maxTotalBytes(long)} bytes
 * of metadata (default 256 MiB) created over HTTP. A {@code PUT} that does not fit gets
 * 507 with a plain-text reason; the room for its body is reserved before the body is
 * read, so concurrent uploads never hold more than the budget;</li>
 * <li>a {@code PUT} body over the cap gets 413 (it is read no further than the cap), and
 * one that is not NIXL metadata of the agent in the path gets 400
 * ({@link MetadataValues#check}); nothing is stored then;</li>
 * <li>a {@code DELETE} of a free name is a 204, a {@code POST} of one a 404;</li>
 * <li><b>documents</b> ({@link MetadataExchange#publishDocument}) live at
 * {@code {base}/agents/{name}/documents/{kind}} ({@code GET}, {@code PUT},
 * {@code DELETE}) and belong to the agent's entry: a {@code PUT} or {@code DELETE} needs
 * the entry's owner secret (403 otherwise), a {@code PUT} needs the entry to exist (409
 * otherwise); a document counts against the registry's bytes, at most
 * {@value #MAX_DOCUMENTS_PER_ENTRY} kinds per entry (507 beyond), each at most
 * {@link MetadataExchange#MAX_DOCUMENT_BYTES} (413 beyond); a kind that
 * {@link MetadataExchange#requireDocumentKind} refuses gets 400. Documents are renewed
 * with their entry and go away when it is deleted or expires;</li>
 * <li>other methods get 405 with {@code Allow: GET, PUT, POST, DELETE};</li>
 * <li>a failing backing exchange gives 503.</li>
 * </ul>
 *
 * <p>
 * A {@code GET} asks the backing exchange with a zero timeout, so a request never waits
 * for metadata to appear. Bodies, tokens and owner secrets are never logged. Instances
 * are thread-safe.
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

	private static final String OCTET_STREAM = "application/octet-stream";

	private static final int SECRET_BYTES = 32;

	private final MetadataExchange store;

	private final String basePath;

	private final @Nullable BearerToken token;

	private final List<ClientGrant> clients;

	private final int maxBytes;

	private final int maxEntries;

	private final long maxTotalBytes;

	private final Duration entryTtl;

	private final long ttlNanos;

	private final long sweepIntervalNanos;

	private final SecureRandom random = new SecureRandom();

	private final ReentrantLock lock = new ReentrantLock();

	/** Entries created over HTTP, by agent name; guarded by {@link #lock}. */
	private final Map<String, Claim> claims = new HashMap<>();

	/** Bytes of the entries in {@link #claims}; guarded by {@link #lock}. */
	private long storedBytes;

	/** Bytes and entries held for bodies being read; guarded by {@link #lock}. */
	private long reservedBytes;

	private int reservedEntries;

	private long lastSweep;

	private MetadataRegistryHandler(Builder builder, MetadataExchange store, @Nullable String token) {
		this.store = store;
		this.basePath = builder.basePath;
		this.token = (token != null) ? BearerToken.of(token) : null;
		this.clients = List.copyOf(builder.clients.values());
		this.maxBytes = builder.maxBytes;
		this.maxEntries = builder.maxEntries;
		this.maxTotalBytes = builder.maxTotalBytes;
		this.entryTtl = builder.entryTtl;
		this.ttlNanos = builder.entryTtl.toNanos();
		this.sweepIntervalNanos = Math.max(this.ttlNanos / 10, 1);
		this.lastSweep = System.nanoTime();
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
	 * Handles one request. The body is read only for an authorized {@code PUT} that may
	 * go ahead (the name is free or the secret is the owner's, and the registry has
	 * room), and then no further than the cap plus one byte; the caller closes it.
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
		try {
			ClientGrant caller = caller(authorization);
			if (caller == null) {
				logger.log(System.Logger.Level.DEBUG, "Refused a request without a valid bearer token");
				return Response.of(401, Map.of("WWW-Authenticate", "Bearer realm=\"nixl4j\""), null);
			}
			Target target = target(rawPath);
			if (target == null) {
				return Response.of(404, Map.of(), null);
			}
			String agentName = target.agentName();
			byte @Nullable [] secretDigest = (ownerSecret != null && !ownerSecret.isBlank())
					? BearerToken.sha256(ownerSecret.trim().getBytes(StandardCharsets.UTF_8)) : null;
			if (!method.equals("GET") && !caller.permits(agentName)) {
				return text(403, "client '" + caller.id + "' may not change the entry of agent '" + agentName
						+ "': its agent names start with one of " + caller.agentNamePrefixes);
			}
			String kind = target.kind();
			if (kind != null) {
				String problem = kindProblem(kind);
				if (problem != null) {
					return text(400, problem);
				}
				return switch (method) {
					case "GET" -> getDocument(agentName, kind);
					case "PUT" -> putDocument(agentName, kind, secretDigest, contentLength, body);
					case "DELETE" -> deleteDocument(agentName, kind, secretDigest);
					default -> Response.of(405, Map.of("Allow", "GET, PUT, DELETE"), null);
				};
			}
			return switch (method) {
				case "GET" -> get(agentName);
				case "PUT" -> put(agentName, caller, secretDigest, contentLength, body);
				case "POST" -> renew(agentName, secretDigest);
				case "DELETE" -> delete(agentName, secretDigest);
				default -> Response.of(405, Map.of("Allow", "GET, PUT, POST, DELETE"), null);
			};
		}
		catch (NixlException ex) {
			logger.log(System.Logger.Level.WARNING, "The metadata store failed: " + ex.status());
			return Response.of(503, Map.of(), null);
		}
	}

	private Response get(String agentName) {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			sweep(now);
			expireIfDue(agentName, now);
		}
		finally {
			this.lock.unlock();
		}
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

	/** The grant of the token a request carries; {@code null} when it carries none. */
	private @Nullable ClientGrant caller(@Nullable String authorization) {
		byte @Nullable [] presented = BearerToken.presented(authorization);
		if (presented == null) {
			return null;
		}
		ClientGrant found = null;
		// every token is compared, so the time taken does not tell which matched
		if (this.token != null && this.token.matchesDigest(presented)) {
			found = ClientGrant.SHARED;
		}
		for (ClientGrant client : this.clients) {
			if (client.token.matchesDigest(presented)) {
				found = client;
			}
		}
		return found;
	}

	private Response put(String agentName, ClientGrant caller, byte @Nullable [] secretDigest, long contentLength,
			InputStream in) throws IOException {
		if (contentLength > this.maxBytes) {
			return Response.of(413, Map.of(), null);
		}
		int room;
		int newEntries;
		this.lock.lock();
		try {
			Response refused = admit(agentName, caller, secretDigest, Math.max(contentLength, 0), System.nanoTime());
			if (refused != null) {
				return refused;
			}
			Claim claim = this.claims.get(agentName);
			long available = this.maxTotalBytes - this.storedBytes - this.reservedBytes
					+ ((claim != null) ? claim.bytes : 0);
			// a body of unknown length may take what is left of the budget, up to the cap
			room = (contentLength >= 0) ? (int) contentLength : (int) Math.min(this.maxBytes, available);
			newEntries = (claim != null) ? 0 : 1;
			this.reservedBytes += room;
			this.reservedEntries += newEntries;
		}
		finally {
			this.lock.unlock();
		}
		byte[] body;
		try {
			body = in.readNBytes(room + 1);
		}
		finally {
			this.lock.lock();
			try {
				this.reservedBytes -= room;
				this.reservedEntries -= newEntries;
			}
			finally {
				this.lock.unlock();
			}
		}
		if (body.length > room) {
			return (room < this.maxBytes && contentLength < 0)
					? full("the registry holds its maximum of " + this.maxTotalBytes + " bytes of metadata")
					: Response.of(413, Map.of(), null);
		}
		AgentMetadata metadata;
		try {
			metadata = MetadataValues.check("send_local_md", agentName, body, this.maxBytes);
		}
		catch (NixlException ex) {
			return Response.of(400, Map.of(), null);
		}
		this.lock.lock();
		try {
			long now = System.nanoTime();
			// the decision is taken again: the entry may have changed hands or expired
			// during the read
			Response refused = admit(agentName, caller, secretDigest, body.length, now);
			if (refused != null) {
				return refused;
			}
			Claim claim = this.claims.get(agentName);
			this.store.publish(agentName, metadata);
			if (claim != null) {
				this.storedBytes += body.length - claim.bytes;
				claim.bytes = body.length;
				claim.valueDigest = BearerToken.sha256(body);
				claim.expiresAt = now + this.ttlNanos;
				return Response.of(204, ttlHeader(), null);
			}
			String secret = newSecret();
			byte[] newSecretDigest = BearerToken.sha256(secret.getBytes(StandardCharsets.UTF_8));
			this.claims.put(agentName,
					new Claim(caller, newSecretDigest, BearerToken.sha256(body), body.length, now + this.ttlNanos));
			this.storedBytes += body.length;
			Map<String, String> headers = ttlHeader();
			headers.put(OWNER_SECRET_HEADER, secret);
			headers.put("Cache-Control", "no-store");
			return Response.of(201, headers, null);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Decides whether a {@code PUT} of {@code size} bytes may go ahead: {@code null} when
	 * it may, the refusal otherwise. Called with the lock held.
	 */
	private @Nullable Response admit(String agentName, ClientGrant caller, byte @Nullable [] secretDigest, long size,
			long now) {
		sweep(now);
		expireIfDue(agentName, now);
		Claim claim = this.claims.get(agentName);
		if (claim != null) {
			if (!claim.ownedBy(secretDigest)) {
				return notOwner(agentName);
			}
			if (stillHolds(agentName, claim)) {
				if (this.storedBytes - claim.bytes + this.reservedBytes + size > this.maxTotalBytes) {
					return full("the registry holds its maximum of " + this.maxTotalBytes
							+ " bytes of metadata; the entry cannot grow");
				}
				return overClientBytes(claim.client, size - claim.bytes);
			}
		}
		if (isStored(agentName)) {
			return notOwner(agentName);
		}
		if (this.claims.size() + this.reservedEntries >= this.maxEntries) {
			return full("the registry holds its maximum of " + this.maxEntries + " entries");
		}
		if (this.storedBytes + this.reservedBytes + size > this.maxTotalBytes) {
			return full("the registry holds its maximum of " + this.maxTotalBytes + " bytes of metadata");
		}
		if (caller != ClientGrant.SHARED && entriesOf(caller) >= caller.maxEntries) {
			return overQuota("client '" + caller.id + "' holds its maximum of " + caller.maxEntries + " entries");
		}
		return overClientBytes(caller, size);
	}

	/**
	 * Refuses {@code growth} more bytes for a client past its quota; {@code null} when
	 * they fit. Called with the lock held.
	 */
	private @Nullable Response overClientBytes(ClientGrant client, long growth) {
		if (client == ClientGrant.SHARED || growth <= 0 || bytesOf(client) + growth <= client.maxTotalBytes) {
			return null;
		}
		return overQuota("client '" + client.id + "' holds its maximum of " + client.maxTotalBytes + " bytes");
	}

	private int entriesOf(ClientGrant client) {
		int entries = 0;
		for (Claim claim : this.claims.values()) {
			if (claim.client == client) {
				entries++;
			}
		}
		return entries;
	}

	private long bytesOf(ClientGrant client) {
		long bytes = 0;
		for (Claim claim : this.claims.values()) {
			if (claim.client == client) {
				bytes += claim.bytes + claim.documentBytes();
			}
		}
		return bytes;
	}

	private Response renew(String agentName, byte @Nullable [] secretDigest) {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			sweep(now);
			expireIfDue(agentName, now);
			Claim claim = this.claims.get(agentName);
			if (claim == null) {
				return isStored(agentName) ? notOwner(agentName) : Response.of(404, Map.of(), null);
			}
			if (!claim.ownedBy(secretDigest)) {
				return notOwner(agentName);
			}
			if (!isStored(agentName)) {
				// withdrawn from the backing exchange directly: the entry is gone, so is
				// its claim
				drop(agentName, claim);
				return Response.of(404, Map.of(), null);
			}
			claim.expiresAt = now + this.ttlNanos;
			return Response.of(204, ttlHeader(), null);
		}
		finally {
			this.lock.unlock();
		}
	}

	private Response delete(String agentName, byte @Nullable [] secretDigest) {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			sweep(now);
			expireIfDue(agentName, now);
			Claim claim = this.claims.get(agentName);
			if (claim == null) {
				return isStored(agentName) ? notOwner(agentName) : Response.of(204, Map.of(), null);
			}
			if (!claim.ownedBy(secretDigest)) {
				return notOwner(agentName);
			}
			if (!stillHolds(agentName, claim)) {
				return isStored(agentName) ? notOwner(agentName) : Response.of(204, Map.of(), null);
			}
			// withdrawn first: when the store fails, the claim stays and its owner can
			// try again
			this.store.invalidate(agentName);
			drop(agentName, claim);
			return Response.of(204, Map.of(), null);
		}
		finally {
			this.lock.unlock();
		}
	}

	private Response getDocument(String agentName, String kind) {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			sweep(now);
			expireIfDue(agentName, now);
		}
		finally {
			this.lock.unlock();
		}
		byte[] document;
		try {
			document = this.store.fetchDocument(agentName, kind, Duration.ZERO);
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT || ex.status() == NixlStatus.NOT_SUPPORTED) {
				return Response.of(404, Map.of(), null);
			}
			throw ex;
		}
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("Content-Type", OCTET_STREAM);
		headers.put("Cache-Control", "no-store");
		return Response.of(200, headers, document);
	}

	private Response putDocument(String agentName, String kind, byte @Nullable [] secretDigest, long contentLength,
			InputStream in) throws IOException {
		int cap = MetadataExchange.MAX_DOCUMENT_BYTES;
		if (contentLength > cap) {
			return documentTooLarge(kind);
		}
		int room;
		this.lock.lock();
		try {
			Response refused = admitDocument(agentName, kind, secretDigest, Math.max(contentLength, 0),
					System.nanoTime());
			if (refused != null) {
				return refused;
			}
			Claim claim = this.claims.get(agentName);
			long available = this.maxTotalBytes - this.storedBytes - this.reservedBytes
					+ ((claim != null) ? claim.documentBytes(kind) : 0);
			room = (contentLength >= 0) ? (int) contentLength : (int) Math.max(0, Math.min(cap, available));
			this.reservedBytes += room;
		}
		finally {
			this.lock.unlock();
		}
		byte[] body;
		try {
			body = in.readNBytes(room + 1);
		}
		finally {
			this.lock.lock();
			try {
				this.reservedBytes -= room;
			}
			finally {
				this.lock.unlock();
			}
		}
		if (body.length > room) {
			return (room < cap && contentLength < 0)
					? full("the registry holds its maximum of " + this.maxTotalBytes + " bytes of metadata")
					: documentTooLarge(kind);
		}
		this.lock.lock();
		try {
			// the decision is taken again: the entry may have changed hands or expired
			// during the read
			Response refused = admitDocument(agentName, kind, secretDigest, body.length, System.nanoTime());
			if (refused != null) {
				return refused;
			}
			Claim claim = Objects.requireNonNull(this.claims.get(agentName));
			this.store.publishDocument(agentName, kind, body);
			Integer previous = claim.documents.put(kind, body.length);
			this.storedBytes += body.length - ((previous != null) ? previous : 0);
			return Response.of((previous != null) ? 204 : 201, Map.of(), null);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Decides whether a {@code PUT} of a document of {@code size} bytes may go ahead:
	 * {@code null} when it may (then the agent's claim exists), the refusal otherwise.
	 * Called with the lock held.
	 */
	private @Nullable Response admitDocument(String agentName, String kind, byte @Nullable [] secretDigest, long size,
			long now) {
		sweep(now);
		expireIfDue(agentName, now);
		Claim claim = this.claims.get(agentName);
		if (claim != null && !claim.ownedBy(secretDigest)) {
			return notOwner(agentName);
		}
		if (claim == null || !stillHolds(agentName, claim)) {
			return isStored(agentName) ? notOwner(agentName)
					: text(409, "the registry holds no metadata entry of agent '" + agentName
							+ "'; publish its metadata before its documents");
		}
		if (!claim.documents.containsKey(kind) && claim.documents.size() >= MAX_DOCUMENTS_PER_ENTRY) {
			return full("the entry of agent '" + agentName + "' holds its maximum of " + MAX_DOCUMENTS_PER_ENTRY
					+ " documents");
		}
		if (this.storedBytes - claim.documentBytes(kind) + this.reservedBytes + size > this.maxTotalBytes) {
			return full("the registry holds its maximum of " + this.maxTotalBytes + " bytes of metadata");
		}
		return overClientBytes(claim.client, size - claim.documentBytes(kind));
	}

	private Response deleteDocument(String agentName, String kind, byte @Nullable [] secretDigest) {
		this.lock.lock();
		try {
			long now = System.nanoTime();
			sweep(now);
			expireIfDue(agentName, now);
			Claim claim = this.claims.get(agentName);
			if (claim == null) {
				return isStored(agentName) ? notOwner(agentName) : Response.of(204, Map.of(), null);
			}
			if (!claim.ownedBy(secretDigest)) {
				return notOwner(agentName);
			}
			if (!stillHolds(agentName, claim)) {
				return isStored(agentName) ? notOwner(agentName) : Response.of(204, Map.of(), null);
			}
			Integer size = claim.documents.get(kind);
			if (size == null) {
				return Response.of(204, Map.of(), null);
			}
			InMemoryMetadataExchange memory = inMemoryStore();
			if (memory == null) {
				return text(501, "the registry's store cannot remove one document; delete the entry instead");
			}
			memory.removeDocument(agentName, kind);
			claim.documents.remove(kind);
			this.storedBytes -= size;
			return Response.of(204, Map.of(), null);
		}
		finally {
			this.lock.unlock();
		}
	}

	/** The in-memory exchange behind the store, through forwarding wrappers. */
	private @Nullable InMemoryMetadataExchange inMemoryStore() {
		MetadataExchange current = this.store;
		while (current instanceof ForwardingMetadataExchange forwarding) {
			current = forwarding.getDelegate();
		}
		return (current instanceof InMemoryMetadataExchange memory) ? memory : null;
	}

	private static Response documentTooLarge(String kind) {
		return text(413,
				"the document '" + kind + "' is over the limit of " + MetadataExchange.MAX_DOCUMENT_BYTES + " bytes");
	}

	private static @Nullable String kindProblem(String kind) {
		try {
			MetadataExchange.requireDocumentKind(kind);
			return null;
		}
		catch (NixlException ex) {
			return "the document kind in the path is refused: it must be 1 to 64 characters of a-z, 0-9, '.' "
					+ "and '-', starting with a letter or digit";
		}
	}

	/**
	 * Withdraws every entry whose owner did not renew it in time, now. Requests do it as
	 * they arrive; a server also calls it every {@link #sweepInterval()}, so that an
	 * entry whose owner died expires (and watchers of the store learn it) within a tenth
	 * of its TTL after its deadline even when no request comes.
	 */
	public void expireDue() {
		this.lock.lock();
		try {
			this.lastSweep = System.nanoTime() - this.sweepIntervalNanos;
			sweep(System.nanoTime());
		}
		catch (RuntimeException ex) {
			// the claim stays: the next call or request expires it
			logger.log(System.Logger.Level.WARNING, "Could not expire a registry entry now: {0}", ex.getMessage());
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Returns how often a server should call {@link #expireDue()}: a tenth of the entry
	 * TTL.
	 * @return the interval
	 */
	public Duration sweepInterval() {
		return Duration.ofNanos(this.sweepIntervalNanos);
	}

	/**
	 * Withdraws every expired entry, at most ten times per TTL. Called with the lock
	 * held.
	 */
	private void sweep(long now) {
		if (now - this.lastSweep < this.sweepIntervalNanos) {
			return;
		}
		this.lastSweep = now;
		List<String> expired = new ArrayList<>();
		this.claims.forEach((name, claim) -> {
			if (now - claim.expiresAt >= 0) {
				expired.add(name);
			}
		});
		expired.forEach(name -> expireIfDue(name, now));
	}

	/**
	 * Withdraws one entry if its owner did not renew it in time. Called with the lock
	 * held.
	 */
	private void expireIfDue(String agentName, long now) {
		Claim claim = this.claims.get(agentName);
		if (claim != null && now - claim.expiresAt >= 0 && stillHolds(agentName, claim)) {
			// withdrawn first: when the store fails, the claim stays and a later request
			// expires it
			this.store.invalidate(agentName);
			drop(agentName, claim);
			logger.log(System.Logger.Level.INFO, () -> "The registry entry of agent '" + agentName
					+ "' expired: its owner did not renew it within " + this.entryTtl);
		}
	}

	/**
	 * Whether the backing exchange still holds the value the claim's owner stored. When
	 * it holds none, or another one published there by other means (the serving
	 * application's own agent of that name), the claim is dropped: the owner may no
	 * longer change or withdraw what is there. Called with the lock held.
	 */
	private boolean stillHolds(String agentName, Claim claim) {
		byte @Nullable [] stored = storedValue(agentName);
		if (stored != null && MessageDigest.isEqual(claim.valueDigest, BearerToken.sha256(stored))) {
			return true;
		}
		drop(agentName, claim);
		return false;
	}

	private byte @Nullable [] storedValue(String agentName) {
		try {
			return this.store.fetch(agentName, Duration.ZERO).toByteArray();
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT) {
				return null;
			}
			throw ex;
		}
	}

	private void drop(String agentName, Claim claim) {
		this.claims.remove(agentName);
		this.storedBytes -= claim.bytes + claim.documentBytes();
	}

	private boolean isStored(String agentName) {
		if (this.store instanceof InMemoryMetadataExchange memory) {
			return memory.isPublished(agentName);
		}
		try {
			this.store.fetch(agentName, Duration.ZERO);
			return true;
		}
		catch (NixlException ex) {
			if (ex.status() == NixlStatus.TIMEOUT) {
				return false;
			}
			throw ex;
		}
	}

	private Map<String, String> ttlHeader() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put(ENTRY_TTL_HEADER, Long.toString(Math.max(1, this.entryTtl.toMillis())));
		return headers;
	}

	private static Response notOwner(String agentName) {
		return text(403, "the entry of agent '" + agentName + "' belongs to another owner; only the request carrying "
				+ "its owner secret (" + OWNER_SECRET_HEADER + ") may change it");
	}

	private static Response overQuota(String reason) {
		return text(429, reason + "; try again when its entries expire or are deleted");
	}

	private static Response full(String reason) {
		return text(507, reason + "; try again when entries expire or are deleted");
	}

	private static Response text(int status, String reason) {
		return Response.of(status, Map.of("Content-Type", "text/plain; charset=utf-8"),
				reason.getBytes(StandardCharsets.UTF_8));
	}

	private String newSecret() {
		byte[] bytes = new byte[SECRET_BYTES];
		this.random.nextBytes(bytes);
		return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
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
		return "MetadataRegistryHandler[basePath=" + this.basePath + ", store=" + this.store + "]";
	}

	/**
	 * An entry created over HTTP: its owner secret's digest, the digest of the value its
	 * owner stored, its size and when it expires.
	 */
	private static final class Claim {

		/** Whose quota the entry counts against. */
		private final ClientGrant client;

		private final byte[] secretDigest;

		private byte[] valueDigest;

		private long bytes;

		private long expiresAt;

		/** The sizes of the entry's documents, by kind. */
		private final Map<String, Integer> documents = new HashMap<>();

		Claim(ClientGrant client, byte[] secretDigest, byte[] valueDigest, long bytes, long expiresAt) {
			this.client = client;
			this.secretDigest = secretDigest;
			this.valueDigest = valueDigest;
			this.bytes = bytes;
			this.expiresAt = expiresAt;
		}

		long documentBytes() {
			long total = 0;
			for (int size : this.documents.values()) {
				total += size;
			}
			return total;
		}

		long documentBytes(String kind) {
			Integer size = this.documents.get(kind);
			return (size != null) ? size : 0;
		}

		boolean ownedBy(byte @Nullable [] presented) {
			return presented != null && MessageDigest.isEqual(this.secretDigest, presented);
		}

	}

	/**
	 * What a token may do: the shared token any name without a quota of its own, a
	 * client's token the names that start with its prefixes, within its quota.
	 */
	private static final class ClientGrant {

		static final ClientGrant SHARED = new ClientGrant("shared", BearerToken.of("shared"), List.of(""),
				Integer.MAX_VALUE, Long.MAX_VALUE);

		private final String id;

		private final BearerToken token;

		private final List<String> agentNamePrefixes;

		private final int maxEntries;

		private final long maxTotalBytes;

		ClientGrant(String id, BearerToken token, List<String> agentNamePrefixes, int maxEntries, long maxTotalBytes) {
			this.id = id;
			this.token = token;
			this.agentNamePrefixes = agentNamePrefixes;
			this.maxEntries = maxEntries;
			this.maxTotalBytes = maxTotalBytes;
		}

		boolean permits(String agentName) {
			for (String prefix : this.agentNamePrefixes) {
				if (agentName.startsWith(prefix)) {
					return true;
				}
			}
			return false;
		}

		@Override
		public String toString() {
			return "ClientGrant[" + this.id + ", prefixes=" + this.agentNamePrefixes + "]";
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
			throw new IllegalArgumentException(
					"maxBytes must be positive and below Integer.MAX_VALUE, was " + maxBytes);
		}
		return maxBytes;
	}

	/** Checks a cap on entries: positive. */
	static int checkMaxEntries(int maxEntries) {
		if (maxEntries <= 0) {
			throw new IllegalArgumentException("maxEntries must be positive, was " + maxEntries);
		}
		return maxEntries;
	}

	/** Checks a cap on the bytes of all entries: positive. */
	static long checkMaxTotalBytes(long maxTotalBytes) {
		if (maxTotalBytes <= 0) {
			throw new IllegalArgumentException("maxTotalBytes must be positive, was " + maxTotalBytes);
		}
		return maxTotalBytes;
	}

	/** Checks an entry TTL: at least a millisecond. */
	static Duration checkEntryTtl(Duration entryTtl) {
		if (entryTtl.compareTo(Duration.ofMillis(1)) < 0) {
			throw new IllegalArgumentException("entryTtl must be at least 1 ms, was " + entryTtl);
		}
		return entryTtl;
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

		private final Map<String, ClientGrant> clients = new LinkedHashMap<>();

		private final List<byte[]> clientTokenDigests = new ArrayList<>();

		private Builder() {
		}

		/**
		 * Sets the shared bearer token: its holders may create, replace and delete the
		 * entry of any free name, with no quota but the registry's own. Required unless
		 * {@linkplain #client clients} are set; with clients it may be left out, so that
		 * every caller is held to its names and quota.
		 * @param token the token
		 * @return this builder
		 */
		public Builder token(String token) {
			this.token = token;
			return this;
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
					checkMaxEntries(maxEntries), checkMaxTotalBytes(maxTotalBytes)));
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
			this.basePath = checkBasePath(basePath);
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
			this.maxBytes = checkMaxBytes(maxBytes);
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
			this.maxEntries = checkMaxEntries(maxEntries);
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
			this.maxTotalBytes = checkMaxTotalBytes(maxTotalBytes);
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
			this.entryTtl = checkEntryTtl(entryTtl);
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
			return new MetadataRegistryHandler(this, store, (token != null) ? token.trim() : null);
		}

	}

}
