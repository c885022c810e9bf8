package dev.nixl4j.autoconfigure;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.Map;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.Engine;
import dev.nixl4j.ThreadSync;
import dev.nixl4j.connect.Connector;
import dev.nixl4j.kv.KvBlockOrder;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvIntegrity;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.metadata.http.MetadataRegistryHandler;
import dev.nixl4j.metadata.MetadataValues;
import dev.nixl4j.metadata.etcd.EtcdMetadataExchange;
import dev.nixl4j.lifecycle.AgentLifecycle;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * Configuration of nixl4j: the agent, its metadata exchange, the connect layer, an
 * optional managed KV cache and graceful shutdown. Every value is checked when the
 * properties are bound, so a bad value stops the application at start-up with a message
 * naming the property.
 *
 * <p>
 * A property that configures something of nixl4j's core takes its default from the core's
 * constant (such as {@link AgentConfig#DEFAULT_STALL_TIMEOUT}), and its value is checked
 * by the core's own rules. The configuration processor cannot read a default from another
 * class, so {@code additional-spring-configuration-metadata.json} repeats these defaults
 * for IDEs and {@code docs/configuration.md}; a test keeps the three equal.
 */
@ConfigurationProperties("nixl")
public class NixlProperties implements Validator {

	private final Agent agent = new Agent();

	private final Native nativeLibrary = new Native();

	private final Embedded embedded = new Embedded();

	private final Transfer transfer = new Transfer();

	private final Metadata metadata = new Metadata();

	private final Connect connect = new Connect();

	private final Kv kv = new Kv();

	private final Shutdown shutdown = new Shutdown();

	private final Endpoint endpoint = new Endpoint();

	private final Metrics metrics = new Metrics();

	public Agent getAgent() {
		return this.agent;
	}

	/**
	 * Returns the native library settings (bound from {@code nixl.native.*}).
	 * @return the settings
	 */
	public Native getNative() {
		return this.nativeLibrary;
	}

	public Embedded getEmbedded() {
		return this.embedded;
	}

	public Transfer getTransfer() {
		return this.transfer;
	}

	public Metadata getMetadata() {
		return this.metadata;
	}

	public Connect getConnect() {
		return this.connect;
	}

	public Kv getKv() {
		return this.kv;
	}

	public Shutdown getShutdown() {
		return this.shutdown;
	}

	public Endpoint getEndpoint() {
		return this.endpoint;
	}

	public Metrics getMetrics() {
		return this.metrics;
	}

	@Override
	public boolean supports(Class<?> type) {
		return NixlProperties.class.isAssignableFrom(type);
	}

	@Override
	public void validate(Object target, Errors errors) {
		new NixlPropertiesValidator((NixlProperties) target, errors).validate();
	}

	/**
	 * The agent.
	 */
	public static class Agent {

		/**
		 * Whether this application runs a NIXL agent. When false it runs no agent, no
		 * connector and no KV cache, and loads no native library: with
		 * "nixl.metadata.exchange=http" and no "nixl.metadata.http.endpoint" it serves
		 * the HTTP metadata registry alone.
		 */
		private boolean enabled = true;

		/**
		 * Name of the agent; peers address it by this name. Defaults to
		 * "spring.application.name" (or "nixl") followed by a random suffix, so that two
		 * instances of one service never share a name.
		 */
		private @Nullable String name;

		/**
		 * Engine behind the agent: "native" needs NIXL's libraries, "embedded" is pure
		 * Java, "auto" uses NIXL when it loads and otherwise the embedded engine with one
		 * warning.
		 */
		private Engine engine = AgentConfig.DEFAULT_ENGINE;

		/**
		 * Backends created at start, in order; by default one UCX backend. Each names a
		 * NIXL plugin (UCX, GDS, POSIX, ...) and its parameters; NIXL's defaults apply to
		 * parameters left out.
		 */
		private List<Backend> backends = new ArrayList<>(List.of(new Backend()));

		/**
		 * NIXL's locking mode (native engine). STRICT (the default) or RW are safe with
		 * many calling threads; NONE is for one thread only.
		 */
		private ThreadSync threadSync = AgentConfig.DEFAULT_THREAD_SYNC;

		/**
		 * Whether NIXL runs its own progress thread. Backends that emulate one-sided
		 * transfers (UCX over TCP) only make progress for the target while it is on.
		 */
		private boolean nativeProgressThread = AgentConfig.DEFAULT_NATIVE_PROGRESS_THREAD;

		/**
		 * Delay between passes of NIXL's progress thread; zero makes it spin.
		 */
		private Duration nativeProgressDelay = AgentConfig.DEFAULT_NATIVE_PROGRESS_DELAY;

		/**
		 * Whether per-transfer telemetry is captured (by either engine).
		 */
		private boolean telemetry;

		/**
		 * How many unclaimed notifications the agent holds in total (and at most 64 MiB
		 * of them); over it, the oldest message of the sender holding the most is dropped
		 * and counted.
		 */
		private int mailboxCapacity = AgentConfig.DEFAULT_MAILBOX_CAPACITY;

		/**
		 * How many unclaimed notifications the agent holds from one sender (and at most
		 * the same share of 64 MiB); over it, that sender's oldest message is dropped and
		 * counted. A value above the capacity acts as the capacity.
		 */
		private int mailboxPerSender = AgentConfig.DEFAULT_MAILBOX_PER_SENDER;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable String getName() {
			return this.name;
		}

		public void setName(@Nullable String name) {
			this.name = name;
		}

		public Engine getEngine() {
			return this.engine;
		}

		public void setEngine(Engine engine) {
			this.engine = engine;
		}

		public List<Backend> getBackends() {
			return this.backends;
		}

		public void setBackends(List<Backend> backends) {
			this.backends = backends;
		}

		public ThreadSync getThreadSync() {
			return this.threadSync;
		}

		public void setThreadSync(ThreadSync threadSync) {
			this.threadSync = threadSync;
		}

		public boolean isNativeProgressThread() {
			return this.nativeProgressThread;
		}

		public void setNativeProgressThread(boolean nativeProgressThread) {
			this.nativeProgressThread = nativeProgressThread;
		}

		public Duration getNativeProgressDelay() {
			return this.nativeProgressDelay;
		}

		public void setNativeProgressDelay(Duration nativeProgressDelay) {
			this.nativeProgressDelay = nativeProgressDelay;
		}

		public boolean isTelemetry() {
			return this.telemetry;
		}

		public void setTelemetry(boolean telemetry) {
			this.telemetry = telemetry;
		}

		public int getMailboxCapacity() {
			return this.mailboxCapacity;
		}

		public void setMailboxCapacity(int mailboxCapacity) {
			this.mailboxCapacity = mailboxCapacity;
		}

		public int getMailboxPerSender() {
			return this.mailboxPerSender;
		}

		public void setMailboxPerSender(int mailboxPerSender) {
			this.mailboxPerSender = mailboxPerSender;
		}

	}

	/**
	 * A backend of the agent.
	 */
	public static class Backend {

		/**
		 * NIXL plugin the backend is created from, for example "UCX", "GDS" or "POSIX".
		 */
		private String plugin = AgentConfig.DEFAULT_BACKEND_PLUGIN;

		/**
		 * Plugin parameters, for example "num_workers" for UCX.
		 */
		private Map<String, String> parameters = new LinkedHashMap<>();

		public String getPlugin() {
			return this.plugin;
		}

		public void setPlugin(String plugin) {
			this.plugin = plugin;
		}

		public Map<String, String> getParameters() {
			return this.parameters;
		}

		public void setParameters(Map<String, String> parameters) {
			this.parameters = parameters;
		}

	}

	/**
	 * Where NIXL's native libraries are and the environment they start with.
	 */
	public static class Native {

		/**
		 * Directory holding libnixl_capi.so, tried before the standard places (system
		 * property "nixl.native.dir", NIXL_LIB_DIR, NIXL_PREFIX, /opt/nvidia/nvda_nixl
		 * and nixl4j's cache).
		 */
		private @Nullable Path libraryDirectory;

		/**
		 * Environment for NIXL and UCX, set before the library loads and before each
		 * agent is created, for example UCX_TLS or NIXL_PLUGIN_DIR.
		 */
		private Map<String, String> environment = new LinkedHashMap<>();

		public @Nullable Path getLibraryDirectory() {
			return this.libraryDirectory;
		}

		public void setLibraryDirectory(@Nullable Path libraryDirectory) {
			this.libraryDirectory = libraryDirectory;
		}

		public Map<String, String> getEnvironment() {
			return this.environment;
		}

		public void setEnvironment(Map<String, String> environment) {
			this.environment = environment;
		}

	}

	/**
	 * The embedded engine.
	 */
	public static class Embedded {

		/**
		 * Address the embedded engine's TCP listener binds; peers in other processes
		 * connect to it. Loopback unless set.
		 */
		private @Nullable String address;

		/**
		 * Port of the embedded engine's TCP listener; 0 picks a free one.
		 */
		private int port;

		/**
		 * Whether transfers between agents of one JVM copy memory directly instead of
		 * going through TCP.
		 */
		private boolean inProcessCopies = EmbeddedOptions.DEFAULT_IN_PROCESS_COPIES;

		/**
		 * Most connections the embedded engine's listener holds at once. At the limit a
		 * new connection replaces the oldest one that has not yet presented the token, or
		 * is closed at once when all belong to peers that did.
		 */
		private int maxConnections = EmbeddedOptions.DEFAULT_MAX_CONNECTIONS;

		/**
		 * How long a new connection to the embedded engine's listener may take to present
		 * its hello before it is closed.
		 */
		private Duration helloTimeout = EmbeddedOptions.DEFAULT_HELLO_TIMEOUT;

		/**
		 * How long a request's header may take to arrive once its first byte came, and
		 * how long the data of a request or response may stall, before the listener
		 * closes the connection.
		 */
		private Duration frameTimeout = EmbeddedOptions.DEFAULT_FRAME_TIMEOUT;

		/**
		 * How long a connection to a peer may move no byte while a request to it is
		 * outstanding before it is declared dropped and its transfers fail.
		 */
		private Duration responseTimeout = EmbeddedOptions.DEFAULT_RESPONSE_TIMEOUT;

		/**
		 * Whether the agent offers and uses the same-host path: peers in other processes
		 * of this host that also have it on map the agent's shareable memory after
		 * presenting a registration's key, instead of moving bytes over TCP.
		 */
		private boolean sameHost = EmbeddedOptions.DEFAULT_SAME_HOST;

		public @Nullable String getAddress() {
			return this.address;
		}

		public void setAddress(@Nullable String address) {
			this.address = address;
		}

		public int getPort() {
			return this.port;
		}

		public void setPort(int port) {
			this.port = port;
		}

		public boolean isInProcessCopies() {
			return this.inProcessCopies;
		}

		public void setInProcessCopies(boolean inProcessCopies) {
			this.inProcessCopies = inProcessCopies;
		}

		public int getMaxConnections() {
			return this.maxConnections;
		}

		public void setMaxConnections(int maxConnections) {
			this.maxConnections = maxConnections;
		}

		public Duration getHelloTimeout() {
			return this.helloTimeout;
		}

		public void setHelloTimeout(Duration helloTimeout) {
			this.helloTimeout = helloTimeout;
		}

		public Duration getFrameTimeout() {
			return this.frameTimeout;
		}

		public void setFrameTimeout(Duration frameTimeout) {
			this.frameTimeout = frameTimeout;
		}

		public Duration getResponseTimeout() {
			return this.responseTimeout;
		}

		public boolean isSameHost() {
			return this.sameHost;
		}

		public void setSameHost(boolean sameHost) {
			this.sameHost = sameHost;
		}

		public void setResponseTimeout(Duration responseTimeout) {
			this.responseTimeout = responseTimeout;
		}

	}

	/**
	 * Transfers.
	 */
	public static class Transfer {

		/**
		 * How long a transfer may stay in progress before it is reported stalled and
		 * cancelled.
		 */
		private Duration stallTimeout = AgentConfig.DEFAULT_STALL_TIMEOUT;

		/**
		 * Default deadline of waits on transfers, offered by the NixlTimeouts bean. Where
		 * Resilience4j is present it is the timeout of the "nixl-transfer" time limiter
		 * unless that instance is configured under "resilience4j.timelimiter.instances".
		 */
		private Duration timeout = Duration.ofSeconds(30);

		/**
		 * Most transfers in flight at once, enforced by Resilience4j's "nixl-transfers"
		 * bulkhead (a post beyond it fails at once with TransferRefusedException) unless
		 * that instance is configured under "resilience4j.bulkhead.instances". Without
		 * Resilience4j it is not enforced.
		 */
		private int maxInFlight = 1024;

		public Duration getStallTimeout() {
			return this.stallTimeout;
		}

		public void setStallTimeout(Duration stallTimeout) {
			this.stallTimeout = stallTimeout;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public int getMaxInFlight() {
			return this.maxInFlight;
		}

		public void setMaxInFlight(int maxInFlight) {
			this.maxInFlight = maxInFlight;
		}

	}

	/**
	 * How agents find each other's metadata.
	 */
	public static class Metadata {

		/**
		 * The exchange: "none" (metadata travels with each operation, as in the connect
		 * layer), "http", "etcd" (nixl4j's client, NIXL's key layout) or "nixl-etcd"
		 * (NIXL's own etcd client, native engine only).
		 */
		private ExchangeType exchange = ExchangeType.NONE;

		/**
		 * Whether the agent's metadata is published when the application starts and
		 * withdrawn when it stops.
		 */
		private boolean publish = true;

		/**
		 * How often this agent fetches its own published entry and compares it with what
		 * it published; an entry that vanished or changed is published again at once (a
		 * removal the exchange reports is acted on without waiting for the check).
		 */
		private Duration checkInterval = MetadataPublication.DEFAULT_CHECK_INTERVAL;

		/**
		 * Deadline for fetching a peer's metadata. Where Resilience4j is present, the
		 * "nixl-metadata" retry makes further attempts, each with this deadline, after a
		 * fetch failed with TIMEOUT or UNAVAILABLE.
		 */
		private Duration fetchTimeout = KvProducer.DEFAULT_PEER_TIMEOUT;

		/**
		 * Largest metadata value accepted from a peer or a client.
		 */
		private DataSize maxSize = DataSize.ofBytes(MetadataValues.DEFAULT_MAX_BYTES);

		private final Http http = new Http();

		private final Etcd etcd = new Etcd();

		public ExchangeType getExchange() {
			return this.exchange;
		}

		public void setExchange(ExchangeType exchange) {
			this.exchange = exchange;
		}

		public boolean isPublish() {
			return this.publish;
		}

		public void setPublish(boolean publish) {
			this.publish = publish;
		}

		public Duration getCheckInterval() {
			return this.checkInterval;
		}

		public void setCheckInterval(Duration checkInterval) {
			this.checkInterval = checkInterval;
		}

		public Duration getFetchTimeout() {
			return this.fetchTimeout;
		}

		public void setFetchTimeout(Duration fetchTimeout) {
			this.fetchTimeout = fetchTimeout;
		}

		public DataSize getMaxSize() {
			return this.maxSize;
		}

		public void setMaxSize(DataSize maxSize) {
			this.maxSize = maxSize;
		}

		public Http getHttp() {
			return this.http;
		}

		public Etcd getEtcd() {
			return this.etcd;
		}

	}

	/**
	 * The metadata exchanges nixl4j can configure.
	 */
	public enum ExchangeType {

		/** No exchange: metadata travels with each operation. */
		NONE,

		/** An HTTP registry, served by this application or another. */
		HTTP,

		/** etcd through nixl4j's client, in NIXL's key layout. */
		ETCD,

		/** NIXL's own etcd client (native engine only). */
		NIXL_ETCD

	}

	/**
	 * The HTTP metadata registry.
	 */
	public static class Http {

		/**
		 * Base URI of the registry to publish to and fetch from, for example
		 * "https://registry:8443/nixl". When unset this application is the registry: it
		 * serves it under the base path, and peers point their endpoint at it.
		 */
		private @Nullable URI endpoint;

		/**
		 * Whether this application serves the registry ("GET", "PUT" and "DELETE" of
		 * {base-path}/agents/{name}/metadata). On by default when no endpoint is set.
		 */
		private @Nullable Boolean serve;

		/**
		 * Path under which the registry is served.
		 */
		private String basePath = MetadataRegistryHandler.DEFAULT_BASE_PATH;

		/**
		 * Bearer token every request to the registry must carry; required by the "http"
		 * exchange, both to serve the registry and to use one. At least 16 visible ASCII
		 * characters, no spaces. Never logged.
		 */
		private @Nullable String token;

		/**
		 * Deadline of one request to the registry.
		 */
		private Duration requestTimeout = HttpMetadataExchange.DEFAULT_REQUEST_TIMEOUT;

		/**
		 * Name of the SSL bundle ("spring.ssl.bundle.*") whose trust material the client
		 * uses for an "https" endpoint.
		 */
		private @Nullable String sslBundle;

		/**
		 * Bounds and expiry of the registry this application serves.
		 */
		private final Registry registry = new Registry();

		public @Nullable URI getEndpoint() {
			return this.endpoint;
		}

		public void setEndpoint(@Nullable URI endpoint) {
			this.endpoint = endpoint;
		}

		public @Nullable Boolean getServe() {
			return this.serve;
		}

		public void setServe(@Nullable Boolean serve) {
			this.serve = serve;
		}

		/**
		 * Whether this application serves the registry, with the default applied.
		 * @return {@code true} when it does
		 */
		public boolean serves() {
			return (this.serve != null) ? this.serve : this.endpoint == null;
		}

		public String getBasePath() {
			return this.basePath;
		}

		public void setBasePath(String basePath) {
			this.basePath = basePath;
		}

		public @Nullable String getToken() {
			return this.token;
		}

		public void setToken(@Nullable String token) {
			this.token = token;
		}

		public Duration getRequestTimeout() {
			return this.requestTimeout;
		}

		public void setRequestTimeout(Duration requestTimeout) {
			this.requestTimeout = requestTimeout;
		}

		public @Nullable String getSslBundle() {
			return this.sslBundle;
		}

		public void setSslBundle(@Nullable String sslBundle) {
			this.sslBundle = sslBundle;
		}

		public Registry getRegistry() {
			return this.registry;
		}

	}

	/**
	 * A client of the served registry: its token, the agent names it may publish and its
	 * quota.
	 */
	public static class RegistryClient {

		/**
		 * The client's bearer token, its own. Never logged.
		 */
		private @Nullable String token;

		/**
		 * Prefixes of the agent names the client may create, replace, renew and delete.
		 */
		private List<String> agentNamePrefixes = new ArrayList<>();

		/**
		 * Most entries the client may hold.
		 */
		private int maxEntries = MetadataRegistryHandler.DEFAULT_CLIENT_MAX_ENTRIES;

		/**
		 * Most bytes of metadata and documents the client's entries may hold.
		 */
		private DataSize maxTotalSize = DataSize.ofBytes(MetadataRegistryHandler.DEFAULT_CLIENT_MAX_TOTAL_BYTES);

		public @Nullable String getToken() {
			return this.token;
		}

		public void setToken(@Nullable String token) {
			this.token = token;
		}

		public List<String> getAgentNamePrefixes() {
			return this.agentNamePrefixes;
		}

		public void setAgentNamePrefixes(List<String> agentNamePrefixes) {
			this.agentNamePrefixes = agentNamePrefixes;
		}

		public int getMaxEntries() {
			return this.maxEntries;
		}

		public void setMaxEntries(int maxEntries) {
			this.maxEntries = maxEntries;
		}

		public DataSize getMaxTotalSize() {
			return this.maxTotalSize;
		}

		public void setMaxTotalSize(DataSize maxTotalSize) {
			this.maxTotalSize = maxTotalSize;
		}

		@Override
		public String toString() {
			return "RegistryClient[prefixes=" + this.agentNamePrefixes + ", token hidden]";
		}

	}

	/**
	 * The registry this application serves: how many entries it holds and for how long.
	 */
	public static class Registry {

		/**
		 * Most entries the registry holds for peers (entries created over HTTP); a "PUT"
		 * of a new name beyond it is refused with 507.
		 */
		private int maxEntries = MetadataRegistryHandler.DEFAULT_MAX_ENTRIES;

		/**
		 * Most bytes of metadata the registry holds for peers, all entries together; a
		 * "PUT" that would pass it is refused with 507 before its body is read.
		 */
		private DataSize maxTotalSize = DataSize.ofBytes(MetadataRegistryHandler.DEFAULT_MAX_TOTAL_BYTES);

		/**
		 * How long an entry lives after its owner last published or renewed it; clients
		 * renew every third of it, so an entry of a dead agent disappears this long after
		 * its last renewal and its name is free again.
		 */
		private Duration entryTtl = MetadataRegistryHandler.DEFAULT_ENTRY_TTL;

		/**
		 * Whether the served registry accepts the shared token
		 * ("nixl.metadata.http.token") beside the clients' own. A holder of the shared
		 * token may take any free agent name and fill the shared token's quota; turn it
		 * off once every peer has a client token.
		 */
		private boolean acceptSharedToken = true;

		/**
		 * Most entries all holders of the shared token together may hold, uploads in
		 * progress included; past it they get 429. Default: the registry's max-entries
		 * when no client is configured, else 64.
		 */
		private @Nullable Integer sharedTokenMaxEntries;

		/**
		 * Most bytes of metadata and documents all holders of the shared token together
		 * may hold, uploads in progress included. Default: the registry's max-total-size
		 * when no client is configured, else 16MB.
		 */
		private @Nullable DataSize sharedTokenMaxTotalSize;

		/**
		 * Deadline of a "PUT" body, from its admission to its last byte; a body still
		 * arriving then gets 408 and its reserved room is given back. The web server's
		 * own timeout starts again with every byte and does not bound this.
		 */
		private Duration bodyTimeout = Duration.ofSeconds(30);

		/**
		 * Minimum rate of a "PUT" body, per second on average after its first second; a
		 * body that falls behind gets 408 and its reserved room is given back. 0 turns
		 * the rate off.
		 */
		private DataSize minBodyRate = DataSize.ofKilobytes(16);

		/**
		 * Clients of the served registry, by client id, each with its own "token", the
		 * "agent-name-prefixes" of the names it may publish, and its quota: "max-entries"
		 * (default 64) and "max-total-size" (default 16MB, documents included).
		 */
		private final Map<String, RegistryClient> clients = new LinkedHashMap<>();

		public boolean isAcceptSharedToken() {
			return this.acceptSharedToken;
		}

		public @Nullable Integer getSharedTokenMaxEntries() {
			return this.sharedTokenMaxEntries;
		}

		public void setSharedTokenMaxEntries(@Nullable Integer sharedTokenMaxEntries) {
			this.sharedTokenMaxEntries = sharedTokenMaxEntries;
		}

		public @Nullable DataSize getSharedTokenMaxTotalSize() {
			return this.sharedTokenMaxTotalSize;
		}

		public void setSharedTokenMaxTotalSize(@Nullable DataSize sharedTokenMaxTotalSize) {
			this.sharedTokenMaxTotalSize = sharedTokenMaxTotalSize;
		}

		public Duration getBodyTimeout() {
			return this.bodyTimeout;
		}

		public void setBodyTimeout(Duration bodyTimeout) {
			this.bodyTimeout = bodyTimeout;
		}

		public DataSize getMinBodyRate() {
			return this.minBodyRate;
		}

		public void setMinBodyRate(DataSize minBodyRate) {
			this.minBodyRate = minBodyRate;
		}

		public void setAcceptSharedToken(boolean acceptSharedToken) {
			this.acceptSharedToken = acceptSharedToken;
		}

		public Map<String, RegistryClient> getClients() {
			return this.clients;
		}

		public int getMaxEntries() {
			return this.maxEntries;
		}

		public void setMaxEntries(int maxEntries) {
			this.maxEntries = maxEntries;
		}

		public DataSize getMaxTotalSize() {
			return this.maxTotalSize;
		}

		public void setMaxTotalSize(DataSize maxTotalSize) {
			this.maxTotalSize = maxTotalSize;
		}

		public Duration getEntryTtl() {
			return this.entryTtl;
		}

		public void setEntryTtl(Duration entryTtl) {
			this.entryTtl = entryTtl;
		}

	}

	/**
	 * etcd, for the "etcd" and "nixl-etcd" exchanges.
	 */
	public static class Etcd {

		/**
		 * etcd endpoints, for example "http://127.0.0.1:2379". An EtcdConnectionDetails
		 * bean (for example from a Testcontainers @ServiceConnection) takes precedence.
		 */
		private List<String> endpoints = new ArrayList<>(List.of(EtcdMetadataExchange.DEFAULT_ENDPOINT));

		/**
		 * Key namespace; NIXL's default "/nixl/agents/" lets Java and C++/Python agents
		 * find each other.
		 */
		private String namespace = EtcdMetadataExchange.DEFAULT_NAMESPACE;

		// nixl-metadata-etcd is optional: only its compile-time constants may be used
		// here.
		// NixlPropertiesDefaultsTests keeps these two equal to its defaults.

		/**
		 * Time to live of the lease that keeps this agent's key; the key disappears this
		 * long after the application dies.
		 */
		private Duration leaseTtl = Duration.ofSeconds(10);

		/**
		 * Deadline of one etcd call.
		 */
		private Duration operationTimeout = Duration.ofSeconds(5);

		/**
		 * User name for an etcd cluster with authentication enabled ("etcd" exchange);
		 * needs a password. An EtcdConnectionDetails bean takes precedence.
		 */
		private @Nullable String username;

		/**
		 * Password of the etcd user. Never logged; over "http" endpoints it travels in
		 * clear text, so use "https" ones with an SSL bundle outside a trusted network.
		 */
		private @Nullable String password;

		/**
		 * Name of the SSL bundle ("spring.ssl.bundle.*") for "https" etcd endpoints
		 * ("etcd" exchange): its trust material decides which etcd certificates are
		 * accepted, its key material (if any) is the client certificate for a cluster
		 * started with --client-cert-auth.
		 */
		private @Nullable String sslBundle;

		public List<String> getEndpoints() {
			return this.endpoints;
		}

		public void setEndpoints(List<String> endpoints) {
			this.endpoints = endpoints;
		}

		public String getNamespace() {
			return this.namespace;
		}

		public void setNamespace(String namespace) {
			this.namespace = namespace;
		}

		public Duration getLeaseTtl() {
			return this.leaseTtl;
		}

		public void setLeaseTtl(Duration leaseTtl) {
			this.leaseTtl = leaseTtl;
		}

		public Duration getOperationTimeout() {
			return this.operationTimeout;
		}

		public void setOperationTimeout(Duration operationTimeout) {
			this.operationTimeout = operationTimeout;
		}

		public @Nullable String getUsername() {
			return this.username;
		}

		public void setUsername(@Nullable String username) {
			this.username = username;
		}

		public @Nullable String getPassword() {
			return this.password;
		}

		public void setPassword(@Nullable String password) {
			this.password = password;
		}

		public @Nullable String getSslBundle() {
			return this.sslBundle;
		}

		public void setSslBundle(@Nullable String sslBundle) {
			this.sslBundle = sslBundle;
		}

	}

	/**
	 * The connect layer.
	 */
	public static class Connect {

		/**
		 * Whether a Connector bean is created.
		 */
		private boolean enabled = true;

		/**
		 * How long a readable or writable operation waits for its peer before it expires
		 * and releases its memory.
		 */
		private Duration lease = Connector.DEFAULT_LEASE;

		/**
		 * How long a peer stays loaded after its last operation, so the notification of
		 * that operation's transfer can leave first.
		 */
		private Duration peerLinger = Connector.DEFAULT_PEER_LINGER;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getLease() {
			return this.lease;
		}

		public void setLease(Duration lease) {
			this.lease = lease;
		}

		public Duration getPeerLinger() {
			return this.peerLinger;
		}

		public void setPeerLinger(Duration peerLinger) {
			this.peerLinger = peerLinger;
		}

	}

	/**
	 * A managed paged KV cache; created when "nixl.kv.layers" is set.
	 */
	public static class Kv {

		/**
		 * Number of transformer layers; setting it turns the managed KV cache on.
		 */
		private @Nullable Integer layers;

		/**
		 * Whether K and V live in separate regions per layer (vLLM's usual layout).
		 */
		private boolean splitKv = true;

		/**
		 * Number of blocks in the pool.
		 */
		private int blocks = 1024;

		/**
		 * Tokens per block.
		 */
		private int blockSize = 16;

		/**
		 * Number of KV heads this worker holds (after tensor-parallel sharding).
		 */
		private int kvHeads = 8;

		/**
		 * Elements per head (the head dimension).
		 */
		private int headDim = 128;

		/**
		 * Bytes per element (1, 2, 4 or 8): 2 for fp16 or bf16, 1 for fp8.
		 */
		private int dtypeSize = 2;

		/**
		 * Order of a block's elements: HND (heads first) or NHD (tokens first).
		 */
		private KvBlockOrder order = KvBlockOrder.HND;

		/**
		 * This worker's rank among the consumers of a producer (tensor parallelism).
		 */
		private int rank;

		/**
		 * Time to live of a lease of a request's blocks: the managed producer's default
		 * (KvProducer.Builder#leaseTtl), which a lease's options may override.
		 */
		private Duration leaseTtl = KvProducer.DEFAULT_LEASE_TTL;

		/**
		 * What the producer's leases let consumers check before a pull returns: none (the
		 * lease only), generation (HELD only when no leased block was handed out again)
		 * or crc32c (also a CRC32C of every block, compared by the consumer).
		 */
		private KvIntegrity integrity = KvProducer.DEFAULT_INTEGRITY;

		/**
		 * How long the consumer's pull waits for the producer's answer after its READ
		 * completed before it sends its done message again (the notification or the
		 * answer may have been lost); the wait doubles after each resend, up to 5 within
		 * the pull's deadline. Zero turns resends off: a lost notification then fails the
		 * pull at its deadline.
		 */
		private Duration confirmationResend = KvConsumer.DEFAULT_CONFIRMATION_RESEND;

		/**
		 * What identifies the model whose KV the cache holds (its name, revision and
		 * anything else that changes the KV values). Published in the cache's handle: a
		 * consumer refuses a producer whose model fingerprint differs from its own before
		 * it reads anything. Unset: no model check, only the layout's.
		 */
		private @Nullable String modelFingerprint;

		/**
		 * Where the KV cache lives: "cpu" (host memory) or "cuda:<n>" (the memory of CUDA
		 * device n, one allocation per region as vLLM lays it out, registered as VRAM
		 * with the device ordinal). GPU memory needs the native engine, the CUDA runtime
		 * and a device, and UCX's CUDA transports to move it.
		 */
		private String device = "cpu";

		public @Nullable Integer getLayers() {
			return this.layers;
		}

		public void setLayers(@Nullable Integer layers) {
			this.layers = layers;
		}

		public boolean isSplitKv() {
			return this.splitKv;
		}

		public void setSplitKv(boolean splitKv) {
			this.splitKv = splitKv;
		}

		public int getBlocks() {
			return this.blocks;
		}

		public void setBlocks(int blocks) {
			this.blocks = blocks;
		}

		public int getBlockSize() {
			return this.blockSize;
		}

		public void setBlockSize(int blockSize) {
			this.blockSize = blockSize;
		}

		public int getKvHeads() {
			return this.kvHeads;
		}

		public void setKvHeads(int kvHeads) {
			this.kvHeads = kvHeads;
		}

		public int getHeadDim() {
			return this.headDim;
		}

		public void setHeadDim(int headDim) {
			this.headDim = headDim;
		}

		public int getDtypeSize() {
			return this.dtypeSize;
		}

		public void setDtypeSize(int dtypeSize) {
			this.dtypeSize = dtypeSize;
		}

		public KvBlockOrder getOrder() {
			return this.order;
		}

		public void setOrder(KvBlockOrder order) {
			this.order = order;
		}

		public int getRank() {
			return this.rank;
		}

		public void setRank(int rank) {
			this.rank = rank;
		}

		public Duration getLeaseTtl() {
			return this.leaseTtl;
		}

		public void setLeaseTtl(Duration leaseTtl) {
			this.leaseTtl = leaseTtl;
		}

		public @Nullable String getModelFingerprint() {
			return this.modelFingerprint;
		}

		public void setModelFingerprint(@Nullable String modelFingerprint) {
			this.modelFingerprint = modelFingerprint;
		}

		public Duration getConfirmationResend() {
			return this.confirmationResend;
		}

		public void setConfirmationResend(Duration confirmationResend) {
			this.confirmationResend = confirmationResend;
		}

		public KvIntegrity getIntegrity() {
			return this.integrity;
		}

		public String getDevice() {
			return this.device;
		}

		public void setDevice(String device) {
			this.device = device;
		}

		public void setIntegrity(KvIntegrity integrity) {
			this.integrity = integrity;
		}

	}

	/**
	 * Graceful shutdown.
	 */
	public static class Shutdown {

		/**
		 * How long shutdown waits for transfers in flight to finish before it cancels
		 * them.
		 */
		private Duration timeout = AgentLifecycle.DEFAULT_SHUTDOWN_TIMEOUT;

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

	}

	/**
	 * The {@code nixl} Actuator endpoint.
	 */
	public static class Endpoint {

		/**
		 * When the endpoint shows agent names (this agent's, its peers', the peers of its
		 * transfers): never, when-authorized (to an authenticated caller, in one of
		 * "roles" when those are set) or always. Names are what a holder of the
		 * registry's shared token needs to squat an agent's entry; counts and sizes are
		 * always shown.
		 */
		private ShowNames showNames = ShowNames.WHEN_AUTHORIZED;

		/**
		 * Roles of which an authenticated caller needs one to see names when "show-names"
		 * is when-authorized; empty: any authenticated caller.
		 */
		private Set<String> roles = new LinkedHashSet<>();

		public ShowNames getShowNames() {
			return this.showNames;
		}

		public void setShowNames(ShowNames showNames) {
			this.showNames = showNames;
		}

		public Set<String> getRoles() {
			return this.roles;
		}

		public void setRoles(Set<String> roles) {
			this.roles = roles;
		}

		/**
		 * When names are shown, as Spring Boot's health endpoint decides on details.
		 */
		public enum ShowNames {

			/** Never. */
			NEVER,

			/** To an authenticated caller (in one of the roles, when set). */
			WHEN_AUTHORIZED,

			/** To every caller. */
			ALWAYS

		}

	}

	/**
	 * The agent's meters.
	 */
	public static class Metrics {

		/**
		 * Whether the agent's meters are also published under the names, units and labels
		 * of NIXL's Prometheus exporter (agent_tx_bytes_total, agent_xfer_time_us, ...),
		 * beside nixl4j's own.
		 */
		private boolean nixlNames;

		public boolean isNixlNames() {
			return this.nixlNames;
		}

		public void setNixlNames(boolean nixlNames) {
			this.nixlNames = nixlNames;
		}

	}

}
