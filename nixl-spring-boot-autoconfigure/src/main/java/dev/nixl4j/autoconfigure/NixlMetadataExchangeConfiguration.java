package dev.nixl4j.autoconfigure;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.etcd.EtcdMetadataExchange;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.ssl.NoSuchSslBundleException;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.boot.ssl.SslManagerBundle;
import org.springframework.boot.ssl.SslOptions;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The metadata exchange named by {@code nixl.metadata.exchange}, wrapped by every
 * {@link MetadataExchangeCustomizer}. The HTTP client of an {@code https} endpoint takes
 * its TLS context from the SSL bundle named by {@code nixl.metadata.http.ssl-bundle}.
 * NIXL's own etcd exchange ({@code nixl-etcd}) is no {@link MetadataExchange}, as NIXL
 * hands no fetched bytes back: it is the agent's {@link NixlEtcdMetadata} bean, which the
 * lifecycle publishes through and the KV peer loader loads peers with.
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

		/** The property naming the SSL bundle of an https endpoint. */
		static final String SSL_BUNDLE_PROPERTY = "nixl.metadata.http.ssl-bundle";

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean
		MetadataExchange nixlMetadataExchange(NixlProperties properties, ObjectProvider<SslBundles> sslBundles,
				ObjectProvider<MetadataExchangeCustomizer> customizers) {
			NixlProperties.Http http = properties.getMetadata().getHttp();
			if (http.getEndpoint() == null) {
				// This application is the registry: its own store, served over HTTP to
				// peers.
				return customize(new InMemoryMetadataExchange(maxBytes(properties)), customizers);
			}
			HttpMetadataExchange.Builder builder = HttpMetadataExchange.builder(http.getEndpoint())
				.requestTimeout(http.getRequestTimeout())
				.maxBytes(maxBytes(properties));
			if (http.getToken() != null) {
				builder.token(http.getToken());
			}
			String bundleName = http.getSslBundle();
			if (bundleName != null) {
				SslBundle bundle = sslBundle(bundleName, sslBundles.getIfAvailable());
				SSLContext context = bundle.createSslContext();
				builder.sslContext(context);
				SslOptions options = bundle.getOptions();
				if (options.isSpecified()) {
					SSLParameters parameters = context.getDefaultSSLParameters();
					if (options.getCiphers() != null) {
						parameters.setCipherSuites(options.getCiphers());
					}
					if (options.getEnabledProtocols() != null) {
						parameters.setProtocols(options.getEnabledProtocols());
					}
					builder.sslParameters(parameters);
				}
			}
			return customize(builder.build(), customizers);
		}

		private static SslBundle sslBundle(String name, @Nullable SslBundles bundles) {
			if (bundles == null) {
				throw new InvalidConfigurationPropertyValueException(SSL_BUNDLE_PROPERTY, name,
						"no SSL bundles are configured in this application (spring.ssl.bundle.*)");
			}
			try {
				return bundles.getBundle(name);
			}
			catch (NoSuchSslBundleException ex) {
				throw new InvalidConfigurationPropertyValueException(SSL_BUNDLE_PROPERTY, name,
						"no SSL bundle of that name is configured; define it under spring.ssl.bundle.jks." + name
								+ " or spring.ssl.bundle.pem." + name,
						ex);
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "nixl.metadata.exchange", havingValue = "etcd")
	@ConditionalOnClass(name = { "io.etcd.jetcd.Client", "dev.nixl4j.metadata.etcd.EtcdMetadataExchange" })
	static class Etcd {

		@Bean(destroyMethod = "close")
		@ConditionalOnMissingBean
		MetadataExchange nixlMetadataExchange(NixlProperties properties, EtcdConnectionDetails connection,
				ObjectProvider<MetadataExchangeCustomizer> customizers) {
			NixlProperties.Etcd etcd = properties.getMetadata().getEtcd();
			EtcdMetadataExchange.Builder builder = EtcdMetadataExchange.builder()
				.endpoints(connection.endpoints().toArray(String[]::new))
				.namespace(etcd.getNamespace())
				.leaseTtl(etcd.getLeaseTtl())
				.operationTimeout(etcd.getOperationTimeout())
				.maxValueBytes(maxBytes(properties));
			String username = connection.username();
			if (username != null) {
				String password = connection.password();
				if (password == null) {
					throw new IllegalStateException("the etcd user '" + username + "' of "
							+ connection.getClass().getName() + " has no password");
				}
				builder.credentials(username, password);
			}
			SslBundle bundle = connection.sslBundle();
			if (bundle != null) {
				SslManagerBundle managers = bundle.getManagers();
				builder.tls((bundle.getStores().getKeyStore() != null) ? managers.getKeyManagerFactory() : null,
						managers.getTrustManagerFactory());
			}
			return customize(builder.build(), customizers);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnProperty(name = "nixl.metadata.exchange", havingValue = "nixl-etcd")
	@ConditionalOnBooleanProperty(name = "nixl.agent.enabled", matchIfMissing = true)
	static class NixlEtcd {

		@Bean
		@ConditionalOnMissingBean
		NixlEtcdMetadata nixlEtcdMetadata(NixlAgent agent) {
			return agent.etcdMetadata()
				.orElseThrow(() -> new NixlException(NixlStatus.NOT_SUPPORTED, "send_local_md", agent.name(), null,
						"nixl.metadata.exchange=nixl-etcd needs an agent of the native engine created with NIXL's etcd "
								+ "endpoints, but agent '" + agent.name() + "' runs on the " + agent.engine()
								+ " engine (set nixl.agent.engine=native) or a user AgentConfig bean lacks "
								+ NixlEtcdMetadata.ENDPOINTS_VARIABLE));
		}

	}

}
