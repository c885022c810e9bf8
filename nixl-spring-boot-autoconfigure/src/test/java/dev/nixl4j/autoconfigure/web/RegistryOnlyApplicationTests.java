package dev.nixl4j.autoconfigure.web;

import java.nio.file.Files;
import java.nio.file.Path;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.testsupport.LineProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application with {@code nixl.agent.enabled=false} serves the HTTP metadata registry
 * and nothing else: run in a child JVM whose class loading is logged, it has no agent, no
 * connector and no KV beans, never loads a class of nixl4j's native binding (so it never
 * tries to load NIXL), reports the registry's health instead of an agent's, and keeps a
 * client's entry over real HTTP.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RegistryOnlyApplicationTests {

	private static final Duration WAIT = Duration.ofSeconds(60);

	private static final String SHARED = "shared-" + UUID.randomUUID();

	private static final String DECODE = "decode-" + UUID.randomUUID();

	/** The package of nixl4j's FFM binding, whose NativeLibrary finds and loads NIXL. */
	private static final String NATIVE_BINDING = "dev.nixl4j.internal.ffm.";

	@Test
	void servesTheRegistryWithoutAnAgentOrNixl(@TempDir Path directory) throws Exception {
		Path classes = directory.resolve("classes.log");
		List<String> command = LineProcess.javaCommand(RegistryOnlyMain.class, "512m", "--server.port=0",
				"--server.address=127.0.0.1", "--spring.main.banner-mode=off", "--logging.level.root=WARN",
				"--spring.application.name=registry", "--nixl.agent.enabled=false",
				// would need NIXL itself, were an agent created
				"--nixl.agent.engine=native", "--nixl.metadata.exchange=http", "--nixl.metadata.http.token=" + SHARED,
				"--nixl.metadata.http.registry.clients.decode.token=" + DECODE,
				"--nixl.metadata.http.registry.clients.decode.agent-name-prefixes=decode-",
				"--management.endpoints.web.exposure.include=health",
				"--management.endpoint.health.show-details=always");
		command.add(1, "-Xlog:class+load=info:file=" + classes);
		try (LineProcess registry = LineProcess.start("registry-only application", new ProcessBuilder(command), "quit");
				HttpClient http = HttpClient.newHttpClient();
				NixlAgent decode = NixlAgent
					.create(AgentConfig.builder("decode-" + UUID.randomUUID()).engine(Engine.EMBEDDED).build())) {
			int port = Integer.parseInt(registry.expect("port ", WAIT).substring("port ".length()));
			Map<String, Integer> beans = Arrays
				.stream(registry.expect("beans ", WAIT).substring("beans ".length()).split(","))
				.map((entry) -> entry.split("="))
				.collect(Collectors.toMap((entry) -> entry[0], (entry) -> Integer.parseInt(entry[1])));
			assertThat(beans).containsEntry("NixlAgent", 0)
				.containsEntry("AgentConfig", 0)
				.containsEntry("Connector", 0)
				.containsEntry("NixlLifecycle", 0)
				.containsEntry("PagedKvCache", 0)
				.containsEntry("KvProducer", 0)
				.containsEntry("KvConsumer", 0)
				.containsEntry("KvObserver", 0)
				.containsEntry("PeerLoader", 0)
				.containsEntry("MetadataExchange", 1)
				.containsEntry("MetadataRegistryHandler", 1);

			URI base = URI.create("http://127.0.0.1:" + port + "/nixl");
			byte[] metadata = decode.localMetadata().toByteArray();
			try (HttpMetadataExchange client = HttpMetadataExchange.builder(base).token(DECODE).build();
					HttpMetadataExchange reader = HttpMetadataExchange.builder(base).token(SHARED).build()) {
				client.publish(decode.name(), decode.localMetadata());
				assertThat(reader.fetch(decode.name(), WAIT).toByteArray()).isEqualTo(metadata);

				JsonNode health = health(http, port);
				assertThat(health.path("status").asString()).isEqualTo("UP");
				JsonNode components = health.path("components");
				assertThat(components.has("nixl")).as("no agent's health: " + components).isFalse();
				JsonNode served = components.path("nixlMetadataRegistry");
				assertThat(served.path("status").asString()).as(components.toString()).isEqualTo("UP");
				assertThat(served.path("details").path("entries").asInt()).isEqualTo(1);
				assertThat(served.path("details").path("entryBytes").asLong()).isEqualTo(metadata.length);
				assertThat(served.path("details").path("basePath").asString()).isEqualTo("/nixl");

				client.invalidate(decode.name());
				assertThat(health(http, port).path("components")
					.path("nixlMetadataRegistry")
					.path("details")
					.path("entries")
					.asInt()).as("the client withdrew its entry").isZero();
			}
			registry.send("quit");
			registry.expect("closed", WAIT);
		}
		List<String> loaded = Files.readAllLines(classes);
		assertThat(loaded).as("the class loading log")
			.anyMatch((line) -> line.contains(" dev.nixl4j.autoconfigure.web.MetadataRegistryServlet "));
		assertThat(loaded).as("classes of the native binding (NativeLibrary loads NIXL)")
			.noneMatch((line) -> line.contains(" " + NATIVE_BINDING));
	}

	private static JsonNode health(HttpClient http, int port) throws Exception {
		HttpResponse<String> response = http
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health"))
				.timeout(Duration.ofSeconds(10))
				.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return JsonMapper.builder().build().readTree(response.body());
	}

}
