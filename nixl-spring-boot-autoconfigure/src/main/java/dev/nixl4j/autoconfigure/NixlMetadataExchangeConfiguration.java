package dev.nixl4j.autoconfigure;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.EtcdMetadataExchange;
import dev.nixl4j.metadata.HttpMetadataExchange;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.NixlEtcdMetadataExchange;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The metadata exchange named by {@code nixl.metadata.exchange}, wrapped by every
 * {@link MetadataExchangeCustomizer}.
 */
@Configuration(proxyBeanMethods = false)
class NixlMetadataExchangeConfiguration {

	static MetadataExchange customize(MetadataExchange exchange,
			ObjectProvider<MetadataExchangeCustomizer> customizers) {
		MetadataExchange customized = exchange;
		for (MetadataExchangeCustomizer customizer : customizers.orderedStream().toList()) {
			customized = customizer.customize(customized);
		}
		return customized;
	}

	static int maxBytes(NixlProperties properties) {
		return (int) properties.getMetadata().getMaxSize().toBytes();
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "nixl.metadata.exchange", havingValue = "http")
	static class Http {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean
		MetadataExchange nixlMetadataExchange(NixlProperties properties,
				ObjectProvider<MetadataExchangeCustomizer> customizers) {
			NixlProperties.Http http = properties.getMetadata().getHttp();
			if (http.getEndpoint() == null) {
				// This application is the registry: its own store, served over HTTP to peers.
				return customize(new InMemoryMetadataExchange(maxBytes(properties)), customizers);
			}
			HttpMetadataExchange.Builder builder = HttpMetadataExchange.builder(http.getEndpoint())
				.requestTimeout(http.getRequestTimeout())
				.maxBytes(maxBytes(properties));
			if (http.getToken() != null) {
				builder.token(http.getToken());
			}
			return customize(builder.build(), customizers);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "nixl.metadata.exchange", havingValue = "etcd")
	@ConditionalOnClass(name = "io.etcd.jetcd.Client")
	static class Etcd {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean
		MetadataExchange nixlMetadataExchange(NixlProperties properties, EtcdConnectionDetails connection,
				ObjectProvider<MetadataExchangeCustomizer> customizers) {
			NixlProperties.Etcd etcd = properties.getMetadata().getEtcd();
			return customize(EtcdMetadataExchange.builder()
				.endpoints(connection.endpoints().toArray(String[]::new))
				.namespace(etcd.getNamespace())
				.leaseTtl(etcd.getLeaseTtl())
				.operationTimeout(etcd.getOperationTimeout())
				.maxValueBytes(maxBytes(properties))
				.build(), customizers);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "nixl.metadata.exchange", havingValue = "nixl-etcd")
	static class NixlEtcd {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean
		MetadataExchange nixlMetadataExchange(NixlAgent agent,
				ObjectProvider<MetadataExchangeCustomizer> customizers) {
			return customize(new NixlEtcdMetadataExchange(agent), customizers);
		}

	}

}
