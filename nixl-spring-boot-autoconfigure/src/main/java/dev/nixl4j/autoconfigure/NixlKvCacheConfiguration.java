package dev.nixl4j.autoconfigure;

import java.util.Objects;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.connect.Device;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvObserver;
import dev.nixl4j.kv.KvCacheTooLargeException;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A managed paged KV cache when {@code nixl.kv.layers} is set: the cache, registered with
 * the agent, and the producer and consumer that move its blocks (the producer's leases
 * checked as {@code nixl.kv.integrity} says, both observed by the application's
 * {@link KvObserver} if it has one). Peers are loaded through the metadata exchange when
 * there is one. A cache that cannot fit in the memory the process can have beside its
 * heap fails the start before anything is allocated ({@link KvCacheTooLargeException}),
 * naming {@code nixl.kv.blocks}. The producer's leases last {@code nixl.kv.lease-ttl}
 * unless their options say otherwise. The cache's handle is published beside the agent's
 * metadata by the agent's own publication (the lifecycle's), so the producer is given the
 * peer loader and the exchange to watch consumers in, not the exchange to publish in.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "nixl.kv.layers")
@ConditionalOnBooleanProperty(name = "nixl.agent.enabled", matchIfMissing = true)
class NixlKvCacheConfiguration {

	static KvCacheLayout layout(NixlProperties.Kv kv) {
		if (kv.getLayers() == null) {
			throw new IllegalArgumentException("layers is not set");
		}
		return KvCacheLayout.builder()
			.layers(kv.getLayers())
			.splitKv(kv.isSplitKv())
			.blocks(kv.getBlocks())
			.blockSize(kv.getBlockSize())
			.kvHeads(kv.getKvHeads())
			.headDim(kv.getHeadDim())
			.dtypeSize(kv.getDtypeSize())
			.order(kv.getOrder())
			.build();
	}

	@Bean
	@ConditionalOnMissingBean
	KvCacheLayout nixlKvCacheLayout(NixlProperties properties) {
		return layout(properties.getKv());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	PagedKvCache nixlKvCache(NixlAgent agent, KvCacheLayout layout, NixlProperties properties) {
		String modelFingerprint = Objects.requireNonNullElse(properties.getKv().getModelFingerprint(), "");
		Device device = Device.ofWireName(properties.getKv().getDevice());
		PagedKvCache.Builder cache = PagedKvCache.builder(agent, layout).modelFingerprint(modelFingerprint);
		if (device.kind() == Device.Kind.CUDA) {
			cache.device(device.id());
		}
		try {
			return cache.build();
		}
		catch (KvCacheTooLargeException ex) {
			throw new InvalidConfigurationPropertyValueException("nixl.kv.blocks", layout.numBlocks(),
					ex.getMessage() + " (nixl.kv.blocks and the other nixl.kv dimensions set the layout)");
		}
	}

	@Bean
	@ConditionalOnMissingBean
	PeerLoader nixlPeerLoader(ObjectProvider<MetadataExchange> exchange, ObjectProvider<NixlEtcdMetadata> nixlEtcd) {
		MetadataExchange available = exchange.getIfUnique();
		if (available != null) {
			return PeerLoader.of(available);
		}
		return (nixlEtcd.getIfUnique() != null) ? PeerLoader.nixlEtcd() : PeerLoader.preloaded();
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	KvProducer nixlKvProducer(PagedKvCache cache, PeerLoader peers, NixlProperties properties,
			ObjectProvider<MetadataExchange> exchange, ObjectProvider<KvObserver> observer) {
		KvProducer.Builder producer = KvProducer.builder(cache)
			.peers(peers)
			.prefix(KvProducer.DEFAULT_PREFIX)
			.peerTimeout(properties.getMetadata().getFetchTimeout())
			.integrity(properties.getKv().getIntegrity())
			.leaseTtl(properties.getKv().getLeaseTtl());
		observer.ifUnique(producer::observer);
		// the leases of a consumer whose entry leaves the exchange end at once
		exchange.ifUnique(producer::watchConsumers);
		return producer.build();
	}

	/**
	 * The consumer finds producers by name through the metadata exchange, where they
	 * publish their cache handles beside their metadata, and publishes this agent's
	 * metadata through the lifecycle's publication; with NIXL's own etcd exchange, or
	 * none, the application connects it to each producer's handle.
	 */
	@Bean
	@ConditionalOnMissingBean
	KvConsumer nixlKvConsumer(PagedKvCache cache, PeerLoader peers, NixlProperties properties,
			ObjectProvider<MetadataExchange> exchange, ObjectProvider<NixlLifecycle> lifecycle,
			ObjectProvider<KvObserver> observer) {
		KvConsumer.Builder consumer = KvConsumer.builder(cache)
			.rank(properties.getKv().getRank())
			.peers(peers)
			.prefix(KvProducer.DEFAULT_PREFIX)
			.peerTimeout(properties.getMetadata().getFetchTimeout())
			.confirmationResend(properties.getKv().getConfirmationResend());
		observer.ifUnique(consumer::observer);
		MetadataExchange available = exchange.getIfUnique();
		NixlLifecycle managed = lifecycle.getIfUnique();
		MetadataPublication publication = (managed != null) ? managed.publication() : null;
		if (available != null && publication != null) {
			consumer.exchange(available).publication(publication);
		}
		return consumer.build();
	}

}
