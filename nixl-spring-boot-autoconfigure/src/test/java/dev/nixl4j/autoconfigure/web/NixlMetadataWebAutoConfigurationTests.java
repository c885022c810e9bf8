package dev.nixl4j.autoconfigure.web;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.UUID;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.autoconfigure.NixlAutoConfiguration;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import jakarta.servlet.Servlet;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.ServletRegistrationBean;

import static org.assertj.core.api.Assertions.assertThat;

class NixlMetadataWebAutoConfigurationTests {

	private static final String TOKEN = "web-" + UUID.randomUUID();

	private static final String[] REGISTRY = { "nixl.agent.engine=embedded", "nixl.metadata.exchange=http",
			"nixl.metadata.http.token=" + TOKEN };

	/**
	 * A client of a registry elsewhere; nothing listens there, so nothing is published.
	 */
	private static final String[] CLIENT = { "nixl.agent.engine=embedded", "nixl.metadata.exchange=http",
			"nixl.metadata.http.token=" + TOKEN, "nixl.metadata.http.endpoint=https://127.0.0.1:9/nixl",
			"nixl.metadata.publish=false" };

	private final WebApplicationContextRunner web = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetadataWebAutoConfiguration.class,
				SslAutoConfiguration.class));

	@Test
	void aServletServesTheRegistryUnderTheBasePathWhenThisApplicationIsTheRegistry() {
		this.web.withPropertyValues(REGISTRY).run(context -> {
			assertThat(context).hasNotFailed().hasSingleBean(InMemoryMetadataExchange.class);
			ServletRegistrationBean<?> registration = context.getBean(NixlMetadataWebAutoConfiguration.SERVLET_NAME,
					ServletRegistrationBean.class);
			assertThat(registration.getServlet()).isInstanceOf(MetadataRegistryServlet.class);
			assertThat(registration.getUrlMappings()).containsExactly("/nixl/*");
			assertThat(registration.getServletName()).isEqualTo(NixlMetadataWebAutoConfiguration.SERVLET_NAME);
			assertThat(registration.getServlet().toString()).doesNotContain(TOKEN);
		});
	}

	@Test
	void theBasePathIsConfigurable() {
		this.web.withPropertyValues(REGISTRY)
			.withPropertyValues("nixl.metadata.http.base-path=/registry/v1")
			.run(context -> assertThat(
					context.getBean(NixlMetadataWebAutoConfiguration.SERVLET_NAME, ServletRegistrationBean.class)
						.getUrlMappings())
				.containsExactly("/registry/v1/*"));
	}

	@Test
	void aNonWebApplicationServesNothing() {
		new ApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetadataWebAutoConfiguration.class))
			.withPropertyValues(REGISTRY)
			.run(context -> assertThat(context).hasNotFailed()
				.hasSingleBean(MetadataExchange.class)
				.doesNotHaveBean(ServletRegistrationBean.class));
	}

	@Test
	void withoutTheServletApiNothingIsServed() {
		this.web.withPropertyValues(REGISTRY)
			.withClassLoader(new FilteredClassLoader(Servlet.class))
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(ServletRegistrationBean.class));
	}

	@Test
	void serveFalseTurnsServingOff() {
		this.web.withPropertyValues(REGISTRY)
			.withPropertyValues("nixl.metadata.http.serve=false")
			.run(context -> assertThat(context).hasNotFailed()
				.hasSingleBean(MetadataExchange.class)
				.doesNotHaveBean(ServletRegistrationBean.class));
	}

	@Test
	void aClientOfARegistryElsewhereServesNothing() {
		this.web.withPropertyValues(CLIENT)
			.run(context -> assertThat(context).hasNotFailed()
				.hasSingleBean(HttpMetadataExchange.class)
				.doesNotHaveBean(ServletRegistrationBean.class));
	}

	@Test
	void otherExchangesServeNothing() {
		this.web.withPropertyValues("nixl.agent.engine=embedded", "nixl.metadata.http.token=" + TOKEN)
			.run(context -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(MetadataExchange.class)
				.doesNotHaveBean(ServletRegistrationBean.class));
	}

	@Test
	void theUsersOwnExchangeIsServed() {
		InMemoryMetadataExchange own = new InMemoryMetadataExchange();
		this.web.withPropertyValues(REGISTRY)
			.withBean("ownExchange", MetadataExchange.class, () -> own)
			.run(context -> {
				assertThat(context).hasNotFailed().hasSingleBean(MetadataExchange.class);
				assertThat(context.getBean(MetadataExchange.class)).isSameAs(own);
				assertThat(context).hasBean(NixlMetadataWebAutoConfiguration.SERVLET_NAME);
				String agent = context.getBean(NixlAgent.class).name();
				assertThat(own.isPublished(agent)).as("published at start into the user's exchange").isTrue();
			});
	}

	@Test
	void theUsersOwnRegistrationBacksOff() {
		ServletRegistrationBean<?> own = new ServletRegistrationBean<>();
		this.web.withPropertyValues(REGISTRY)
			.withBean(NixlMetadataWebAutoConfiguration.SERVLET_NAME, ServletRegistrationBean.class, () -> own)
			.run(context -> assertThat(context.getBean(NixlMetadataWebAutoConfiguration.SERVLET_NAME)).isSameAs(own));
	}

	@Test
	void aMissingTokenFailsStartUpNamingTheProperty() {
		this.web.withPropertyValues("nixl.agent.engine=embedded", "nixl.metadata.exchange=http").run(context -> {
			assertThat(context).hasFailed();
			assertThat(stackTrace(context.getStartupFailure())).contains("nixl.metadata.http.token", "is required");
		});
	}

	@Test
	void aMalformedTokenFailsStartUpNamingThePropertyButNotTheToken() {
		for (String token : new String[] { "short-token", "sixteen chars and spaces", "with\ttab-0123456789" }) {
			this.web
				.withPropertyValues("nixl.agent.engine=embedded", "nixl.metadata.exchange=http",
						"nixl.metadata.http.token=" + token)
				.run(context -> {
					assertThat(context).hasFailed();
					String failure = stackTrace(context.getStartupFailure());
					assertThat(failure).contains("nixl.metadata.http.token").doesNotContain(token);
				});
		}
	}

	@Test
	void anSslBundleThatIsNotConfiguredFailsStartUpNamingTheProperty() {
		this.web.withPropertyValues(CLIENT).withPropertyValues("nixl.metadata.http.ssl-bundle=missing").run(context -> {
			assertThat(context).hasFailed();
			InvalidConfigurationPropertyValueException invalid = cause(context.getStartupFailure(),
					InvalidConfigurationPropertyValueException.class);
			assertThat(invalid.getName()).isEqualTo("nixl.metadata.http.ssl-bundle");
			assertThat(invalid.getValue()).isEqualTo("missing");
			assertThat(invalid.getMessage()).contains("spring.ssl.bundle.jks.missing", "spring.ssl.bundle.pem.missing");
		});
	}

	@Test
	void anSslBundleGivesTheClientItsTrustMaterial() {
		this.web.withPropertyValues(CLIENT)
			.withPropertyValues("nixl.metadata.http.ssl-bundle=registry",
					"spring.ssl.bundle.pem.registry.truststore.certificate=classpath:tls/registry.crt",
					"spring.ssl.bundle.pem.registry.options.enabled-protocols=TLSv1.3")
			.run(context -> assertThat(context).hasNotFailed().hasSingleBean(HttpMetadataExchange.class));
	}

	private static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (type.isInstance(cause)) {
				return type.cast(cause);
			}
		}
		throw new AssertionError("no " + type.getSimpleName() + " among the causes of " + failure);
	}

	private static String stackTrace(Throwable failure) {
		StringWriter out = new StringWriter();
		failure.printStackTrace(new PrintWriter(out));
		return out.toString();
	}

}
