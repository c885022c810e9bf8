package dev.nixl4j.autoconfigure.metrics;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.TransferListenerOrder;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.micrometer.NixlAgentMetrics;
import dev.nixl4j.micrometer.NixlCompatibleMetrics;
import dev.nixl4j.micrometer.NixlCompatibleTransfers;
import dev.nixl4j.micrometer.NixlKvMetrics;
import dev.nixl4j.micrometer.NixlTransferDurations;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

/**
 * Auto-configuration of the agent's meters ({@link NixlAgentMetrics}), whose duration
 * timer is recorded by the {@link NixlTransferDurations} transfer listener bean (order
 * {@link TransferListenerOrder#METRICS}). Boot's
 * {@code management.metrics.enable.nixl=false} turns them off;
 * {@code management.metrics.distribution.*.nixl.transfer.duration} shapes the duration
 * timer. With a {@link KvProducer} or {@link KvConsumer} bean, their meters too
 * ({@link NixlKvMetrics}). With {@code nixl.metrics.nixl-names=true}, the agent's meters
 * also under the names of NIXL's Prometheus exporter ({@link NixlCompatibleMetrics}, fed
 * by the {@link NixlCompatibleTransfers} transfer listener bean).
 */
@AutoConfiguration(after = NixlAutoConfiguration.class, afterName = {
		"org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass({ MeterBinder.class, NixlAgentMetrics.class })
@ConditionalOnBean({ NixlAgent.class, MeterRegistry.class })
public final class NixlMetricsAutoConfiguration {

	NixlMetricsAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	@Order(TransferListenerOrder.METRICS)
	NixlTransferDurations nixlTransferDurations(AgentConfig config) {
		return new NixlTransferDurations(config.name(), Tags.empty());
	}

	@Bean
	@ConditionalOnMissingBean
	NixlAgentMetrics nixlAgentMetrics(NixlAgent agent, NixlTransferDurations durations) {
		return NixlAgentMetrics.builder(agent).durations(durations).build();
	}

	/**
	 * The agent's meters under the names of NIXL's Prometheus exporter.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty("nixl.metrics.nixl-names")
	static final class NixlNamesConfiguration {

		NixlNamesConfiguration() {
		}

		@Bean
		@ConditionalOnMissingBean
		@Order(TransferListenerOrder.METRICS)
		NixlCompatibleTransfers nixlCompatibleTransfers(AgentConfig config) {
			return new NixlCompatibleTransfers(config.name(), config.telemetry());
		}

		@Bean
		@ConditionalOnMissingBean
		NixlCompatibleMetrics nixlCompatibleMetrics(NixlAgent agent, NixlCompatibleTransfers transfers) {
			return new NixlCompatibleMetrics(agent, transfers);
		}

	}

	/**
	 * The meters of the KV producer and consumer, when there is either
	 * ({@code nixl.kv.layers} set, or the application's own).
	 */
	@Configuration(proxyBeanMethods = false)
	@Conditional(OnKvProducerOrConsumer.class)
	static final class KvMetricsConfiguration {

		KvMetricsConfiguration() {
		}

		@Bean
		@ConditionalOnMissingBean
		NixlKvMetrics nixlKvMetrics(ObjectProvider<KvProducer> producer, ObjectProvider<KvConsumer> consumer) {
			return NixlKvMetrics.builder().producer(producer.getIfUnique()).consumer(consumer.getIfUnique()).build();
		}

	}

	static final class OnKvProducerOrConsumer extends AnyNestedCondition {

		OnKvProducerOrConsumer() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnSingleCandidate(KvProducer.class)
		static final class Producer {

		}

		@ConditionalOnSingleCandidate(KvConsumer.class)
		static final class Consumer {

		}

	}

}
