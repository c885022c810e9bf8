package dev.nixl4j.autoconfigure.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.http.MetadataRegistryHandler;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.context.ConfigurableApplicationContext;

import static dev.nixl4j.autoconfigure.web.RegistryApplications.agent;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.port;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.send;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.start;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry served by a Spring application keeps each entry for the peer that created
 * it, bounds its entries and lets unrenewed ones expire: application A serves it,
 * application B publishes and renews its entry there over HTTP, and a second token holder
 * sends raw requests.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetadataRegistryOwnershipTests {

	private static final String TOKEN = "owners-" + UUID.randomUUID();

	private static final Duration TTL = Duration.ofMillis(1500);

	@Test
	void entriesBelongToTheirCreatorsAreBoundedAndExpireUnlessRenewed() throws Exception {
		try (ConfigurableApplicationContext a = start(List.of("nixl.metadata.http.token=" + TOKEN,
				"spring.application.name=registry", "nixl.metadata.http.registry.entry-ttl=" + TTL.toMillis() + "ms",
				"nixl.metadata.http.registry.max-entries=2"));
				HttpClient http = HttpClient.newHttpClient();
				NixlAgent third = standalone("third-" + UUID.randomUUID());
				NixlAgent fourth = standalone("fourth-" + UUID.randomUUID())) {
			URI base = URI.create("http://127.0.0.1:" + port(a) + "/nixl");
			String bearer = "Bearer " + TOKEN;
			NixlAgent agentA = agent(a);
			String agentB;
			try (ConfigurableApplicationContext b = start(List.of("nixl.metadata.http.token=" + TOKEN,
					"spring.application.name=worker", "nixl.metadata.http.endpoint=" + base))) {
				agentB = agent(b).name();
				byte[] metadataB = agent(b).localMetadata().toByteArray();
				URI uriB = metadata(base, agentB);
				assertThat(send(http, "GET", uriB, bearer, null).body()).isEqualTo(metadataB);

				// a second token holder: 403 on B's entry and on A's own, which stay as
				// they were
				for (String secret : new String[] { null, "forged-" + UUID.randomUUID() }) {
					assertThat(sendWithSecret(http, "PUT", uriB, secret, metadataB).statusCode()).isEqualTo(403);
					assertThat(sendWithSecret(http, "POST", uriB, secret, null).statusCode()).isEqualTo(403);
					HttpResponse<byte[]> delete = sendWithSecret(http, "DELETE", uriB, secret, null);
					assertThat(delete.statusCode()).isEqualTo(403);
					assertThat(new String(delete.body(), StandardCharsets.UTF_8)).contains("another owner");
				}
				URI uriA = metadata(base, agentA.name());
				assertThat(send(http, "PUT", uriA, bearer, agentA.localMetadata().toByteArray()).statusCode())
					.isEqualTo(403);
				assertThat(send(http, "DELETE", uriA, bearer, null).statusCode()).isEqualTo(403);
				assertThat(send(http, "GET", uriB, bearer, null).body()).as("B's entry unchanged").isEqualTo(metadataB);
				assertThat(send(http, "GET", uriA, bearer, null).statusCode()).isEqualTo(200);

				// bounded: B's entry and one more
				URI uriThird = metadata(base, third.name());
				assertThat(send(http, "PUT", uriThird, bearer, third.localMetadata().toByteArray()).statusCode())
					.isEqualTo(201);
				HttpResponse<byte[]> full = send(http, "PUT", metadata(base, fourth.name()), bearer,
						fourth.localMetadata().toByteArray());
				assertThat(full.statusCode()).isEqualTo(507);
				assertThat(new String(full.body(), StandardCharsets.UTF_8)).contains("maximum of 2 entries");

				// the third entry, never renewed, expires; B renews its own and keeps it
				long deadline = System.nanoTime() + TTL.plusSeconds(3).toNanos();
				while (send(http, "GET", uriThird, bearer, null).statusCode() != 404) {
					assertThat(System.nanoTime()).as("the unrenewed entry expires").isLessThan(deadline);
					Thread.sleep(50);
				}
				long renewedUntil = System.nanoTime() + 3 * TTL.toNanos();
				while (System.nanoTime() < renewedUntil) {
					assertThat(send(http, "GET", uriB, bearer, null).statusCode()).as("B's renewed entry")
						.isEqualTo(200);
					Thread.sleep(200);
				}
			}
			// B withdrew its entry on shutdown with its secret
			assertThat(send(http, "GET", metadata(base, agentB), bearer, null).statusCode()).isEqualTo(404);
		}
	}

	private static NixlAgent standalone(String name) {
		return NixlAgent.create(AgentConfig.builder(name).engine(Engine.EMBEDDED).build());
	}

	private static HttpResponse<byte[]> sendWithSecret(HttpClient http, String method, URI uri, String secret,
			byte[] body) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri)
			.timeout(Duration.ofSeconds(10))
			.header("Authorization", "Bearer " + TOKEN)
			.method(method, (body != null) ? HttpRequest.BodyPublishers.ofByteArray(body)
					: HttpRequest.BodyPublishers.noBody());
		if (secret != null) {
			request.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, secret);
		}
		return http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
	}

	private static URI metadata(URI base, String agentName) {
		return URI.create(base + "/agents/" + agentName + "/metadata");
	}

}
