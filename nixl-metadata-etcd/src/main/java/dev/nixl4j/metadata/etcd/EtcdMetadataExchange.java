package dev.nixl4j.metadata.etcd;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.SettingChecks;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.common.exception.EtcdException;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import org.jspecify.annotations.Nullable;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataValues;

/**
 * A {@link MetadataExchange} in etcd, through jetcd, with NIXL's own key layout, so that
 * Java agents and C++/Python agents using NIXL's built-in etcd exchange find each other.
 *
 * <p>
 * Keys are made as NIXL 1.5.1 makes them: an agent's metadata is the raw bytes of
 * {@code get_local_md} under {@code <namespace>/<agent>/metadata}, beside an empty anchor
 * key {@code <namespace>/<agent>/} that NIXL's own watchers watch. NIXL joins namespace
 * and agent with a {@code '/'} even when the namespace ends with one, and its default
 * namespace is {@value #DEFAULT_NAMESPACE}, so with the defaults on both sides the key is
 * {@code /nixl/agents//<agent>/metadata}. {@link #invalidate} deletes every key under
 * {@code <namespace>/<agent>/}, as NIXL's {@code invalidate_local_md} does.
 *
 * <p>
 * Documents ({@link #publishDocument}) are stored under
 * {@code <namespace>/<agent>/nixl4j-<kind>} ({@link #documentKey}), a key NIXL never
 * reads, under the same lease as the metadata; {@link #invalidate} removes them with the
 * metadata, a lapsed lease with it too, and a new lease gets them back with it.
 *
 * <p>
 * Unlike NIXL's, the keys this exchange publishes are lease-backed: publishing grants a
 * lease (its TTL is {@link Builder#leaseTtl}) that is kept alive while the exchange is
 * open, so the metadata of a process that died disappears when the lease runs out, and
 * its watchers hear of it. {@link #close()} revokes the lease. When etcd was unreachable
 * long enough for the lease to be lost, or lost its data, the exchange grants a new lease
 * and puts its keys back once etcd answers again.
 *
 * <p>
 * Every call is bounded: an unreachable etcd gives {@link NixlStatus#UNAVAILABLE} (naming
 * the endpoints and the cause) within the {@link Builder#operationTimeout operation
 * timeout}, or within the caller's deadline for {@link #fetch}; a fetch with a zero
 * timeout makes one read, within the operation timeout. Metadata values are secrets: they
 * never appear in logs or messages.
 *
 * <p>
 * etcd's authentication is supported: a user name and password
 * ({@link Builder#credentials(String, String)}), sent by jetcd to get a token before the
 * first call, and TLS with the client's own certificate
 * ({@link Builder#tls(KeyManagerFactory, TrustManagerFactory)}) for {@code https}
 * endpoints. Credentials etcd refuses, and calls the user's roles do not permit, fail at
 * once with {@link NixlStatus#ERROR_INVALID_PARAM} naming the cause; they are not
 * retried. The password is never logged or shown.
 *
 * <p>
 * This class needs {@code io.etcd:jetcd-core} on the class path (an optional dependency
 * of nixl4j); nothing else in nixl4j refers to it.
 */
public final class EtcdMetadataExchange implements MetadataExchange {

	/** NIXL's default namespace ({@code NIXL_ETCD_NAMESPACE} unset), as in NIXL 1.5.1. */
	public static final String DEFAULT_NAMESPACE = "/nixl/agents/";

	/**
	 * The endpoint used unless {@linkplain Builder#endpoints(String...) others are set}.
	 */
	public static final String DEFAULT_ENDPOINT = "http://127.0.0.1:2379";

	/** The default {@linkplain Builder#leaseTtl(Duration) lease TTL}. */
	public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(10);

	/** The default {@linkplain Builder#operationTimeout(Duration) operation timeout}. */
	public static final Duration DEFAULT_OPERATION_TIMEOUT = Duration.ofSeconds(5);

	/** The label of an agent's full metadata, the last part of its key. */
	public static final String METADATA_LABEL = "metadata";

	/**
	 * What the last part of a document's key starts with, before its kind: a label NIXL
	 * never uses.
	 */
	public static final String DOCUMENT_LABEL_PREFIX = "nixl4j-";

	private static final System.Logger logger = System.getLogger(EtcdMetadataExchange.class.getName());

	private static final ByteSequence EMPTY = ByteSequence.from(new byte[0]);

	private static final long MIN_PAUSE = TimeUnit.MILLISECONDS.toNanos(20);

	private static final long MAX_PAUSE = TimeUnit.MILLISECONDS.toNanos(500);

	private final List<URI> endpoints;

	private final String namespace;

	private final Duration leaseTtl;

	private final Duration operationTimeout;

	private final int maxValueBytes;

	private final Client client;

	private final ScheduledExecutorService keeper;

	/**
	 * Guards the lease and the published keys, so a republish never races an invalidate.
	 */
	private final Object publishLock = new Object();

	private long leaseId;

	private final Map<String, byte[]> published = new ConcurrentHashMap<>();

	/**
	 * Documents by agent and kind, put back with the metadata; guarded by the publish
	 * lock.
	 */
	private final Map<String, Map<String, byte[]>> publishedDocuments = new ConcurrentHashMap<>();

	private final Map<String, Long> fetchedRevisions = new ConcurrentHashMap<>();

	private final Set<EtcdWatch> watches = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean unreachableLogged = new AtomicBoolean();

	private final AtomicLong internalErrors = new AtomicLong();

	private final boolean authenticated;

	private volatile boolean closed;

	private EtcdMetadataExchange(Builder builder) {
		this.endpoints = List.copyOf(builder.endpoints);
		this.namespace = builder.namespace;
		this.leaseTtl = builder.leaseTtl;
		this.operationTimeout = builder.operationTimeout;
		this.maxValueBytes = builder.maxValueBytes;
		this.authenticated = builder.user != null;
		io.etcd.jetcd.ClientBuilder client = Client.builder()
			.endpoints(this.endpoints.toArray(URI[]::new))
			.connectTimeout(this.operationTimeout)
			// fail fast while disconnected: every call here has its own deadline and
			// retries itself
			.waitForReady(false)
			.retryMaxDuration(this.operationTimeout);
		if (builder.user != null && builder.password != null) {
			client.user(ByteSequence.from(builder.user, java.nio.charset.StandardCharsets.UTF_8))
				.password(ByteSequence.from(builder.password, java.nio.charset.StandardCharsets.UTF_8));
		}
		TrustManagerFactory trust = builder.trustManagers;
		if (trust != null) {
			KeyManagerFactory keys = builder.keyManagers;
			try {
				client.sslContext(ssl -> {
					ssl.trustManager(trust);
					if (keys != null) {
						ssl.keyManager(keys);
					}
				});
			}
			catch (SSLException ex) {
				throw new IllegalArgumentException("the TLS material for etcd cannot be used: " + ex.getMessage(), ex);
			}
			// jetcd's resolver gives the channel no authority of its own, and TLS
			// verifies the
			// server's certificate against it: the first endpoint's host names the
			// cluster
			client.authority(this.endpoints.get(0).getAuthority());
		}
		this.client = client.build();
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
			Thread thread = new Thread(runnable, "nixl4j-etcd-exchange");
			thread.setDaemon(true);
			return thread;
		});
		executor.setRemoveOnCancelPolicy(true);
		this.keeper = executor;
		long period = Math.max(this.leaseTtl.toMillis() / 3, 100);
		this.keeper.scheduleWithFixedDelay(this::keepAlive, period, period, TimeUnit.MILLISECONDS);
	}

	/**
	 * Starts a builder.
	 * @return a builder with the defaults: {@code http://127.0.0.1:2379}, NIXL's default
	 * namespace, a 10 s lease, a 5 s operation timeout,
	 * {@link MetadataValues#DEFAULT_MAX_BYTES}
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns the key an agent's metadata is stored under.
	 * @param agentName the agent
	 * @return {@code <namespace>/<agent>/metadata}
	 */
	public String key(String agentName) {
		return agentPrefix(agentName) + METADATA_LABEL;
	}

	/**
	 * Returns the key an agent's document of a kind is stored under.
	 * @param agentName the agent
	 * @param kind the document's kind
	 * @return {@code <namespace>/<agent>/nixl4j-<kind>}
	 */
	public String documentKey(String agentName, String kind) {
		return agentPrefix(agentName) + DOCUMENT_LABEL_PREFIX + kind;
	}

	private String agentPrefix(String agentName) {
		return this.namespace + "/" + agentName + "/";
	}

	/**
	 * Returns the etcd endpoints.
	 * @return the endpoints
	 */
	public List<URI> endpoints() {
		return this.endpoints;
	}

	@Override
	public void publish(String agentName, AgentMetadata metadata) {
		String operation = "send_local_md";
		ensureOpen(operation);
		requireName(agentName);
		byte[] value = metadata.toByteArray();
		if (value.length > this.maxValueBytes) {
			throw new NixlException(NixlStatus.INVALID_METADATA, operation, agentName, null,
					"the metadata is " + value.length + " bytes, over the limit of " + this.maxValueBytes + " bytes");
		}
		synchronized (this.publishLock) {
			put(agentName, value, deadline(this.operationTimeout));
			this.published.put(agentName, value);
		}
	}

	@Override
	public void publishDocument(String agentName, String kind, byte[] document) {
		String operation = "publish_document";
		ensureOpen(operation);
		requireName(agentName);
		MetadataExchange.requireDocumentKind(kind);
		if (document.length > MAX_DOCUMENT_BYTES) {
			throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, agentName, null, "the document '" + kind
					+ "' is " + document.length + " bytes, over the limit of " + MAX_DOCUMENT_BYTES + " bytes");
		}
		byte[] copy = document.clone();
		synchronized (this.publishLock) {
			byte[] metadata = this.published.get(agentName);
			if (metadata == null) {
				throw new NixlException(NixlStatus.ERROR_INVALID_STATE, operation, agentName, null,
						"the metadata of agent '" + agentName
								+ "' is not published through this exchange; publish it before its documents");
			}
			Map<String, byte[]> kinds = this.publishedDocuments.computeIfAbsent(agentName,
					name -> new ConcurrentHashMap<>());
			byte[] previous = kinds.put(kind, copy);
			long deadline = deadline(this.operationTimeout);
			long lease = lease(deadline, agentName);
			try {
				try {
					awaitReachable(
							() -> this.client.getKVClient()
								.put(bytes(documentKey(agentName, kind)), ByteSequence.from(copy),
										PutOption.builder().withLeaseId(lease).build()),
							deadline, operation, agentName);
				}
				catch (LeaseLost ex) {
					// the metadata went with the lease: both go back under a new one
					forgetLease(lease);
					put(agentName, metadata, deadline);
				}
			}
			catch (RuntimeException ex) {
				if (previous != null) {
					kinds.put(kind, previous);
				}
				else {
					kinds.remove(kind);
				}
				throw ex;
			}
		}
	}

	/**
	 * Puts the anchor, the metadata key and the agent's documents under the lease,
	 * granting a new one when it was lost.
	 */
	private void put(String agentName, byte[] value, long deadline) {
		Map<String, byte[]> documents = this.publishedDocuments.getOrDefault(agentName, Map.of());
		for (int attempt = 0;; attempt++) {
			long lease = lease(deadline, agentName);
			PutOption withLease = PutOption.builder().withLeaseId(lease).build();
			List<Op> puts = new ArrayList<>();
			puts.add(Op.put(bytes(agentPrefix(agentName)), EMPTY, withLease));
			puts.add(Op.put(bytes(key(agentName)), ByteSequence.from(value), withLease));
			documents.forEach((kind, document) -> puts
				.add(Op.put(bytes(documentKey(agentName, kind)), ByteSequence.from(document), withLease)));
			try {
				awaitReachable(() -> this.client.getKVClient().txn().Then(puts.toArray(Op[]::new)).commit(), deadline,
						"send_local_md", agentName);
				return;
			}
			catch (LeaseLost ex) {
				forgetLease(lease);
				if (attempt > 0) {
					throw unavailable("send_local_md", agentName, null, "etcd lost the lease just granted",
							ex.getCause());
				}
			}
		}
	}

	private long lease(long deadline, String agentName) {
		if (this.leaseId == 0) {
			long seconds = Math.max(1, (this.leaseTtl.toMillis() + 999) / 1000);
			this.leaseId = awaitReachable(() -> this.client.getLeaseClient().grant(seconds), deadline, "send_local_md",
					agentName)
				.getID();
		}
		return this.leaseId;
	}

	private void forgetLease(long lease) {
		if (this.leaseId == lease) {
			this.leaseId = 0;
		}
	}

	/**
	 * Keeps the lease alive; when it was lost, grants a new one and puts every published
	 * key back. Runs on the exchange's own thread.
	 */
	private void keepAlive() {
		synchronized (this.publishLock) {
			if (this.closed || this.published.isEmpty()) {
				return;
			}
			long deadline = deadline(this.operationTimeout);
			try {
				long lease = this.leaseId;
				if (lease != 0) {
					try {
						LeaseKeepAliveResponse response = await(this.client.getLeaseClient().keepAliveOnce(lease),
								deadline, "keep_alive", null, null);
						if (response.getTTL() > 0) {
							reachable();
							return;
						}
					}
					catch (LeaseLost ex) {
						// fall through: grant a new lease
					}
					forgetLease(lease);
				}
				for (Map.Entry<String, byte[]> entry : this.published.entrySet()) {
					put(entry.getKey(), entry.getValue(), deadline);
				}
				logger.log(System.Logger.Level.INFO,
						"etcd lease was lost; published the metadata of {0} again under a new lease",
						this.published.keySet());
				reachable();
			}
			catch (NixlException ex) {
				if (this.unreachableLogged.compareAndSet(false, true)) {
					logger.log(System.Logger.Level.WARNING, "etcd exchange cannot keep its lease alive, retrying: {0}",
							ex.getMessage());
				}
			}
			catch (Throwable ex) {
				// a periodic task stops for good on the first throw: the lease would run
				// out
				survived("keeping the lease alive", ex);
			}
		}
	}

	/**
	 * Logs and counts what one unit of work of the exchange's thread threw; the thread
	 * goes on.
	 */
	private void survived(String unit, Throwable error) {
		long count = this.internalErrors.incrementAndGet();
		logger.log(System.Logger.Level.ERROR,
				"etcd exchange: " + unit + " threw; its thread goes on (errors so far: " + count + ")", error);
	}

	/**
	 * Returns how many times one unit of work of the exchange's thread (keeping the lease
	 * alive, restarting a watch, telling a watcher) threw unexpectedly and the thread
	 * went on. Each was logged once, with its context.
	 * @return the count
	 */
	public long internalErrors() {
		return this.internalErrors.get();
	}

	private void reachable() {
		if (this.unreachableLogged.compareAndSet(true, false)) {
			logger.log(System.Logger.Level.INFO, "etcd at {0} answers again", this.endpoints);
		}
	}

	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		String operation = "fetch_remote_md";
		ensureOpen(operation);
		requireName(agentName);
		Found found = awaitValue(operation, agentName, key(agentName), timeout, false,
				"metadata of agent '" + agentName + "'");
		AgentMetadata metadata = MetadataValues.check(operation, agentName, found.value(), this.maxValueBytes);
		this.fetchedRevisions.put(agentName, found.revision());
		return metadata;
	}

	@Override
	public byte[] fetchDocument(String agentName, String kind, Duration timeout) {
		String operation = "fetch_document";
		ensureOpen(operation);
		requireName(agentName);
		MetadataExchange.requireDocumentKind(kind);
		String what = "document '" + kind + "' of agent '" + agentName + "'";
		byte[] document = awaitValue(operation, agentName, documentKey(agentName, kind), timeout, true, what).value();
		if (document.length > MAX_DOCUMENT_BYTES) {
			throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, agentName, "the " + what + " is "
					+ document.length + " bytes, over the limit of " + MAX_DOCUMENT_BYTES + " bytes");
		}
		return document;
	}

	/** A value read from etcd and the store's revision when it was read. */
	private record Found(byte[] value, long revision) {
	}

	/**
	 * Reads a key until it holds a value or the deadline passes, watching it meanwhile.
	 * {@code emptyAllowed}: whether an empty value counts as present (never for metadata:
	 * NIXL treats it as absent).
	 */
	private Found awaitValue(String operation, String agentName, String keyName, Duration timeout, boolean emptyAllowed,
			String what) {
		long deadline = deadline(timeout);
		// A zero timeout makes one read, as with the http exchange: it gets the operation
		// timeout, since no read could answer within a deadline that has passed already.
		boolean once = timeout.isZero() || timeout.isNegative();
		ByteSequence key = bytes(keyName);
		Semaphore changed = new Semaphore(0);
		io.etcd.jetcd.Watch.@Nullable Watcher watcher = null;
		NixlException unreachable = null;
		long pause = MIN_PAUSE;
		try {
			while (true) {
				try {
					long callDeadline = once ? deadline(this.operationTimeout)
							: Math.min(deadline, deadline(this.operationTimeout));
					GetResponse response = await(this.client.getKVClient().get(key), callDeadline, operation, null,
							agentName);
					unreachable = null;
					List<KeyValue> kvs = response.getKvs();
					if (!kvs.isEmpty() && (emptyAllowed || !kvs.get(0).getValue().isEmpty())) {
						return new Found(kvs.get(0).getValue().getBytes(), response.getHeader().getRevision());
					}
					if (watcher == null) {
						WatchOption from = WatchOption.builder()
							.withRevision(response.getHeader().getRevision() + 1)
							.withNoDelete(true)
							.build();
						watcher = this.client.getWatchClient()
							.watch(key, from, io.etcd.jetcd.Watch.listener(event -> changed.release(),
									error -> changed.release()));
					}
				}
				catch (NixlException ex) {
					if (ex.status() != NixlStatus.UNAVAILABLE) {
						throw ex;
					}
					// a read cut short by the caller's own deadline says nothing about
					// etcd
					if (ex.getCause() != null || once || deadline - System.nanoTime() > 0) {
						unreachable = ex;
					}
				}
				catch (LeaseLost ex) {
					throw unavailable(operation, null, agentName, "unexpected answer from etcd", ex.getCause());
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					if (unreachable != null) {
						throw new NixlException(NixlStatus.UNAVAILABLE, operation, null, agentName,
								"etcd at " + this.endpoints + " could not be reached within " + timeout
										+ " to fetch the " + what + ": " + rootMessage(unreachable),
								unreachable);
					}
					throw new NixlException(NixlStatus.TIMEOUT, operation, null, agentName,
							"the " + what + " did not appear under " + keyName + " within " + timeout);
				}
				if (changed.tryAcquire(Math.min(remaining, pause), TimeUnit.NANOSECONDS)) {
					pause = MIN_PAUSE;
				}
				else {
					pause = Math.min(pause * 2, MAX_PAUSE);
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new NixlException(NixlStatus.CANCELLED, operation, null, agentName, "interrupted while waiting", ex);
		}
		finally {
			if (watcher != null) {
				watcher.close();
			}
		}
	}

	@Override
	public void invalidate(String agentName) {
		String operation = "invalidate_local_md";
		ensureOpen(operation);
		requireName(agentName);
		synchronized (this.publishLock) {
			this.published.remove(agentName);
			this.publishedDocuments.remove(agentName);
			try {
				await(this.client.getKVClient()
					.delete(bytes(agentPrefix(agentName)), DeleteOption.builder().isPrefix(true).build()),
						deadline(this.operationTimeout), operation, agentName, null);
			}
			catch (LeaseLost ex) {
				throw unavailable(operation, agentName, null, "unexpected answer from etcd", ex.getCause());
			}
		}
	}

	@Override
	public MetadataExchange.Watch watch(String agentName, Consumer<String> onRemoved) {
		ensureOpen("watch");
		requireName(agentName);
		Objects.requireNonNull(onRemoved, "onRemoved");
		Long fetched = this.fetchedRevisions.remove(agentName);
		EtcdWatch watch = new EtcdWatch(agentName, onRemoved);
		this.watches.add(watch);
		watch.start((fetched != null) ? fetched : currentRevision(agentName));
		return watch;
	}

	/**
	 * The store's revision now, so that a watch started after this call still sees a
	 * removal that happens before etcd has set the watch up; 0 (watch from whenever it is
	 * set up) when etcd cannot be asked.
	 */
	private long currentRevision(String agentName) {
		try {
			return await(this.client.getKVClient().get(bytes(key(agentName))), deadline(this.operationTimeout), "watch",
					null, agentName)
				.getHeader()
				.getRevision();
		}
		catch (RuntimeException ex) {
			return 0;
		}
	}

	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.keeper.shutdownNow();
		for (EtcdWatch watch : this.watches) {
			watch.close();
		}
		long lease;
		synchronized (this.publishLock) {
			lease = this.leaseId;
			this.leaseId = 0;
			this.published.clear();
			this.publishedDocuments.clear();
		}
		try {
			if (lease != 0) {
				await(this.client.getLeaseClient().revoke(lease), deadline(this.operationTimeout), "close", null, null);
			}
		}
		catch (NixlException | LeaseLost ex) {
			logger.log(System.Logger.Level.WARNING, "could not revoke the etcd lease; the keys expire with it: {0}",
					ex.getMessage());
		}
		finally {
			this.client.close();
		}
	}

	@Override
	public String toString() {
		return "etcd exchange " + this.endpoints + " namespace '" + this.namespace + "'";
	}

	private void ensureOpen(String operation) {
		if (this.closed) {
			throw new NixlException(NixlStatus.CLOSED, operation, null, null, "the etcd exchange was closed");
		}
	}

	private static void requireName(String agentName) {
		Objects.requireNonNull(agentName, "agentName");
		if (agentName.isBlank()) {
			throw new IllegalArgumentException("agent name must not be blank");
		}
	}

	private static long deadline(Duration timeout) {
		return System.nanoTime() + Math.max(0, timeout.toNanos());
	}

	private static ByteSequence bytes(String text) {
		return ByteSequence.from(text, java.nio.charset.StandardCharsets.UTF_8);
	}

	/**
	 * Makes a jetcd call and waits for it until the deadline, calling again while etcd
	 * cannot be reached yet: just after etcd came back, gRPC may still fail calls at once
	 * from its reconnect back-off, and the caller's deadline, not that back-off, decides
	 * when to give up.
	 */
	private <T> T awaitReachable(Supplier<CompletableFuture<T>> call, long deadline, String operation,
			@Nullable String agent) {
		long pause = MIN_PAUSE;
		while (true) {
			try {
				return await(call.get(), deadline, operation, agent, null);
			}
			catch (NixlException ex) {
				long left = deadline - System.nanoTime();
				if (ex.status() != NixlStatus.UNAVAILABLE || ex.getCause() == null
						|| io.grpc.Status.fromThrowable(ex.getCause()).getCode() != io.grpc.Status.Code.UNAVAILABLE
						|| left <= pause) {
					throw ex;
				}
				java.util.concurrent.locks.LockSupport.parkNanos(pause);
				if (Thread.interrupted()) {
					Thread.currentThread().interrupt();
					throw ex;
				}
				pause = Math.min(pause * 2, MAX_PAUSE);
			}
		}
	}

	/**
	 * Waits for a jetcd call until the deadline. A lost lease is told apart
	 * ({@link LeaseLost}) so that callers can grant a new one; everything else becomes
	 * {@link NixlStatus#UNAVAILABLE}.
	 */
	private <T> T await(CompletableFuture<T> future, long deadline, String operation, @Nullable String agent,
			@Nullable String remoteAgent) {
		try {
			return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw unavailable(operation, agent, remoteAgent, "no answer before the deadline", null);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (isLeaseNotFound(cause)) {
				throw new LeaseLost(cause);
			}
			if (isRefused(cause)) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, agent, remoteAgent,
						"etcd at " + this.endpoints + " refused the request: " + rootMessage(cause)
								+ (this.authenticated ? " (check the user name, password and the user's roles)"
										: " (if etcd has authentication enabled, configure a user name and password)"),
						cause);
			}
			throw unavailable(operation, agent, remoteAgent, rootMessage(cause), cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			future.cancel(true);
			throw new NixlException(NixlStatus.CANCELLED, operation, agent, remoteAgent,
					"interrupted while waiting for etcd", ex);
		}
	}

	/**
	 * Whether etcd refused the request rather than failed to answer it: missing or wrong
	 * credentials (etcd answers those as invalid arguments), a role without the
	 * permission, or another invalid request. Retrying cannot help then.
	 */
	private static boolean isRefused(Throwable error) {
		for (Throwable t = error; t != null; t = (t.getCause() != t) ? t.getCause() : null) {
			if (t instanceof EtcdException etcd) {
				io.etcd.jetcd.common.exception.ErrorCode code = etcd.getErrorCode();
				if (code == io.etcd.jetcd.common.exception.ErrorCode.PERMISSION_DENIED
						|| code == io.etcd.jetcd.common.exception.ErrorCode.UNAUTHENTICATED
						|| code == io.etcd.jetcd.common.exception.ErrorCode.INVALID_ARGUMENT) {
					return true;
				}
			}
			io.grpc.Status.Code code = io.grpc.Status.fromThrowable(t).getCode();
			if (code == io.grpc.Status.Code.PERMISSION_DENIED || code == io.grpc.Status.Code.UNAUTHENTICATED
					|| code == io.grpc.Status.Code.INVALID_ARGUMENT) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether etcd answered that a lease is not found: the only "not found" its KV and
	 * lease calls give (an absent key is an empty answer, not an error).
	 */
	private static boolean isLeaseNotFound(Throwable error) {
		for (Throwable t = error; t != null; t = (t.getCause() != t) ? t.getCause() : null) {
			if (t instanceof EtcdException etcd
					&& etcd.getErrorCode() == io.etcd.jetcd.common.exception.ErrorCode.NOT_FOUND) {
				return true;
			}
			if (io.grpc.Status.fromThrowable(t).getCode() == io.grpc.Status.Code.NOT_FOUND) {
				return true;
			}
		}
		return false;
	}

	private NixlException unavailable(String operation, @Nullable String agent, @Nullable String remoteAgent,
			String reason, @Nullable Throwable cause) {
		return new NixlException(NixlStatus.UNAVAILABLE, operation, agent, remoteAgent,
				"etcd at " + this.endpoints + " could not be reached: " + reason, cause);
	}

	private static String rootMessage(Throwable error) {
		Throwable root = error;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		String message = (error instanceof EtcdException etcd) ? etcd.getErrorCode() + " " + etcd.getMessage()
				: error.getMessage();
		if (root != error && root.getMessage() != null && (message == null || !message.contains(root.getMessage()))) {
			message = ((message != null) ? message + ": " : "") + root.getClass().getSimpleName() + " "
					+ root.getMessage();
		}
		return (message != null) ? message : error.getClass().getName();
	}

	/** etcd answered that the lease is gone (expired, revoked, or etcd lost its data). */
	private static final class LeaseLost extends RuntimeException {

		private static final long serialVersionUID = 1L;

		LeaseLost(Throwable cause) {
			super("etcd lease not found", cause, false, false);
		}

	}

	/**
	 * A watch of one peer's metadata key. jetcd resumes a watch after a disconnect by
	 * itself; when it gives up instead, the key is read again and the watch started over.
	 */
	private final class EtcdWatch implements MetadataExchange.Watch {

		private final String agentName;

		private final ByteSequence key;

		private final Consumer<String> onRemoved;

		private final AtomicBoolean done = new AtomicBoolean();

		private volatile io.etcd.jetcd.Watch.@Nullable Watcher watcher;

		private long retryPause = MIN_PAUSE;

		EtcdWatch(String agentName, Consumer<String> onRemoved) {
			this.agentName = agentName;
			this.key = bytes(key(agentName));
			this.onRemoved = onRemoved;
		}

		/**
		 * Watches for removals after the given store revision (0: from whenever etcd sets
		 * the watch up).
		 */
		void start(long revision) {
			WatchOption.Builder option = WatchOption.builder().withNoPut(true);
			if (revision > 0) {
				option.withRevision(revision + 1);
			}
			this.watcher = EtcdMetadataExchange.this.client.getWatchClient()
				.watch(this.key, option.build(), io.etcd.jetcd.Watch.listener(this::onNext, this::onError));
			if (this.done.get()) {
				stopWatcher();
			}
		}

		private void onNext(WatchResponse response) {
			for (WatchEvent event : response.getEvents()) {
				if (event.getEventType() == WatchEvent.EventType.DELETE) {
					removed();
					return;
				}
			}
		}

		private void onError(Throwable error) {
			if (this.done.get()) {
				return;
			}
			logger.log(System.Logger.Level.DEBUG, "etcd watch of agent ''{0}'' failed, starting it again: {1}",
					this.agentName, rootMessage(error));
			stopWatcher();
			schedule(this::restart);
		}

		/** Reads the key again: gone means removed; present means watch on from now. */
		private void restart() {
			if (this.done.get()) {
				return;
			}
			try {
				GetResponse response = EtcdMetadataExchange.this.await(
						EtcdMetadataExchange.this.client.getKVClient().get(this.key),
						deadline(EtcdMetadataExchange.this.operationTimeout), "watch", null, this.agentName);
				this.retryPause = MIN_PAUSE;
				if (response.getKvs().isEmpty()) {
					removed();
				}
				else {
					start(response.getHeader().getRevision());
				}
			}
			catch (RuntimeException ex) {
				this.retryPause = Math.min(this.retryPause * 2, MAX_PAUSE);
				schedule(this::restart);
			}
			catch (Error ex) {
				survived("restarting the watch of agent '" + this.agentName + "'", ex);
				this.retryPause = Math.min(this.retryPause * 2, MAX_PAUSE);
				schedule(this::restart);
			}
		}

		private void schedule(Runnable task) {
			try {
				EtcdMetadataExchange.this.keeper.schedule(task, this.retryPause, TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException ex) {
				// the exchange is closing
			}
		}

		private void removed() {
			if (!this.done.compareAndSet(false, true)) {
				return;
			}
			stopWatcher();
			EtcdMetadataExchange.this.watches.remove(this);
			try {
				// off jetcd's threads: the callback may call into NIXL
				EtcdMetadataExchange.this.keeper.execute(this::notifyRemoved);
			}
			catch (RejectedExecutionException ex) {
				// closed meanwhile: watches of a closed exchange report nothing
			}
		}

		private void notifyRemoved() {
			try {
				this.onRemoved.accept(this.agentName);
			}
			catch (Throwable ex) {
				survived("the handler of the removal of agent '" + this.agentName + "'", ex);
			}
		}

		private void stopWatcher() {
			io.etcd.jetcd.Watch.Watcher current = this.watcher;
			if (current != null) {
				this.watcher = null;
				current.close();
			}
		}

		@Override
		public void close() {
			this.done.set(true);
			stopWatcher();
			EtcdMetadataExchange.this.watches.remove(this);
		}

	}

	/**
	 * Builds an {@link EtcdMetadataExchange}.
	 */
	public static final class Builder {

		private final List<URI> endpoints = new ArrayList<>(List.of(URI.create(DEFAULT_ENDPOINT)));

		private String namespace = DEFAULT_NAMESPACE;

		private Duration leaseTtl = DEFAULT_LEASE_TTL;

		private Duration operationTimeout = DEFAULT_OPERATION_TIMEOUT;

		private int maxValueBytes = MetadataValues.DEFAULT_MAX_BYTES;

		private @Nullable String user;

		private @Nullable String password;

		private @Nullable KeyManagerFactory keyManagers;

		private @Nullable TrustManagerFactory trustManagers;

		private Builder() {
		}

		/**
		 * Authenticates to etcd as a user, for a cluster with authentication enabled.
		 * Over {@code http} endpoints the password travels in clear text: use
		 * {@code https} ones with {@link #tls} outside a trusted network.
		 * @param user the user name
		 * @param password the password; never logged
		 * @return this builder
		 * @throws IllegalArgumentException when the user name is blank or the password
		 * empty
		 */
		public Builder credentials(String user, String password) {
			if (user.isBlank()) {
				throw new IllegalArgumentException("the etcd user name must not be blank");
			}
			if (password.isEmpty()) {
				throw new IllegalArgumentException("the etcd password of user '" + user + "' must not be empty");
			}
			this.user = user;
			this.password = password;
			return this;
		}

		/**
		 * Sets the TLS material of {@code https} endpoints: the trust material decides
		 * which server certificates are accepted, the key material (if any) is the
		 * client's certificate, for a cluster started with {@code --client-cert-auth}.
		 * Every server's certificate is checked against the host of the first endpoint,
		 * so with several endpoints their certificates must all name that host (as one
		 * cluster certificate does).
		 * @param keyManagers the client's key material, or {@code null} for no client
		 * certificate
		 * @param trustManagers the trust material
		 * @return this builder
		 */
		public Builder tls(@Nullable KeyManagerFactory keyManagers, TrustManagerFactory trustManagers) {
			this.keyManagers = keyManagers;
			this.trustManagers = trustManagers;
			return this;
		}

		/**
		 * Sets the etcd endpoints, replacing the default {@code http://127.0.0.1:2379}.
		 * @param endpoints URLs such as {@code http://10.0.0.5:2379}
		 * @return this builder
		 */
		public Builder endpoints(String... endpoints) {
			if (endpoints.length == 0) {
				throw new IllegalArgumentException("at least one etcd endpoint is needed");
			}
			this.endpoints.clear();
			for (String endpoint : endpoints) {
				URI uri = URI.create(endpoint.strip());
				if (uri.getScheme() == null || uri.getHost() == null) {
					throw new IllegalArgumentException(
							"etcd endpoint '" + endpoint + "' is not a URL like http://host:2379");
				}
				this.endpoints.add(uri);
			}
			return this;
		}

		/**
		 * Sets the namespace, as NIXL's {@code NIXL_ETCD_NAMESPACE}: keys are
		 * {@code <namespace>/<agent>/metadata}. Agents that exchange metadata must use
		 * the same.
		 * @param namespace the namespace (default
		 * {@value EtcdMetadataExchange#DEFAULT_NAMESPACE})
		 * @return this builder
		 */
		public Builder namespace(String namespace) {
			if (namespace.isEmpty()) {
				throw new IllegalArgumentException("namespace must not be empty");
			}
			this.namespace = namespace;
			return this;
		}

		/**
		 * Sets the TTL of the lease behind published keys: how long the metadata of a
		 * process that died stays visible (whole seconds, rounded up).
		 * @param ttl the TTL (default 10 s)
		 * @return this builder
		 */
		public Builder leaseTtl(Duration ttl) {
			if (ttl.compareTo(Duration.ofSeconds(1)) < 0) {
				throw new IllegalArgumentException("lease TTL must be at least 1 s, was " + ttl);
			}
			this.leaseTtl = ttl;
			return this;
		}

		/**
		 * Sets how long one etcd call (publish, invalidate, one read of a fetch) may take
		 * before it fails with {@link NixlStatus#UNAVAILABLE}.
		 * @param timeout the timeout (default 5 s)
		 * @return this builder
		 */
		public Builder operationTimeout(Duration timeout) {
			this.operationTimeout = SettingChecks.requirePositive(timeout, "operationTimeout");
			return this;
		}

		/**
		 * Sets the largest metadata value accepted, published or fetched.
		 * @param maxValueBytes the cap (default {@link MetadataValues#DEFAULT_MAX_BYTES})
		 * @return this builder
		 */
		public Builder maxValueBytes(int maxValueBytes) {
			if (maxValueBytes < 1) {
				throw new IllegalArgumentException("maxValueBytes must be positive, was " + maxValueBytes);
			}
			this.maxValueBytes = maxValueBytes;
			return this;
		}

		/**
		 * Creates the exchange. It connects lazily: an unreachable etcd shows at the
		 * first call.
		 * @return the exchange
		 */
		public EtcdMetadataExchange build() {
			return new EtcdMetadataExchange(this);
		}

	}

}
