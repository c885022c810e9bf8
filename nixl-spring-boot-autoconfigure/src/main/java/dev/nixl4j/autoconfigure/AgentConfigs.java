package dev.nixl4j.autoconfigure;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.HexFormat;
import java.util.List;
import java.util.OptionalInt;
import java.util.concurrent.ThreadLocalRandom;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.BackendCreationException;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.autoconfigure.NixlProperties.ExchangeType;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.Environment;

/**
 * Builds an {@link AgentConfig} from {@link NixlProperties} and creates the agent,
 * turning a backend that cannot be created into an error naming its property.
 */
final class AgentConfigs {

	private AgentConfigs() {
	}

	static AgentConfig.Builder builder(NixlProperties properties, Environment environment,
			@Nullable EtcdConnectionDetails etcd) {
		NixlProperties.Agent agent = properties.getAgent();
		AgentConfig.Builder builder = AgentConfig.builder(agentName(agent.getName(), environment))
			.engine(agent.getEngine())
			.threadSync(agent.getThreadSync())
			.nativeProgressThread(agent.isNativeProgressThread())
			.nativeProgressDelay(agent.getNativeProgressDelay())
			.telemetry(agent.isTelemetry())
			.mailboxCapacity(agent.getMailboxCapacity())
			.mailboxPerSender(agent.getMailboxPerSender())
			.stallTimeout(properties.getTransfer().getStallTimeout())
			.nativeLibraryDirectory(properties.getNative().getLibraryDirectory())
			.embedded(embedded(properties.getEmbedded()));
		builder.backends(agent.getBackends()
			.stream()
			.map(backend -> new BackendConfig(backend.getPlugin(), backend.getParameters()))
			.toArray(BackendConfig[]::new));
		properties.getNative().getEnvironment().forEach(builder::nativeEnvironment);
		if (properties.getMetadata().getExchange() == ExchangeType.NIXL_ETCD && etcd != null) {
			NixlEtcdMetadata.configure(builder, String.join(",", etcd.endpoints()),
					properties.getMetadata().getEtcd().getNamespace());
		}
		return builder;
	}

	private static String agentName(@Nullable String configured, Environment environment) {
		if (configured != null) {
			return configured;
		}
		String application = environment.getProperty("spring.application.name", "nixl");
		byte[] suffix = new byte[4];
		ThreadLocalRandom.current().nextBytes(suffix);
		return application + "-" + HexFormat.of().formatHex(suffix);
	}

	private static EmbeddedOptions embedded(NixlProperties.Embedded embedded) {
		InetAddress address;
		try {
			address = (embedded.getAddress() != null) ? InetAddress.getByName(embedded.getAddress())
					: InetAddress.getLoopbackAddress();
		}
		catch (UnknownHostException ex) {
			throw new InvalidConfigurationPropertyValueException("nixl.embedded.address", embedded.getAddress(),
					"the address cannot be resolved: " + ex.getMessage());
		}
		return EmbeddedOptions.builder()
			.listenAddress(new InetSocketAddress(address, embedded.getPort()))
			.inProcessCopies(embedded.isInProcessCopies())
			.maxConnections(embedded.getMaxConnections())
			.helloTimeout(embedded.getHelloTimeout())
			.frameTimeout(embedded.getFrameTimeout())
			.responseTimeout(embedded.getResponseTimeout())
			.sameHost(embedded.isSameHost())
			.build();
	}

	/**
	 * Creates the agent. A backend that cannot be created is reported against its
	 * property when the configuration came from properties.
	 * @param config the configuration
	 * @return the agent
	 */
	static NixlAgent create(AgentConfig config) {
		try {
			return NixlAgent.create(config);
		}
		catch (BackendCreationException ex) {
			throw reported(ex, config);
		}
	}

	/**
	 * The failure to report for a backend that could not be created: one naming the
	 * backend's property when the failure names a backend of the configuration, else the
	 * failure itself.
	 * @param failure the failure
	 * @param config the configuration the agent was created from
	 * @return the failure to throw
	 */
	static RuntimeException reported(BackendCreationException failure, AgentConfig config) {
		OptionalInt index = failure.index();
		List<BackendConfig> backends = config.backends();
		if (index.isPresent() && index.getAsInt() < backends.size()
				&& backends.get(index.getAsInt()).plugin().equals(failure.backend())) {
			return new InvalidConfigurationPropertyValueException(
					"nixl.agent.backends[" + index.getAsInt() + "].plugin", failure.backend(), failure.getMessage());
		}
		return failure;
	}

}
