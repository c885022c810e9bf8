package dev.nixl4j.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.SettingChecks;
import dev.nixl4j.autoconfigure.NixlProperties.ExchangeType;
import dev.nixl4j.connect.Device;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.RemoteCacheHandle;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.metadata.http.MetadataRegistryHandler;
import dev.nixl4j.metadata.etcd.EtcdMetadataExchange;
import org.jspecify.annotations.Nullable;

import org.springframework.util.ClassUtils;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.Errors;

/**
 * Checks bound {@link NixlProperties}; every rejection names the property and says what
 * is allowed, and Spring Boot reports it at start-up.
 *
 * <p>
 * A property that sets something of the core is checked by the core's own rule: its value
 * is given, alone, to the core type it configures (the others at their defaults), and
 * what that type refuses is reported against the property. Only rules the core does not
 * have are written here.
 */
final class NixlPropertiesValidator {

	/** Shortest bearer token accepted. */
	static final int MIN_TOKEN_LENGTH = 16;

	private static final long MAX_METADATA_BYTES = Integer.MAX_VALUE - 8;

	private static final int MAX_NAME_LENGTH = 256;

	private static final boolean ETCD_PRESENT = ClassUtils.isPresent("io.etcd.jetcd.Client",
			NixlPropertiesValidator.class.getClassLoader())
			&& ClassUtils.isPresent("dev.nixl4j.metadata.etcd.EtcdMetadataExchange",
					NixlPropertiesValidator.class.getClassLoader());

	/** The name of the configurations built only to have one value checked. */
	private static final String PROBE_NAME = "nixl";

	private final NixlProperties properties;

	private final Errors errors;

	NixlPropertiesValidator(NixlProperties properties, Errors errors) {
		this.properties = properties;
		this.errors = errors;
	}

	void validate() {
		if (!this.properties.getAgent().isEnabled()) {
			validateWithoutAgent();
		}
		validateAgent();
		validateEmbedded();
		NixlProperties.Transfer transfer = this.properties.getTransfer();
		core("transfer.stallTimeout", transfer.getStallTimeout(),
				(value) -> AgentConfig.builder(PROBE_NAME).stallTimeout(value).build());
		positive("transfer.timeout", transfer.getTimeout());
		atLeast("transfer.maxInFlight", transfer.getMaxInFlight(), 1);
		validateMetadata();
		NixlProperties.Connect connect = this.properties.getConnect();
		positive("connect.lease", connect.getLease());
		notNegative("connect.peerLinger", connect.getPeerLinger());
		validateKv();
		notNegative("shutdown.timeout", this.properties.getShutdown().getTimeout());
	}

	/**
	 * Without an agent, what needs one is refused rather than silently left out.
	 */
	private void validateWithoutAgent() {
		if (this.properties.getKv().getLayers() != null) {
			reject("kv.layers", "needs a NIXL agent, but nixl.agent.enabled is false");
		}
		if (this.properties.getMetadata().getExchange() == ExchangeType.NIXL_ETCD) {
			reject("metadata.exchange",
					"nixl-etcd is NIXL's own etcd client inside an agent, but nixl.agent.enabled is false; "
							+ "use etcd or http");
		}
	}

	private void validateAgent() {
		NixlProperties.Agent agent = this.properties.getAgent();
		String name = agent.getName();
		if (name != null && name.length() > MAX_NAME_LENGTH) {
			reject("agent.name", "must be at most " + MAX_NAME_LENGTH + " characters");
		}
		else if (name != null) {
			core("agent.name", name, (value) -> AgentConfig.builder(value).build());
		}
		List<NixlProperties.Backend> backends = agent.getBackends();
		for (int i = 0; i < backends.size(); i++) {
			String plugin = backends.get(i).getPlugin();
			if (plugin == null) {
				reject("agent.backends[" + i + "].plugin", "must name a NIXL plugin, for example UCX");
			}
			else {
				core("agent.backends[" + i + "].plugin", plugin, BackendConfig::of);
			}
		}
		core("agent.nativeProgressDelay", agent.getNativeProgressDelay(),
				(value) -> AgentConfig.builder(PROBE_NAME).nativeProgressDelay(value).build());
		core("agent.mailboxCapacity", agent.getMailboxCapacity(),
				(value) -> AgentConfig.builder(PROBE_NAME).mailboxCapacity(value).build());
		core("agent.mailboxPerSender", agent.getMailboxPerSender(),
				(value) -> AgentConfig.builder(PROBE_NAME).mailboxPerSender(value).build());
	}

	private void validateEmbedded() {
		int port = this.properties.getEmbedded().getPort();
		if (port < 0 || port > 65535) {
			reject("embedded.port", "must be within 0..65535 (0 picks a free port)");
		}
		NixlProperties.Embedded embedded = this.properties.getEmbedded();
		core("embedded.maxConnections", embedded.getMaxConnections(),
				(value) -> EmbeddedOptions.builder().maxConnections(value).build());
		core("embedded.helloTimeout", embedded.getHelloTimeout(),
				(value) -> EmbeddedOptions.builder().helloTimeout(value).build());
		core("embedded.frameTimeout", embedded.getFrameTimeout(),
				(value) -> EmbeddedOptions.builder().frameTimeout(value).build());
		core("embedded.responseTimeout", embedded.getResponseTimeout(),
				(value) -> EmbeddedOptions.builder().responseTimeout(value).build());
	}

	private void validateMetadata() {
		NixlProperties.Metadata metadata = this.properties.getMetadata();
		positive("metadata.fetchTimeout", metadata.getFetchTimeout());
		positive("metadata.checkInterval", metadata.getCheckInterval());
		DataSize maxSize = metadata.getMaxSize();
		if (maxSize == null || maxSize.toBytes() < 1 || maxSize.toBytes() > MAX_METADATA_BYTES) {
			reject("metadata.maxSize", "must be between 1B and 2GB");
		}
		NixlProperties.Http http = metadata.getHttp();
		String token = http.getToken();
		if (token != null) {
			String problem = tokenProblem(token);
			if (problem != null) {
				// A field error would print the token as the rejected value: name the
				// property only.
				rejectWithoutValue("metadata.http.token", problem);
			}
		}
		else if (metadata.getExchange() == ExchangeType.HTTP) {
			rejectWithoutValue("metadata.http.token",
					"is required by the http metadata exchange: every request must carry it as a bearer token");
		}
		String basePath = http.getBasePath();
		if (basePath == null || !basePath.startsWith("/") || basePath.endsWith("/") || basePath.contains("//")
				|| basePath.chars().anyMatch(c -> c <= ' ' || c == '?' || c == '#' || c == '*')) {
			reject("metadata.http.basePath", "must start with '/', not end with '/', and hold only path characters");
		}
		positive("metadata.http.requestTimeout", http.getRequestTimeout());
		URI endpoint = http.getEndpoint();
		if (endpoint != null && (!("http".equals(endpoint.getScheme()) || "https".equals(endpoint.getScheme()))
				|| endpoint.getHost() == null)) {
			reject("metadata.http.endpoint", "must be an absolute http or https URI with a host");
		}
		if (http.getSslBundle() != null && endpoint != null && !"https".equals(endpoint.getScheme())) {
			reject("metadata.http.sslBundle", "applies to an https endpoint only; the endpoint is " + endpoint);
		}
		NixlProperties.Registry registry = http.getRegistry();
		core("metadata.http.registry.maxEntries", registry.getMaxEntries(),
				MetadataRegistryHandler.builder()::maxEntries);
		if (registry.getMaxTotalSize() == null
				|| (maxSize != null && registry.getMaxTotalSize().toBytes() < maxSize.toBytes())) {
			reject("metadata.http.registry.maxTotalSize",
					"must be at least nixl.metadata.max-size, or an entry of the largest size never fits");
		}
		Duration entryTtl = registry.getEntryTtl();
		if (entryTtl == null || entryTtl.compareTo(Duration.ofMillis(100)) < 0) {
			reject("metadata.http.registry.entryTtl",
					"must be at least 100ms: clients renew every third of it, over the network");
		}
		Integer sharedEntries = registry.getSharedTokenMaxEntries();
		if (sharedEntries != null && sharedEntries <= 0) {
			reject("metadata.http.registry.sharedTokenMaxEntries", "must be positive");
		}
		if (registry.getSharedTokenMaxTotalSize() != null && registry.getSharedTokenMaxTotalSize().toBytes() <= 0) {
			reject("metadata.http.registry.sharedTokenMaxTotalSize", "must be positive");
		}
		Duration bodyTimeout = registry.getBodyTimeout();
		if (bodyTimeout == null || bodyTimeout.compareTo(Duration.ofMillis(100)) < 0) {
			reject("metadata.http.registry.bodyTimeout", "must be at least 100ms");
		}
		if (registry.getMinBodyRate() == null || registry.getMinBodyRate().toBytes() < 0) {
			reject("metadata.http.registry.minBodyRate", "must not be negative (0 turns the rate off)");
		}
		NixlProperties.Etcd etcd = metadata.getEtcd();
		if (metadata.getExchange() == ExchangeType.ETCD || metadata.getExchange() == ExchangeType.NIXL_ETCD) {
			if (etcd.getEndpoints() == null || etcd.getEndpoints().isEmpty()) {
				reject("metadata.etcd.endpoints", "must list at least one etcd endpoint");
			}
			else {
				for (int i = 0; i < etcd.getEndpoints().size(); i++) {
					if (!isHttpUri(etcd.getEndpoints().get(i))) {
						reject("metadata.etcd.endpoints[" + i + "]",
								"must be an http or https URI with host and port, for example http://127.0.0.1:2379");
					}
				}
			}
		}
		if (etcd.getNamespace() == null || etcd.getNamespace().isEmpty() || etcd.getNamespace().indexOf('\0') >= 0) {
			reject("metadata.etcd.namespace", "must not be empty");
		}
		if (metadata.getExchange() == ExchangeType.ETCD && ETCD_PRESENT) {
			// Only nixl4j's etcd client uses these two, and its classes load only when it
			// is chosen.
			core("metadata.etcd.leaseTtl", etcd.getLeaseTtl(), EtcdRules::leaseTtl);
			core("metadata.etcd.operationTimeout", etcd.getOperationTimeout(), EtcdRules::operationTimeout);
		}
		boolean hasUser = etcd.getUsername() != null && !etcd.getUsername().isBlank();
		boolean hasPassword = etcd.getPassword() != null && !etcd.getPassword().isEmpty();
		if (hasUser != hasPassword) {
			if (hasUser) {
				rejectWithoutValue("metadata.etcd.password", "is required with nixl.metadata.etcd.username");
			}
			else {
				rejectWithoutValue("metadata.etcd.username", "is required with nixl.metadata.etcd.password");
			}
		}
	}

	private void validateKv() {
		NixlProperties.Kv kv = this.properties.getKv();
		if (kv.getLayers() == null) {
			return;
		}
		// each dimension alone first, so that the report names the property and its value
		int errors = this.errors.getErrorCount();
		core("kv.layers", kv.getLayers(), (value) -> kvProbe().layers(value).build());
		core("kv.blocks", kv.getBlocks(), (value) -> kvProbe().blocks(value).build());
		core("kv.blockSize", kv.getBlockSize(), (value) -> kvProbe().blockSize(value).build());
		core("kv.kvHeads", kv.getKvHeads(), (value) -> kvProbe().kvHeads(value).build());
		core("kv.headDim", kv.getHeadDim(), (value) -> kvProbe().headDim(value).build());
		core("kv.dtypeSize", kv.getDtypeSize(), (value) -> kvProbe().dtypeSize(value).build());
		if (this.errors.getErrorCount() == errors) {
			try {
				NixlKvCacheConfiguration.layout(kv);
			}
			catch (IllegalArgumentException ex) {
				rejectWithoutValue("kv", "does not describe a valid KV cache layout: " + ex.getMessage());
			}
		}
		core("kv.device", kv.getDevice(), Device::ofWireName);
		atLeast("kv.rank", kv.getRank(), 0);
		positive("kv.leaseTtl", kv.getLeaseTtl());
		notNegative("kv.confirmationResend", kv.getConfirmationResend());
		if (kv.getModelFingerprint() != null) {
			core("kv.modelFingerprint", kv.getModelFingerprint(), RemoteCacheHandle::requireModelFingerprint);
		}
	}

	/** A layout of one of everything, to have a single dimension checked. */
	private static KvCacheLayout.Builder kvProbe() {
		return KvCacheLayout.builder().layers(1).blocks(1).blockSize(1).kvHeads(1).headDim(1);
	}

	/**
	 * Says what is wrong with a bearer token, without repeating it.
	 * @param token the token
	 * @return the problem, or {@code null} when it is well formed
	 */
	static @Nullable String tokenProblem(String token) {
		if (token.length() < MIN_TOKEN_LENGTH) {
			return "must be at least " + MIN_TOKEN_LENGTH + " characters long (it has " + token.length() + ")";
		}
		return HttpMetadataExchange.tokenProblem(token);
	}

	private static boolean isHttpUri(@Nullable String value) {
		if (value == null) {
			return false;
		}
		try {
			URI uri = URI.create(value);
			return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null
					&& uri.getPort() > 0;
		}
		catch (IllegalArgumentException ex) {
			return false;
		}
	}

	/**
	 * Gives a value to the core type that takes it and reports what that type refuses.
	 * @param field the property, relative to {@code nixl.}
	 * @param value the value, or {@code null} when it was bound empty
	 * @param check creates the core object with the value
	 */
	private <T> void core(String field, @Nullable T value, Consumer<T> check) {
		if (value == null) {
			reject(field, "must be set");
			return;
		}
		try {
			check.accept(value);
		}
		catch (IllegalArgumentException ex) {
			reject(field, Objects.requireNonNullElse(ex.getMessage(), ex.toString()));
		}
	}

	private void positive(String field, @Nullable Duration value) {
		String problem = SettingChecks.positiveProblem(value);
		if (problem != null) {
			reject(field, problem);
		}
	}

	private void notNegative(String field, @Nullable Duration value) {
		String problem = SettingChecks.notNegativeProblem(value);
		if (problem != null) {
			reject(field, problem);
		}
	}

	private void atLeast(String field, int value, int minimum) {
		if (value < minimum) {
			reject(field, "must be at least " + minimum);
		}
	}

	private void reject(String field, String message) {
		// Spring Boot's report prints the field as the property's name: give it in kebab
		// case.
		this.errors.rejectValue(dashed(field), "nixl.invalid", message);
	}

	private void rejectWithoutValue(String field, String message) {
		this.errors.reject("nixl.invalid", "nixl." + dashed(field) + " " + message);
	}

	private static String dashed(String field) {
		StringBuilder dashed = new StringBuilder();
		for (char c : field.toCharArray()) {
			if (Character.isUpperCase(c)) {
				dashed.append('-').append(Character.toLowerCase(c));
			}
			else {
				dashed.append(c);
			}
		}
		return dashed.toString();
	}

	/**
	 * The rules of nixl-metadata-etcd, an optional dependency: loaded only when it is
	 * present.
	 */
	private static final class EtcdRules {

		static void leaseTtl(Duration ttl) {
			EtcdMetadataExchange.builder().leaseTtl(ttl);
		}

		static void operationTimeout(Duration timeout) {
			EtcdMetadataExchange.builder().operationTimeout(timeout);
		}

	}

}
