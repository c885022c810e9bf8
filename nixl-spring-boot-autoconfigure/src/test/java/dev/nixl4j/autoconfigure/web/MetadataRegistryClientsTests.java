package dev.nixl4j.autoconfigure.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.context.ConfigurableApplicationContext;

import static dev.nixl4j.autoconfigure.web.RegistryApplications.port;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.send;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.start;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry a Spring application serves, with client tokens configured under
 * {@code nixl.metadata.http.registry.clients.*} and the shared token turned off: each
 * client publishes only its own agent names, within its quota, over the application's
 * real web server.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetadataRegistryClientsTests {

	private static final String SHARED = "shared-" + UUID.randomUUID();

	private static final String DECODE = "decode-" + UUID.randomUUID();

	private static final String ATTACKER = "attacker-" + UUID.randomUUID();

	@Test
	void clientTokensArePrefixBoundAndQuotaBoundAndTheSharedTokenCanBeTurnedOff() throws Exception {
		try (ConfigurableApplicationContext registry = start(List.of("nixl.metadata.http.token=" + SHARED,
				"spring.application.name=registry", "nixl.metadata.http.registry.accept-shared-token=false",
				"nixl.metadata.http.registry.clients.decode.token=" + DECODE,
				"nixl.metadata.http.registry.clients.decode.agent-name-prefixes=decode-",
				"nixl.metadata.http.registry.clients.attacker.token=" + ATTACKER,
				"nixl.metadata.http.registry.clients.attacker.agent-name-prefixes=attacker-,intruder-",
				"nixl.metadata.http.registry.clients.attacker.max-entries=2"));
				HttpClient http = HttpClient.newHttpClient();
				NixlAgent decode = standalone("decode-0");
				NixlAgent attacker0 = standalone("attacker-0");
				NixlAgent intruder0 = standalone("intruder-0");
				NixlAgent attacker1 = standalone("attacker-1")) {
			URI base = URI.create("http://127.0.0.1:" + port(registry) + "/nixl");
			byte[] decodeMetadata = decode.localMetadata().toByteArray();

			HttpResponse<byte[]> squat = send(http, "PUT", metadata(base, "decode-0"), "Bearer " + ATTACKER,
					decodeMetadata);
			assertThat(squat.statusCode()).isEqualTo(403);
			assertThat(new String(squat.body(), StandardCharsets.UTF_8)).contains("client 'attacker'", "decode-0")
				.doesNotContain(ATTACKER);
			assertThat(send(http, "PUT", metadata(base, "decode-0"), "Bearer " + SHARED, decodeMetadata).statusCode())
				.as("the shared token is turned off")
				.isEqualTo(401);
			assertThat(send(http, "PUT", metadata(base, "decode-0"), "Bearer " + DECODE, decodeMetadata).statusCode())
				.isEqualTo(201);

			assertThat(send(http, "PUT", metadata(base, "attacker-0"), "Bearer " + ATTACKER,
					attacker0.localMetadata().toByteArray())
				.statusCode()).isEqualTo(201);
			assertThat(send(http, "PUT", metadata(base, "intruder-0"), "Bearer " + ATTACKER,
					intruder0.localMetadata().toByteArray())
				.statusCode()).isEqualTo(201);
			HttpResponse<byte[]> overQuota = send(http, "PUT", metadata(base, "attacker-1"), "Bearer " + ATTACKER,
					attacker1.localMetadata().toByteArray());
			assertThat(overQuota.statusCode()).isEqualTo(429);
			assertThat(new String(overQuota.body(), StandardCharsets.UTF_8))
				.contains("client 'attacker' holds its maximum of 2 entries");
			assertThat(send(http, "GET", metadata(base, "decode-0"), "Bearer " + ATTACKER, null).body())
				.as("every client reads every entry")
				.isEqualTo(decodeMetadata);
		}
	}

	private static NixlAgent standalone(String name) {
		return NixlAgent.create(AgentConfig.builder(name).engine(Engine.EMBEDDED).build());
	}

	private static URI metadata(URI base, String agentName) {
		return URI.create(base + "/agents/" + agentName + "/metadata");
	}

}
