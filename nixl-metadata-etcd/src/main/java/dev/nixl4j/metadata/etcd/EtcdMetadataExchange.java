package dev.nixl4j.metadata.etcd;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.SettingChecks;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataValues;
import org.jspecify.annotations.Nullable;

/**
 * A {@link MetadataExchange} in etcd, through jetcd, with NIXL's own key layout, so that
 * Java agents and C++/Python agents using NIXL's built-in etcd exchange find each other.
 * The keys, the lease behind them and what happens after an outage are described once, in
 * "Metadata exchange in etcd" in {@code docs/architecture.md}.
 *
 * <p>
 * An agent's metadata is stored under {@link #key} ({@code <namespace>/<agent>/metadata},
 * NIXL's default namespace being {@value #DEFAULT_NAMESPACE}), its documents
 * ({@link #publishDocument}) under {@link #documentKey}, a key NIXL never reads. Unlike
 * NIXL's, the keys this exchange publishes are lease-backed (its TTL is
 * {@link Builder#leaseTtl}), kept alive while the exchange is open and revoked by
 * {@link #close()}, so the metadata of a process that died disappears and its watchers
 * hear of it.
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

	private final int maxValueBytes;

	private final EtcdKeys keys;

	private final EtcdConnection connection;

	private final EtcdExchangeThread thread;

	private final EtcdLeasedPublication publication;

	private final EtcdKeyReader reader;

	private final EtcdWatches watches;

	private volatile boolean closed;

	private EtcdMetadataExchange(Builder builder) {
		this.maxValueBytes = builder.maxValueBytes;
		this.keys = new EtcdKeys(builder.namespace);
		this.connection = new EtcdConnection(builder.endpoints, builder.operationTimeout, builder.user,
				builder.password, builder.keyManagers, builder.trustManagers);
		this.thread = new EtcdExchangeThread();
		this.publication = new EtcdLeasedPublication(this.connection, this.keys, builder.leaseTtl, this.thread);
		this.reader = new EtcdKeyReader(this.connection);
		this.watches = new EtcdWatches(this.connection, this.keys, this.thread);
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
		return this.keys.metadata(agentName);
	}

	/**
	 * Returns the key an agent's document of a kind is stored under.
	 * @param agentName the agent
	 * @param kind the document's kind
	 * @return {@code <namespace>/<agent>/nixl4j-<kind>}
	 */
	public String documentKey(String agentName, String kind) {
		return this.keys.document(agentName, kind);
	}

	/**
	 * Returns the etcd endpoints.
	 * @return the endpoints
	 */
	public List<URI> endpoints() {
		return this.connection.endpoints();
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
		this.publication.publish(agentName, value);
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
		this.publication.publishDocument(agentName, kind, document.clone());
	}

	/**
	 * Returns how many times one unit of work of the exchange's thread (keeping the lease
	 * alive, restarting a watch, telling a watcher) threw unexpectedly and the thread
	 * went on. Each was logged once, with its context.
	 * @return the count
	 */
	public long internalErrors() {
		return this.thread.internalErrors();
	}

	@Override
	public AgentMetadata fetch(String agentName, Duration timeout) {
		String operation = "fetch_remote_md";
		ensureOpen(operation);
		requireName(agentName);
		EtcdKeyReader.Found found = this.reader.awaitValue(operation, agentName, key(agentName), timeout, false,
				"metadata of agent '" + agentName + "'");
		AgentMetadata metadata = MetadataValues.check(operation, agentName, found.value(), this.maxValueBytes);
		this.watches.fetched(agentName, found.revision());
		return metadata;
	}

	@Override
	public byte[] fetchDocument(String agentName, String kind, Duration timeout) {
		String operation = "fetch_document";
		ensureOpen(operation);
		requireName(agentName);
		MetadataExchange.requireDocumentKind(kind);
		String what = "document '" + kind + "' of agent '" + agentName + "'";
		byte[] document = this.reader
			.awaitValue(operation, agentName, documentKey(agentName, kind), timeout, true, what)
			.value();
		if (document.length > MAX_DOCUMENT_BYTES) {
			throw new NixlException(NixlStatus.INVALID_METADATA, operation, null, agentName, "the " + what + " is "
					+ document.length + " bytes, over the limit of " + MAX_DOCUMENT_BYTES + " bytes");
		}
		return document;
	}

	@Override
	public void invalidate(String agentName) {
		ensureOpen("invalidate_local_md");
		requireName(agentName);
		this.publication.invalidate(agentName);
	}

	@Override
	public MetadataExchange.Watch watch(String agentName, Consumer<String> onRemoved) {
		ensureOpen("watch");
		requireName(agentName);
		Objects.requireNonNull(onRemoved, "onRemoved");
		return this.watches.watch(agentName, onRemoved);
	}

	@Override
	public void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.publication.stop();
		this.thread.shutdownNow();
		this.watches.closeAll();
		try {
			this.publication.revoke();
		}
		finally {
			this.connection.close();
		}
	}

	@Override
	public String toString() {
		return "etcd exchange " + endpoints() + " namespace '" + this.keys.namespace() + "'";
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
