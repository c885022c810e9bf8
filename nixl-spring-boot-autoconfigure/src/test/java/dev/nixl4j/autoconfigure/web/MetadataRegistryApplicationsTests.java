package dev.nixl4j.autoconfigure.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static dev.nixl4j.autoconfigure.web.RegistryApplications.agent;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.exchange;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.port;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.send;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.start;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two full applications over real HTTP: A is the registry, B points its endpoint at A.
 * Both publish at start, find each other through their exchange beans and move bytes both
 * ways, with the embedded engine (on platform and on virtual threads) and with NIXL
 * itself.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class MetadataRegistryApplicationsTests {

	private static final String TOKEN = "apps-" + UUID.randomUUID();

	@ParameterizedTest(name = "engine {0}, virtual threads: {1}")
	@CsvSource({ "embedded, false", "embedded, true", "native, false" })
	void aRegistryAndItsClientFindEachOtherAndTransferBothWays(String engine, boolean virtualThreads) throws Exception {
		if (engine.equals("native")) {
			NativeNixl.require();
		}
		List<String> common = List.of("nixl.metadata.http.token=" + TOKEN, "nixl.agent.engine=" + engine,
				"spring.threads.virtual.enabled=" + virtualThreads);
		try (ConfigurableApplicationContext a = start(concat(common, "spring.application.name=registry"));
				HttpClient http = HttpClient.newHttpClient()) {
			URI base = URI.create("http://127.0.0.1:" + port(a) + "/nixl");
			// the starter wraps the exchange (observation, the nixl-metadata retry)
			assertThat(exchange(a)).asString().contains("InMemoryMetadataExchange[");
			NixlAgent agentA = agent(a);
			assertThat(agentA.engine()).isEqualTo(Engine.valueOf(engine.toUpperCase(Locale.ROOT)));
			String agentB;
			try (ConfigurableApplicationContext b = start(
					concat(common, "spring.application.name=worker", "nixl.metadata.http.endpoint=" + base))) {
				assertThat(exchange(b)).asString().contains("HttpMetadataExchange[" + base + "]");
				assertThat(b.containsBean(NixlMetadataWebAutoConfiguration.SERVLET_NAME)).as("B serves nothing")
					.isFalse();
				agentB = agent(b).name();

				// both published at start: A into its own store, B over HTTP
				for (NixlAgent agent : List.of(agentA, agent(b))) {
					HttpResponse<byte[]> published = send(http, "GET", metadata(base, agent.name()), "Bearer " + TOKEN,
							null);
					assertThat(published.statusCode()).isEqualTo(200);
					assertThat(published.headers().firstValue("Content-Type")).hasValue("application/octet-stream");
					assertThat(published.body()).isEqualTo(agent.localMetadata().toByteArray());
				}

				RegistryApplications.loadAndTransferBothWays(a, b);

				assertThat(a.getBean(RegistryApplications.ServingThreads.class).virtual())
					.as("the kind of thread that served the registry's requests")
					.containsExactly(virtualThreads);
			}
			// B's shutdown withdrew its metadata from A's registry, and A forgot B
			assertThat(send(http, "GET", metadata(base, agentB), "Bearer " + TOKEN, null).statusCode()).isEqualTo(404);
			assertThat(agentA.remoteAgents()).doesNotContain(agentB);
		}
	}

	@Test
	void requestsWithoutTheTokenGetA401AndNoMetadata() throws Exception {
		try (ConfigurableApplicationContext a = start(List.of("nixl.metadata.http.token=" + TOKEN));
				HttpClient http = HttpClient.newHttpClient()) {
			URI base = URI.create("http://127.0.0.1:" + port(a) + "/nixl");
			NixlAgent agent = agent(a);
			URI uri = metadata(base, agent.name());
			byte[] metadata = agent.localMetadata().toByteArray();
			for (String authorization : new String[] { null, "Bearer not-" + TOKEN, "Basic " + TOKEN, TOKEN }) {
				for (String method : new String[] { "GET", "PUT", "DELETE" }) {
					HttpResponse<byte[]> refused = send(http, method, uri, authorization,
							method.equals("PUT") ? new byte[16] : null);
					assertThat(refused.statusCode()).as(method + " with " + authorization).isEqualTo(401);
					assertThat(refused.headers().firstValue("WWW-Authenticate"))
						.hasValueSatisfying(value -> assertThat(value).startsWith("Bearer"));
					assertThat(refused.body()).isEmpty();
				}
			}
			assertThat(send(http, "GET", uri, "Bearer " + TOKEN, null).body()).as("still published")
				.isEqualTo(metadata);

			byte[] random = new byte[2048];
			new Random(11).nextBytes(random);
			assertThat(send(http, "PUT", metadata(base, "someone"), "Bearer " + TOKEN, random).statusCode())
				.as("not NIXL metadata")
				.isEqualTo(400);
			assertThat(send(http, "PUT", metadata(base, "someone"), "Bearer " + TOKEN, metadata).statusCode())
				.as("metadata of another agent")
				.isEqualTo(400);
			assertThat(send(http, "POST", uri, "Bearer " + TOKEN, null).statusCode()).as("renewal of A's own entry")
				.isEqualTo(403);
			assertThat(send(http, "PATCH", uri, "Bearer " + TOKEN, null).statusCode()).isEqualTo(405);
			assertThat(send(http, "GET", metadata(base, "nobody"), "Bearer " + TOKEN, null).statusCode())
				.as("unknown agents are a 404 at once")
				.isEqualTo(404);
		}
	}

	@Test
	void theUsersOwnExchangeIsServed() throws Exception {
		try (ConfigurableApplicationContext a = start(List.of("nixl.metadata.http.token=" + TOKEN), OwnExchange.class);
				HttpClient http = HttpClient.newHttpClient()) {
			InMemoryMetadataExchange own = a.getBean(OwnExchange.class).exchange;
			assertThat(exchange(a)).isSameAs(own);
			URI base = URI.create("http://127.0.0.1:" + port(a) + "/nixl");
			NixlAgent agent = agent(a);
			HttpResponse<byte[]> response = send(http, "GET", metadata(base, agent.name()), "Bearer " + TOKEN, null);
			assertThat(response.statusCode()).isEqualTo(200);
			assertThat(response.body()).isEqualTo(own.fetch(agent.name(), RegistryApplications.WAIT).toByteArray());
			assertThat(send(http, "DELETE", metadata(base, agent.name()), "Bearer " + TOKEN, null).statusCode())
				.as("the serving application's own entry is not changed over HTTP")
				.isEqualTo(403);
			assertThat(own.isPublished(agent.name())).isTrue();
		}
	}

	private static URI metadata(URI base, String agentName) {
		return URI.create(base + "/agents/" + agentName + "/metadata");
	}

	private static List<String> concat(List<String> list, String... more) {
		return Stream.concat(list.stream(), Stream.of(more)).toList();
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnExchange {

		final InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();

		@Bean(destroyMethod = "close")
		MetadataExchange ownMetadataExchange() {
			return this.exchange;
		}

	}

}
