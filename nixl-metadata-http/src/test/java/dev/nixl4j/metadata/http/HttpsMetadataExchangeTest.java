package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.testsupport.MetadataSamples;
import dev.nixl4j.testsupport.TestTls;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link HttpMetadataExchange} over TLS, against a {@link MetadataRegistryHandler} behind
 * the JDK's {@link HttpsServer} with the test certificate of {@link TestTls}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpsMetadataExchangeTest {

	private static final String TOKEN = "tls-" + UUID.randomUUID();

	private final InMemoryMetadataExchange store = new InMemoryMetadataExchange();

	private HttpsServer server;

	private ExecutorService executor;

	@BeforeEach
	void startServer() throws IOException {
		MetadataRegistryHandler handler = MetadataRegistryHandler.builder().token(TOKEN).store(this.store).build();
		this.executor = Executors.newFixedThreadPool(2);
		this.server = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		this.server.setHttpsConfigurator(new HttpsConfigurator(TestTls.serverContext()));
		this.server.setExecutor(this.executor);
		this.server.createContext("/", exchange -> serve(handler, exchange));
		this.server.start();
	}

	@AfterEach
	void stopServer() throws InterruptedException {
		this.server.stop(0);
		this.executor.shutdownNow();
		this.executor.awaitTermination(10, TimeUnit.SECONDS);
		this.store.close();
	}

	private static void serve(MetadataRegistryHandler handler, HttpExchange exchange) throws IOException {
		try (exchange) {
			String length = exchange.getRequestHeaders().getFirst("Content-Length");
			MetadataRegistryHandler.Response response = handler.handle(exchange.getRequestMethod(),
					exchange.getRequestURI().getRawPath(), exchange.getRequestHeaders().getFirst("Authorization"),
					exchange.getRequestHeaders().getFirst(MetadataRegistryHandler.OWNER_SECRET_HEADER),
					(length != null) ? Long.parseLong(length) : -1, exchange.getRequestBody());
			response.headers().forEach(exchange.getResponseHeaders()::set);
			byte[] body = response.body();
			exchange.sendResponseHeaders(response.status(), (body.length > 0) ? body.length : -1);
			if (body.length > 0) {
				try (OutputStream out = exchange.getResponseBody()) {
					out.write(body);
				}
			}
		}
	}

	private URI base(String host) {
		return URI.create("https://" + host + ":" + this.server.getAddress().getPort() + "/nixl");
	}

	@Test
	void aClientTrustingTheCertificatePublishesAndFetchesOverTls() {
		for (String host : new String[] { "127.0.0.1", "localhost" }) {
			try (HttpMetadataExchange client = HttpMetadataExchange.builder(base(host))
				.token(TOKEN)
				.sslContext(TestTls.clientContext())
				.build()) {
				client.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
				assertThat(this.store.isPublished(MetadataSamples.ONE_DRAM)).isTrue();
				assertThat(client.fetch(MetadataSamples.ONE_DRAM, Duration.ofSeconds(5)).toByteArray())
					.isEqualTo(MetadataSamples.oneDram());
				client.invalidate(MetadataSamples.ONE_DRAM);
				assertThat(this.store.isPublished(MetadataSamples.ONE_DRAM)).isFalse();
			}
		}
	}

	@Test
	void aClientWithoutTheTrustMaterialFailsWithATlsError() {
		try (HttpMetadataExchange client = HttpMetadataExchange.builder(base("127.0.0.1")).token(TOKEN).build()) {
			NixlException failure = catchThrowableOfType(NixlException.class,
					() -> client.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram())));
			assertThat(failure.status()).isEqualTo(NixlStatus.UNAVAILABLE);
			assertThat(failure.getMessage())
				.contains(base("127.0.0.1").toString(), "TLS handshake failed", "trusts the server's certificate")
				.doesNotContain(TOKEN);
			assertThat(this.store.isPublished(MetadataSamples.ONE_DRAM)).isFalse();
		}
	}

	@Test
	void aTlsFailureIsNotRetryable() {
		try (HttpMetadataExchange client = HttpMetadataExchange.builder(base("127.0.0.1")).token(TOKEN).build()) {
			NixlException failure = catchThrowableOfType(NixlException.class,
					() -> client.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram())));
			assertThat(failure.status()).isEqualTo(NixlStatus.UNAVAILABLE);
			assertThat(failure.retryable()).as("the trust must change first").isFalse();
		}
	}

}
