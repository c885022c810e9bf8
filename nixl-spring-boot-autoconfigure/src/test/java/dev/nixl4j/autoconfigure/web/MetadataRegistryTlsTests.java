package dev.nixl4j.autoconfigure.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.testsupport.TestTls;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.context.ConfigurableApplicationContext;

import static dev.nixl4j.autoconfigure.web.RegistryApplications.agent;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.port;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.send;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.start;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The registry over TLS: A serves HTTPS with the test-only certificate of
 * nixl-test-support's resources ({@code tls/}, see the README there) as its
 * {@code server.ssl.bundle}; B trusts it through {@code nixl.metadata.http.ssl-bundle}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MetadataRegistryTlsTests {

	private static final String TOKEN = "tls-" + UUID.randomUUID();

	private static final List<String> REGISTRY = List.of("nixl.metadata.http.token=" + TOKEN,
			"spring.application.name=registry", "server.ssl.bundle=registry",
			"spring.ssl.bundle.jks.registry.keystore.location=classpath:" + TestTls.KEY_STORE,
			"spring.ssl.bundle.jks.registry.keystore.password=" + TestTls.PASSWORD,
			"spring.ssl.bundle.jks.registry.keystore.type=PKCS12");

	@Test
	void aClientTrustingTheRegistrysCertificateExchangesMetadataAndTransfers() throws Exception {
		try (ConfigurableApplicationContext a = start(REGISTRY);
				HttpClient http = HttpClient.newBuilder().sslContext(TestTls.clientContext()).build()) {
			URI base = URI.create("https://127.0.0.1:" + port(a) + "/nixl");
			try (ConfigurableApplicationContext b = start(client(base, "nixl.metadata.http.ssl-bundle=registry-trust",
					"spring.ssl.bundle.pem.registry-trust.truststore.certificate=classpath:" + TestTls.CERTIFICATE))) {
				HttpResponse<byte[]> published = send(http, "GET",
						URI.create(base + "/agents/" + agent(b).name() + "/metadata"), "Bearer " + TOKEN, null);
				assertThat(published.statusCode()).isEqualTo(200);
				assertThat(published.body()).isEqualTo(agent(b).localMetadata().toByteArray());
				RegistryApplications.loadAndTransferBothWays(a, b);
			}
		}
	}

	@Test
	void aClientWithoutTheTrustBundleFailsToPublishWithATlsError() {
		try (ConfigurableApplicationContext a = start(REGISTRY)) {
			URI base = URI.create("https://127.0.0.1:" + port(a) + "/nixl");
			Throwable failure = catchThrowable(() -> start(client(base)).close());
			NixlException cause = cause(failure, NixlException.class);
			assertThat(cause.status()).isEqualTo(NixlStatus.UNAVAILABLE);
			assertThat(cause.operation()).isEqualTo("send_local_md");
			assertThat(cause.getMessage())
				.contains(base.toString(), "TLS handshake failed", "trusts the server's certificate")
				.doesNotContain(TOKEN);
		}
	}

	private static List<String> client(URI endpoint, String... more) {
		List<String> properties = new ArrayList<>(List.of("nixl.metadata.http.token=" + TOKEN,
				"spring.application.name=worker", "nixl.metadata.http.endpoint=" + endpoint));
		properties.addAll(List.of(more));
		return properties;
	}

	private static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (type.isInstance(cause)) {
				return type.cast(cause);
			}
		}
		throw new AssertionError("no " + type.getSimpleName() + " among the causes of " + failure, failure);
	}

}
