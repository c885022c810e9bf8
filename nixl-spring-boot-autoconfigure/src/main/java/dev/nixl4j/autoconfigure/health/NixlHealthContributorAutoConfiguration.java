package dev.nixl4j.autoconfigure.health;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.autoconfigure.EtcdConnectionDetails;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.NixlLifecycle;
import dev.nixl4j.autoconfigure.NixlProperties;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code nixl} health contributor
 * ({@link NixlHealthIndicator}). Turned off with
 * {@code management.health.nixl.enabled=false}. With NIXL's own etcd exchange
 * ({@code nixl.metadata.exchange=nixl-etcd}) it also reports DOWN while etcd cannot be
 * reached within {@code nixl.metadata.etcd.operation-timeout}. Its details show names and
 * paths as {@link NamesInHealth} decides from {@code nixl.endpoint.show-names} and the
 * health endpoint's {@code show-details}.
 */
@AutoConfiguration(after = NixlAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(NixlAgent.class)
@ConditionalOnEnabledHealthIndicator("nixl")
public final class NixlHealthContributorAutoConfiguration {

	NixlHealthContributorAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean(name = { "nixlHealthIndicator", "nixlHealthContributor" })
	NixlHealthIndicator nixlHealthIndicator(NixlAgent agent, ObjectProvider<NixlLifecycle> lifecycle,
			NixlProperties properties, ObjectProvider<EtcdConnectionDetails> etcdConnection,
			ObjectProvider<KvConsumer> kvConsumer, ObjectProvider<KvProducer> kvProducer, BeanFactory beans) {
		NixlLifecycle nixl = lifecycle.getIfUnique();
		NixlHealthIndicator indicator = new NixlHealthIndicator(agent)
			.withPublication((nixl != null) ? nixl.publication() : null)
			.withKvConsumer(kvConsumer.getIfUnique())
			.withKvProducer(kvProducer.getIfUnique())
			.withNames(new NamesInHealth(properties.getEndpoint(), beans));
		EtcdConnectionDetails etcd = etcdConnection.getIfUnique();
		if (properties.getMetadata().getExchange() == NixlProperties.ExchangeType.NIXL_ETCD && etcd != null) {
			// NIXL's own etcd client reports nothing back: check that etcd can be reached
			indicator.withEtcdEndpoints(etcd.endpoints(), properties.getMetadata().getEtcd().getOperationTimeout());
		}
		return indicator;
	}

}
