package dev.nixl4j.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Drain;
import dev.nixl4j.DrainParticipant;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.TransferListener;
import dev.nixl4j.connect.Connector;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.KvDirectory;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.lifecycle.AgentLifecycle;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of a NIXL agent from {@code nixl.*} properties, its metadata
 * exchange, a {@link Connector}, an optional managed KV cache and graceful shutdown. With
 * {@code nixl.agent.enabled=false} only the metadata exchange is configured: no agent, no
 * connector, no KV cache and no native library, as a registry-only application needs.
 *
 * <p>
 * Every {@link TransferListener} bean is added to the agent bean once it is created, in
 * {@code @Order} order: see {@link TransferListenerOrder} for the orders of the
 * auto-configured ones.
 */
@AutoConfiguration
@EnableConfigurationProperties(NixlProperties.class)
@Import({ NixlMetadataExchangeConfiguration.class, NixlKvCacheConfiguration.class })
public final class NixlAutoConfiguration {

	NixlAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	EtcdConnectionDetails nixlEtcdConnectionDetails(NixlProperties properties, ObjectProvider<SslBundles> sslBundles) {
		return new PropertiesEtcdConnectionDetails(properties.getMetadata().getEtcd(), sslBundles.getIfAvailable());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "nixl.agent.enabled", matchIfMissing = true)
	AgentConfig nixlAgentConfig(NixlProperties properties, Environment environment,
			ObjectProvider<EtcdConnectionDetails> etcd, ObjectProvider<NixlAgentConfigCustomizer> customizers) {
		AgentConfig.Builder builder = AgentConfigs.builder(properties, environment, etcd.getIfAvailable());
		customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
		return builder.build();
	}

	@Bean
	@ConditionalOnMissingBean
	NixlTimeouts nixlTimeouts(NixlProperties properties) {
		return new PropertiesNixlTimeouts(properties.getTransfer());
	}

	@Bean
	static TransferListenersPostProcessor nixlTransferListenersPostProcessor(
			ObjectProvider<TransferListener> listeners) {
		return new TransferListenersPostProcessor(listeners);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "nixl.agent.enabled", matchIfMissing = true)
	@Order(TransferListenerOrder.DRAIN)
	Drain nixlDrain(AgentConfig config) {
		return new Drain(config.name());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "nixl.agent.enabled", matchIfMissing = true)
	NixlAgent nixlAgent(AgentConfig config) {
		return AgentConfigs.create(config);
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "nixl.agent.enabled", matchIfMissing = true)
	@ConditionalOnBooleanProperty(name = "nixl.connect.enabled", matchIfMissing = true)
	Connector nixlConnector(NixlAgent agent, NixlProperties properties) {
		return Connector.builder(agent)
			.lease(properties.getConnect().getLease())
			.peerLinger(properties.getConnect().getPeerLinger())
			.build();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "nixl.agent.enabled", matchIfMissing = true)
	NixlLifecycle nixlLifecycle(NixlAgent agent, Drain drain, ObjectProvider<DrainParticipant> participants,
			NixlProperties properties, ObjectProvider<MetadataExchange> exchange,
			ObjectProvider<NixlEtcdMetadata> nixlEtcd, ObjectProvider<KvProducer> kvProducer,
			ObjectProvider<Connector> connector, ObjectProvider<PagedKvCache> kvCache,
			ObjectProvider<EtcdConnectionDetails> etcdConnection) {
		// Closed in this order: users of memory before the memory itself.
		List<AutoCloseable> users = new ArrayList<>();
		kvProducer.ifUnique(users::add);
		connector.ifUnique(users::add);
		kvCache.ifUnique(users::add);
		AgentLifecycle.Builder builder = AgentLifecycle.builder(agent)
			.drain(drain)
			.participants(participants.orderedStream().toList())
			.publishAtStart(properties.getMetadata().isPublish())
			.checkInterval(properties.getMetadata().getCheckInterval())
			.shutdownTimeout(properties.getShutdown().getTimeout())
			.closeBeforeAgent(users);
		MetadataExchange available = exchange.getIfUnique();
		NixlEtcdMetadata nixlOwn = nixlEtcd.getIfUnique();
		if (available == null && nixlOwn != null) {
			return new NixlLifecycle(builder.nixlEtcd(nixlOwn).build());
		}
		if (available != null) {
			MetadataPublication.Builder publication = MetadataPublication.builder(available, agent)
				.checkInterval(properties.getMetadata().getCheckInterval());
			// consumers find a producer's cache by its name: the handle goes beside the
			// metadata
			kvCache.ifUnique(cache -> publication.document(KvDirectory.HANDLE_DOCUMENT, cache.handle().toJson()));
			builder.publication(publication.build());
		}
		NixlLifecycle lifecycle = new NixlLifecycle(builder.build());
		NixlProperties.Metadata metadata = properties.getMetadata();
		EtcdConnectionDetails etcd = etcdConnection.getIfUnique();
		if (metadata.getExchange() == NixlProperties.ExchangeType.ETCD && etcd != null) {
			lifecycle
				.exchangeLocation(
						(etcd instanceof PropertiesEtcdConnectionDetails) ? "nixl.metadata.etcd.endpoints"
								: "the etcd endpoints of " + etcd.getClass().getName(),
						String.join(",", etcd.endpoints()));
		}
		else if (metadata.getExchange() == NixlProperties.ExchangeType.HTTP
				&& metadata.getHttp().getEndpoint() != null) {
			lifecycle.exchangeLocation("nixl.metadata.http.endpoint", String.valueOf(metadata.getHttp().getEndpoint()));
		}
		return lifecycle;
	}

}
