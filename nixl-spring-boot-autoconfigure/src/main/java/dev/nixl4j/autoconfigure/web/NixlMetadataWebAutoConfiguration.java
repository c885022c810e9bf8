package dev.nixl4j.autoconfigure.web;

import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.autoconfigure.NixlProperties;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.http.MetadataRegistryHandler;
import jakarta.servlet.Servlet;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.util.unit.DataSize;

/**
 * Serves the HTTP metadata registry from a servlet web application: with
 * {@code nixl.metadata.exchange=http} and no {@code nixl.metadata.http.endpoint} (or
 * {@code nixl.metadata.http.serve=true}), a {@link MetadataRegistryServlet} under
 * {@code nixl.metadata.http.base-path} answers peers from the {@link MetadataExchange}
 * bean, every request authorized by the bearer token {@code nixl.metadata.http.token}
 * (unless {@code nixl.metadata.http.registry.accept-shared-token=false}) or by a client's
 * own ({@code nixl.metadata.http.registry.clients.<id>.token}), which may change only the
 * agent names of its prefixes, within its quota (the shared token's holders share one:
 * {@code nixl.metadata.http.registry.shared-token-max-entries} and
 * {@code shared-token-max-total-size}). Each entry can be changed only by the peer that
 * created it, or reclaimed by the client that owns its name; entries expire after
 * {@code nixl.metadata.http.registry.entry-ttl} without renewal, and the registry holds
 * at most {@code nixl.metadata.http.registry.max-entries} entries and
 * {@code nixl.metadata.http.registry.max-total-size} bytes of them. A {@code PUT} body
 * must arrive within {@code nixl.metadata.http.registry.body-timeout} and at
 * {@code min-body-rate}. TLS is the web server's ({@code server.ssl.*}). The
 * {@link MetadataRegistryHandler} is a bean of its own, which the registry's health
 * contributor reads. An application with {@code nixl.agent.enabled=false} serves the
 * registry and nothing else.
 */
@AutoConfiguration(after = NixlAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(Servlet.class)
@ConditionalOnProperty(name = "nixl.metadata.exchange", havingValue = "http")
@Conditional(OnMetadataRegistryServedCondition.class)
@ConditionalOnBean(MetadataExchange.class)
public final class NixlMetadataWebAutoConfiguration {

	/** The name of the servlet and of its registration bean. */
	public static final String SERVLET_NAME = "nixlMetadataRegistryServlet";

	NixlMetadataWebAutoConfiguration() {
	}

	@Bean
	@ConditionalOnMissingBean
	MetadataRegistryHandler nixlMetadataRegistryHandler(MetadataExchange exchange, NixlProperties properties) {
		NixlProperties.Http http = properties.getMetadata().getHttp();
		String token = http.getToken();
		if (token == null) {
			// NixlProperties refuses the http exchange without a token; this guards a
			// bean made otherwise
			throw new IllegalStateException("nixl.metadata.http.token is required to serve the metadata registry");
		}
		NixlProperties.Registry registry = http.getRegistry();
		MetadataRegistryHandler.Builder builder = MetadataRegistryHandler.builder()
			.basePath(http.getBasePath())
			.store(exchange)
			.maxBytes((int) properties.getMetadata().getMaxSize().toBytes())
			.maxEntries(registry.getMaxEntries())
			.maxTotalBytes(registry.getMaxTotalSize().toBytes())
			.entryTtl(registry.getEntryTtl());
		if (registry.isAcceptSharedToken()) {
			builder.token(token);
			Integer sharedEntries = registry.getSharedTokenMaxEntries();
			DataSize sharedBytes = registry.getSharedTokenMaxTotalSize();
			if (sharedEntries != null || sharedBytes != null) {
				// the one not set keeps its default
				boolean clients = !registry.getClients().isEmpty();
				builder.sharedTokenQuota(
						(sharedEntries != null) ? sharedEntries
								: (clients ? MetadataRegistryHandler.DEFAULT_CLIENT_MAX_ENTRIES
										: registry.getMaxEntries()),
						(sharedBytes != null) ? sharedBytes.toBytes()
								: (clients ? MetadataRegistryHandler.DEFAULT_CLIENT_MAX_TOTAL_BYTES
										: registry.getMaxTotalSize().toBytes()));
			}
		}
		else if (registry.getClients().isEmpty()) {
			throw new IllegalStateException("nixl.metadata.http.registry.accept-shared-token=false needs at least one "
					+ "client in nixl.metadata.http.registry.clients.<id>.token");
		}
		registry.getClients().forEach((id, client) -> {
			String clientToken = client.getToken();
			if (clientToken == null) {
				throw new IllegalStateException("nixl.metadata.http.registry.clients." + id + ".token is required");
			}
			builder.client(id, clientToken, client.getAgentNamePrefixes(), client.getMaxEntries(),
					client.getMaxTotalSize().toBytes());
		});
		return builder.build();
	}

	@Bean(SERVLET_NAME)
	@ConditionalOnMissingBean(name = SERVLET_NAME)
	ServletRegistrationBean<MetadataRegistryServlet> nixlMetadataRegistryServlet(MetadataRegistryHandler handler,
			NixlProperties properties) {
		NixlProperties.Registry registry = properties.getMetadata().getHttp().getRegistry();
		ServletRegistrationBean<MetadataRegistryServlet> registration = new ServletRegistrationBean<>(
				new MetadataRegistryServlet(handler, registry.getBodyTimeout(), registry.getMinBodyRate().toBytes()),
				handler.basePath() + "/*");
		// the servlet reads bodies with non-blocking reads under its own deadline
		registration.setAsyncSupported(true);
		registration.setName(SERVLET_NAME);
		// started with the server, so that entries expire on time before any request
		registration.setLoadOnStartup(1);
		return registration;
	}

}
