package dev.nixl4j.metadata;

import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.SettingChecks;
import org.jspecify.annotations.Nullable;

/**
 * A {@link MetadataExchange} that talks to a metadata server over HTTP with the JDK's
 * {@link HttpClient}: {@code GET}, {@code PUT} and {@code DELETE} of
 * {@code {base}/agents/{name}/metadata} (the name percent-encoded as one path segment),
 * and {@code POST} there to renew an entry, the body the raw metadata as
 * {@code application/octet-stream}, every request with
 * {@code Authorization: Bearer <token>}. {@link MetadataHttpServer} serves this layout.
 *
 * <p>
 * {@link #fetch} retries while the metadata is not published (404) or the server cannot
 * be reached, with a back-off that starts at 50 ms and doubles up to
 * {@link Builder#maxRetryInterval(Duration)}, until the deadline; a zero timeout makes
 * one attempt. Response bodies are read up to {@link Builder#maxBytes(int)} and no
 * further. A refused token (401, or 403 to a fetch) fails at once with
 * {@link NixlStatus#ERROR_INVALID_PARAM}.
 *
 * <p>
 * A failure says by {@link NixlException#retryable()} whether it may pass by itself: an
 * exchange that refuses the connection, does not answer in time, is full (507) or answers
 * with another server error (5xx) is {@code retryable}; a failed TLS handshake (a
 * certificate the client does not trust, or one that does not name the host), a refused
 * token, a name held by another owner and a refused value are not.
 *
 * <p>
 * Watches poll their peers' URLs every {@link Builder#pollInterval(Duration)} on one
 * daemon thread shared by the exchange (one request per watched peer and pass); a watch
 * fires once, at the first 404 after it saw the metadata (a new watch asks once right
 * away). Watches of the same peer fire in the order they were created.
 *
 * <p>
 * The registry gives each entry an owner: the answer to the first {@link #publish} of a
 * name carries an owner secret ({@value MetadataRegistryHandler#OWNER_SECRET_HEADER}),
 * which this exchange keeps in memory for that name and sends with every later
 * {@code PUT}, {@code POST} and {@code DELETE} of it, so only this exchange can replace,
 * renew or withdraw the entry. A name taken by another owner makes {@link #publish} fail
 * with {@link NixlStatus#BUSY}, and so does a name outside the client's agent-name
 * prefixes; a full registry (507) or a used-up client quota (429) with
 * {@link NixlStatus#UNAVAILABLE}. When the registry announces an entry TTL
 * ({@value MetadataRegistryHandler#ENTRY_TTL_HEADER}), the exchange renews its published
 * entries every third of it with a bodiless {@code POST}, on the thread it shares with
 * the watches; a failed renewal is logged once and tried again at the next period. An
 * entry the registry no longer has (404 to a renewal: it expired or the registry
 * restarted) is renewed no more until it is published again, which claims the name anew.
 * The secret is lost with the process: a restarted agent gets its name back when its old
 * entry expires, or at once if the old process withdrew it on shutdown.
 *
 * <p>
 * Documents ({@link #publishDocument}) live at
 * {@code {base}/agents/{name}/documents/{kind}}: a {@code PUT} there carries the owner
 * secret of the agent's metadata entry, which must exist; the registry removes them with
 * the entry and renews them with it. {@link #fetchDocument} retries as {@link #fetch}
 * does.
 *
 * <p>
 * An {@code https} base URI uses the JDK's default TLS context unless
 * {@link Builder#sslContext(SSLContext)} names another; the server's certificate and host
 * name are always verified.
 *
 * <p>
 * The token and owner secrets are never logged or shown, and neither is metadata.
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

	private static final System.Logger logger = System.getLogger(HttpMetadataExchange.class.getName());

	private static final long MIN_RENEWAL_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(30);

	private static final long FIRST_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	/** How much of a body other than metadata (an error page) is read. */
	private static final int OTHER_BODY_BYTES = 4096;

	private static final String OCTET_STREAM = "application/octet-stream";

	private final URI baseUri;

	private final String base;

	private final String authorization;

	private final Duration requestTimeout;

	private final Duration pollInterval;

	private final Duration maxRetryInterval;

	private final int maxBytes;

	private final HttpClient client;

	private final CountDownLatch closing = new CountDownLatch(1);

	private final Object watchLock = new Object();

	private final Map<String, List<HttpWatch>> watches = new LinkedHashMap<>();

	private @Nullable ScheduledExecutorService scheduler;

	private @Nullable ScheduledFuture<?> polling;

	/**
	 * Serializes the owner's requests, so a renewal never races a republish with another
	 * secret.
	 */
	private final Object ownerLock = new Object();

	/**
	 * This exchange's entries at the registry, by agent name; guarded by
	 * {@link #ownerLock}.
	 */
	private final Map<String, Ownership> owned = new LinkedHashMap<>();

	private @Nullable ScheduledFuture<?> renewal;

	private long renewalPeriodNanos;

	private final AtomicLong internalErrors = new AtomicLong();

	private HttpMetadataExchange(Builder builder, String token) {
		this.baseUri = builder.baseUri;
		this.base = AgentPaths.trimBase(builder.baseUri.toString());
		this.authorization = "Bearer " + token;
		this.requestTimeout = builder.requestTimeout;
		this.pollInterval = builder.pollInterval;
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
		return this.baseUri;
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
		requireUsable(operation, agentName);
		synchronized (this.ownerLock) {
			Ownership ownership = this.owned.get(agentName);
			HttpRequest.Builder builder = request(agentName, this.requestTimeout).header("Content-Type", OCTET_STREAM);
			if (ownership != null) {
				builder.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownership.secret);
			}
			HttpRequest request = builder.PUT(HttpRequest.BodyPublishers.ofByteArray(metadata.toByteArray())).build();
			HttpResponse<CappedBody> response = sendOrUnavailable(operation, agentName, request);
			int status = response.statusCode();
			switch (status) {
				case 200, 201, 204 -> owns(agentName, response, ownership);
				case 403 -> throw notOwner(operation, agentName, response);
				case 507 -> throw new NixlException(NixlStatus.UNAVAILABLE, operation, null, agentName,
						"the exchange at " + this.baseUri + " is full (HTTP 507: " + reason(response) + ")", null,
						true);
				case 429 -> throw overQuota(operation, agentName, response);
				case 413 -> throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, agentName,
						"the exchange at " + this.baseUri + " refused the value as too large (HTTP 413)");
				case 400 -> throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, agentName,
						"the exchange at " + this.baseUri + " refused the value as not NIXL metadata of agent '"
								+ agentName + "' (HTTP 400)");
				default -> throw unexpected(operation, agentName, status);
			}
		}
	}

	/**
	 * Records the secret and TTL of a published entry. Called with the owner lock held.
	 */
	private void owns(String agentName, HttpResponse<CappedBody> response, @Nullable Ownership previous) {
		String secret = response.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER).orElse(null);
		if (secret == null && previous != null) {
			secret = previous.secret;
		}
		if (secret == null) {
			// a registry without owners: nothing to send back, nothing to renew
			this.owned.remove(agentName);
			return;
		}
		long ttlMillis = entryTtlMillis(response);
		this.owned.put(agentName, new Ownership(secret));
		if (ttlMillis > 0) {
			scheduleRenewal(TimeUnit.MILLISECONDS.toNanos(ttlMillis) / 3);
		}
	}

	/**
	 * The TTL the registry gave the entry, or 0 when it gave none or a value that is not
	 * a number.
	 */
	private static long entryTtlMillis(HttpResponse<CappedBody> response) {
		try {
			return response.headers().firstValueAsLong(MetadataRegistryHandler.ENTRY_TTL_HEADER).orElse(0);
		}
		catch (NumberFormatException ex) {
			logger.log(System.Logger.Level.WARNING, "The registry sent a " + MetadataRegistryHandler.ENTRY_TTL_HEADER
					+ " header that is not a number; the entry is not renewed");
			return 0;
		}
	}

	private void scheduleRenewal(long periodNanos) {
		synchronized (this.watchLock) {
			if (this.closing.getCount() == 0) {
				return;
			}
			ScheduledFuture<?> current = this.renewal;
			if (current != null && this.renewalPeriodNanos <= periodNanos) {
				return;
			}
			if (current != null) {
				current.cancel(false);
			}
			// a registry that asks for renewals more often than this does not get them
			long period = Math.max(periodNanos, MIN_RENEWAL_PERIOD_NANOS);
			this.renewalPeriodNanos = period;
			this.renewal = scheduler().scheduleWithFixedDelay(this::renewAll, period, period, TimeUnit.NANOSECONDS);
		}
	}

	private void renewAll() {
		List<String> names;
		synchronized (this.ownerLock) {
			names = List.copyOf(this.owned.keySet());
		}
		for (String agentName : names) {
			if (this.closing.getCount() == 0) {
				return;
			}
			try {
				renew(agentName);
			}
			catch (Throwable ex) {
				logger.log(System.Logger.Level.WARNING, "Renewing the registry entry of agent '" + agentName + "' at "
						+ this.baseUri + " failed unexpectedly; trying again in the next period", ex);
			}
		}
	}

	private void renew(String agentName) {
		synchronized (this.ownerLock) {
			Ownership ownership = this.owned.get(agentName);
			if (ownership == null || ownership.withdrawn) {
				return;
			}
			HttpRequest request = request(agentName, this.requestTimeout)
				.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownership.secret)
				.POST(HttpRequest.BodyPublishers.noBody())
				.build();
			String failure;
			try {
				int status = send(request, this.requestTimeout.toNanos()).statusCode();
				if (status == 200 || status == 204) {
					if (ownership.failing) {
						ownership.failing = false;
						logger.log(System.Logger.Level.INFO, "The registry entry of agent '" + agentName + "' at "
								+ this.baseUri + " is renewed again");
					}
					return;
				}
				if (status == 404 || status == 403) {
					this.owned.remove(agentName);
					logger.log(System.Logger.Level.WARNING, "The registry at " + this.baseUri
							+ " no longer holds the entry of agent '" + agentName + "' (HTTP " + status
							+ "): it expired or the registry restarted; it is renewed no more until it is published again");
					return;
				}
				failure = "HTTP " + status;
			}
			catch (IOException ex) {
				failure = describe(ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			if (!ownership.failing) {
				ownership.failing = true;
				String cause = failure;
				logger.log(System.Logger.Level.WARNING,
						() -> "Could not renew the registry entry of agent '" + agentName + "' at " + this.baseUri
								+ " (" + cause + "); trying again every " + Duration.ofNanos(this.renewalPeriodNanos));
			}
		}
	}

	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		String operation = "fetch_remote_md";
		requireUsable(operation, agentName);
		byte[] value = awaitBody(operation, agentName, AgentPaths.metadataPath(this.base, agentName), this.maxBytes,
				timeout, "metadata of agent '" + agentName + "'");
		return MetadataValues.check(operation, agentName, value, this.maxBytes);
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
		requireUsable(operation, agentName);
		MetadataExchange.requireDocumentKind(kind);
		if (document.length > MAX_DOCUMENT_BYTES) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, agentName, null, "the document '" + kind
					+ "' is " + document.length + " bytes, over the limit of " + MAX_DOCUMENT_BYTES + " bytes");
		}
		synchronized (this.ownerLock) {
			Ownership ownership = this.owned.get(agentName);
			HttpRequest.Builder builder = requestTo(AgentPaths.documentPath(this.base, agentName, kind),
					this.requestTimeout)
				.header("Content-Type", OCTET_STREAM);
			if (ownership != null) {
				builder.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownership.secret);
			}
			HttpRequest request = builder.PUT(HttpRequest.BodyPublishers.ofByteArray(document)).build();
			HttpResponse<CappedBody> response = sendOrUnavailable(operation, agentName, request);
			int status = response.statusCode();
			switch (status) {
				case 200, 201, 204 -> {
				}
				case 403 -> throw notOwner(operation, agentName, response);
				case 409 -> throw new NixlException(NixlStatus.ERROR_INVALID_STATE, operation, agentName, null,
						"the exchange at " + this.baseUri + " holds no metadata entry of agent '" + agentName
								+ "' (HTTP 409: " + reason(response) + "); publish the metadata before its documents");
				case 507 -> throw new NixlException(NixlStatus.UNAVAILABLE, operation, agentName, null,
						"the exchange at " + this.baseUri + " is full (HTTP 507: " + reason(response) + ")", null,
						true);
				case 429 -> throw overQuota(operation, agentName, response);
				case 413,
						400 ->
					throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, agentName, null,
							"the exchange at " + this.baseUri + " refused the document '" + kind + "' (HTTP " + status
									+ ": " + reason(response) + ")");
				default -> throw unexpected(operation, agentName, status);
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
		requireUsable(operation, agentName);
		MetadataExchange.requireDocumentKind(kind);
		return awaitBody(operation, agentName, AgentPaths.documentPath(this.base, agentName, kind), MAX_DOCUMENT_BYTES,
				timeout, "document '" + kind + "' of agent '" + agentName + "'");
	}

	/**
	 * GETs a path until it answers 200 or the deadline passes, and returns the body, at
	 * most {@code cap} bytes.
	 */
	private byte[] awaitBody(String operation, String agentName, String path, int cap, Duration timeout, String what) {
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
		requireUsable(operation, agentName);
		synchronized (this.ownerLock) {
			Ownership ownership = this.owned.get(agentName);
			HttpRequest.Builder builder = request(agentName, this.requestTimeout);
			if (ownership != null) {
				ownership.withdrawn = true;
				builder.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownership.secret);
			}
			HttpResponse<CappedBody> response = sendOrUnavailable(operation, agentName, builder.DELETE().build());
			int status = response.statusCode();
			if (status == 403) {
				throw notOwner(operation, agentName, response);
			}
			if (status != 200 && status != 204 && status != 404) {
				throw unexpected(operation, agentName, status);
			}
			this.owned.remove(agentName);
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
		requireUsable("watch", agentName);
		return addWatch(agentName, onRemoved, probe(agentName) == 200);
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
		return addWatch(remoteAgent, gone -> {
			if (agent.isOpen() && agent.remoteAgents().contains(gone)) {
				agent.invalidateRemoteMetadata(gone);
			}
		}, true);
	}

	private Watch addWatch(String agentName, Consumer<String> onRemoved, boolean seen) {
		requireUsable("watch", agentName);
		HttpWatch watch = new HttpWatch(agentName, onRemoved, seen);
		synchronized (this.watchLock) {
			requireUsable("watch", agentName);
			if (this.polling == null) {
				long interval = this.pollInterval.toNanos();
				this.polling = scheduler().scheduleWithFixedDelay(this::pollWatches, interval, interval,
						TimeUnit.NANOSECONDS);
			}
			this.watches.computeIfAbsent(agentName, name -> new ArrayList<>()).add(watch);
		}
		return watch;
	}

	/**
	 * The thread of the watches and renewals, started on first use. Called with the watch
	 * lock held.
	 */
	private ScheduledExecutorService scheduler() {
		ScheduledExecutorService current = this.scheduler;
		if (current == null) {
			current = Executors.newSingleThreadScheduledExecutor(runnable -> {
				Thread thread = new Thread(runnable, "nixl4j-http-exchange-watch");
				thread.setDaemon(true);
				return thread;
			});
			this.scheduler = current;
		}
		return current;
	}

	private void pollWatches() {
		Map<String, List<HttpWatch>> snapshot = new LinkedHashMap<>();
		synchronized (this.watchLock) {
			this.watches.forEach((name, list) -> snapshot.put(name, List.copyOf(list)));
		}
		for (Map.Entry<String, List<HttpWatch>> entry : snapshot.entrySet()) {
			if (this.closing.getCount() == 0) {
				return;
			}
			String agentName = entry.getKey();
			try {
				int status = probe(agentName);
				if (status == 200) {
					entry.getValue().forEach(HttpWatch::markSeen);
				}
				else if (status == 404) {
					for (HttpWatch watch : entry.getValue()) {
						watch.fireIfSeen();
					}
				}
			}
			catch (Throwable ex) {
				// the poller is a periodic task, which would stop for good on the first
				// throw
				this.internalErrors.incrementAndGet();
				logger.log(System.Logger.Level.ERROR,
						"Watch of agent '" + agentName + "' failed in this pass; the watch thread goes on", ex);
			}
		}
	}

	/**
	 * Returns how many times the watch thread's work for one watched peer, or a watcher's
	 * {@code onRemoved}, threw and the thread went on. Each was logged once, with the
	 * peer's name.
	 * @return the count
	 */
	public long internalErrors() {
		return this.internalErrors.get();
	}

	private int probe(String agentName) {
		HttpRequest request = request(agentName, this.requestTimeout).GET().build();
		try {
			return send(request, this.requestTimeout.toNanos()).statusCode();
		}
		catch (IOException ex) {
			logger.log(System.Logger.Level.DEBUG,
					() -> "Watch of agent '" + agentName + "' could not reach the exchange: " + describe(ex));
			return -1;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return -1;
		}
	}

	private void removeWatch(HttpWatch watch) {
		synchronized (this.watchLock) {
			List<HttpWatch> list = this.watches.get(watch.agentName);
			if (list != null) {
				list.remove(watch);
				if (list.isEmpty()) {
					this.watches.remove(watch.agentName);
				}
			}
		}
	}

	/**
	 * Closes the exchange: stops the watches (without telling them), the renewals and the
	 * HTTP client. Fetches waiting for a retry fail with {@link NixlStatus#CLOSED}.
	 * Published metadata stays on the server until it expires there, no longer renewed.
	 */
	@Override
	public void close() {
		ScheduledExecutorService scheduler;
		synchronized (this.watchLock) {
			if (this.closing.getCount() == 0) {
				return;
			}
			this.closing.countDown();
			this.watches.clear();
			scheduler = this.scheduler;
			this.scheduler = null;
			this.polling = null;
			this.renewal = null;
		}
		try {
			if (scheduler != null) {
				scheduler.shutdownNow();
				scheduler.awaitTermination(this.requestTimeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
			}
			this.client.shutdownNow();
			this.client.awaitTermination(this.requestTimeout.plusSeconds(1));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public String toString() {
		return "HttpMetadataExchange[" + this.baseUri + "]";
	}

	private HttpRequest.Builder request(String agentName, Duration timeout) {
		return requestTo(AgentPaths.metadataPath(this.base, agentName), timeout);
	}

	private HttpRequest.Builder requestTo(String path, Duration timeout) {
		return HttpRequest.newBuilder(URI.create(path)).timeout(timeout).header("Authorization", this.authorization);
	}

	private HttpResponse<CappedBody> send(HttpRequest request, long timeoutNanos)
			throws IOException, InterruptedException {
		return send(request, timeoutNanos, this.maxBytes);
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
			while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
				cause = cause.getCause();
			}
			if (cause instanceof IOException io) {
				throw io;
			}
			throw new IOException("the request failed", cause);
		}
	}

	private HttpResponse<CappedBody> sendOrUnavailable(String operation, String agentName, HttpRequest request) {
		try {
			HttpResponse<CappedBody> response = send(request, this.requestTimeout.toNanos());
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

	private NixlException tokenRefused(String operation, String agentName, int status) {
		return new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, agentName,
				"the exchange at " + this.baseUri + " refused the bearer token (HTTP " + status
						+ "); configure the token the server expects");
	}

	private NixlException notOwner(String operation, String agentName, HttpResponse<CappedBody> response) {
		return new NixlException(NixlStatus.BUSY, operation, null, agentName,
				"the exchange at " + this.baseUri + " refused the change: the entry of agent '" + agentName
						+ "' belongs to another owner (HTTP 403: " + reason(response)
						+ "); a restarted agent gets its name back once its old entry expires");
	}

	private NixlException overQuota(String operation, String agentName, HttpResponse<CappedBody> response) {
		return new NixlException(
				NixlStatus.UNAVAILABLE, operation, null, agentName, "the exchange at " + this.baseUri
						+ " refused the entry: this client's quota is used up (HTTP 429: " + reason(response) + ")",
				null, true);
	}

	/** The plain-text reason of a refusal, for messages; never a metadata body. */
	private static String reason(HttpResponse<CappedBody> response) {
		CappedBody body = response.body();
		if (body.oversize() || body.bytes().length == 0) {
			return "no reason given";
		}
		String text = new String(body.bytes(), java.nio.charset.StandardCharsets.UTF_8);
		StringBuilder printable = new StringBuilder(Math.min(text.length(), 300));
		for (int i = 0; i < text.length() && printable.length() < 300; i++) {
			char c = text.charAt(i);
			printable.append((c >= 0x20 && c < 0x7F) ? c : '?');
		}
		return printable.toString();
	}

	private NixlException unexpected(String operation, String agentName, int status) {
		return new NixlException(NixlStatus.UNAVAILABLE, operation, null, agentName,
				"the exchange at " + this.baseUri + " answered HTTP " + status, null, status >= 500);
	}

	private static NixlException interrupted(String operation, String agentName) {
		Thread.currentThread().interrupt();
		return new NixlException(NixlStatus.CANCELLED, operation, null, agentName, "interrupted");
	}

	private void requireUsable(String operation, String agentName) {
		if (agentName.isEmpty()) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, null, null, "the agent name is empty");
		}
		if (this.closing.getCount() == 0) {
			throw new NixlException(NixlStatus.CLOSED, operation, null, agentName, "the exchange is closed");
		}
	}

	private static boolean timedOut(IOException ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause instanceof HttpTimeoutException) {
				return true;
			}
		}
		return false;
	}

	private static String describe(IOException ex) {
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

	/**
	 * This exchange's hold on one entry: its owner secret, whether renewing it fails now,
	 * and whether a withdrawal of it was asked for (then it is renewed no more).
	 */
	private static final class Ownership {

		private final String secret;

		private boolean failing;

		private boolean withdrawn;

		Ownership(String secret) {
			this.secret = secret;
		}

		@Override
		public String toString() {
			return "Ownership[secret hidden]";
		}

	}

	private final class HttpWatch extends OnceWatch {

		private volatile boolean seen;

		HttpWatch(String agentName, Consumer<String> onRemoved, boolean seen) {
			super(agentName, onRemoved, HttpMetadataExchange.this.internalErrors);
			this.seen = seen;
		}

		void markSeen() {
			this.seen = true;
		}

		void fireIfSeen() {
			if (this.seen) {
				fire();
			}
		}

		@Override
		void forget() {
			removeWatch(this);
		}

	}

	/**
	 * Builds an {@link HttpMetadataExchange}.
	 */
	public static final class Builder {

		private final URI baseUri;

		private @Nullable String token;

		private Duration requestTimeout = DEFAULT_REQUEST_TIMEOUT;

		private Duration pollInterval = Duration.ofSeconds(1);

		private Duration maxRetryInterval = Duration.ofSeconds(1);

		private int maxBytes = MetadataValues.DEFAULT_MAX_BYTES;

		private @Nullable SSLContext sslContext;

		private @Nullable SSLParameters sslParameters;

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
		 * Sets how long one request may take, connection included (default 5 s).
		 * @param requestTimeout the timeout
		 * @return this builder
		 */
		public Builder requestTimeout(Duration requestTimeout) {
			this.requestTimeout = SettingChecks.requirePositive(requestTimeout, "requestTimeout");
			return this;
		}

		/**
		 * Sets how often watches poll their peers (default 1 s).
		 * @param pollInterval the interval
		 * @return this builder
		 */
		public Builder pollInterval(Duration pollInterval) {
			this.pollInterval = SettingChecks.requirePositive(pollInterval, "pollInterval");
			return this;
		}

		/**
		 * Sets the longest pause between two attempts of a fetch (default 1 s).
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
