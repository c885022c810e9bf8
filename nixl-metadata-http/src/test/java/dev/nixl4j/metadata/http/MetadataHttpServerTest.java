package dev.nixl4j.metadata.http;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.testsupport.MetadataSamples;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link MetadataHttpServer} seen through raw HTTP requests.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetadataHttpServerTest {

	private static final String TOKEN = "server-" + UUID.randomUUID();

	private static int send(HttpClient http, HttpRequest.Builder request) throws Exception {
		return http.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.discarding())
			.statusCode();
	}

	private static HttpRequest.Builder put(URI uri, byte[] body, String token) {
		return HttpRequest.newBuilder(uri)
			.header("Authorization", "Bearer " + token)
			.PUT(HttpRequest.BodyPublishers.ofByteArray(body));
	}

	@Test
	void bindsTheLoopbackAddressOnAnEphemeralPortByDefault() {
		try (MetadataHttpServer server = MetadataHttpServer.builder().token(TOKEN).start()) {
			assertThat(server.address().getAddress().isLoopbackAddress()).isTrue();
			assertThat(server.port()).isPositive();
			assertThat(server.baseUri()).hasToString("http://127.0.0.1:" + server.port() + "/nixl");
			assertThat(server.toString()).doesNotContain(TOKEN);
		}
	}

	@Test
	void putBodiesAreCheckedBeforeTheyAreStored() throws Exception {
		InMemoryMetadataExchange store = new InMemoryMetadataExchange();
		try (store;
				MetadataHttpServer server = MetadataHttpServer.builder()
					.token(TOKEN)
					.store(store)
					.maxBytes(400)
					.start();
				HttpClient http = HttpClient.newHttpClient()) {
			URI base = server.baseUri();
			byte[] random = new byte[300];
			new Random(5).nextBytes(random);
			byte[] small = MetadataSamples.read("no-registrations.bin");
			assertThat(
					send(http, put(URI.create(base + "/agents/one-dram/metadata"), MetadataSamples.oneDram(), TOKEN)))
				.as("over the cap")
				.isEqualTo(413);
			assertThat(send(http, put(URI.create(base + "/agents/x/metadata"), random, TOKEN))).as("not metadata")
				.isEqualTo(400);
			assertThat(send(http, put(URI.create(base + "/agents/impostor/metadata"), small, TOKEN)))
				.as("names another agent")
				.isEqualTo(400);
			assertThat(send(http, put(URI.create(base + "/agents/empty-agent/metadata"), small, "not-" + TOKEN)))
				.as("wrong token")
				.isEqualTo(401);
			assertThat(store.isPublished("one-dram") || store.isPublished("x") || store.isPublished("impostor")
					|| store.isPublished("empty-agent"))
				.isFalse();
			HttpResponse<Void> created = http.send(
					put(URI.create(base + "/agents/empty-agent/metadata"), small, TOKEN).build(),
					HttpResponse.BodyHandlers.discarding());
			assertThat(created.statusCode()).isEqualTo(201);
			assertThat(store.isPublished("empty-agent")).isTrue();
			HttpRequest.Builder delete = HttpRequest.newBuilder(URI.create(base + "/agents/empty-agent/metadata"))
				.header("Authorization", "Bearer " + TOKEN)
				.header(MetadataRegistryHandler.OWNER_SECRET_HEADER,
						created.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER).orElseThrow())
				.DELETE();
			assertThat(send(http, delete)).isEqualTo(204);
			assertThat(store.isPublished("empty-agent")).isFalse();
		}
	}

	@Test
	void otherMethodsAndPathsAreRefused() throws Exception {
		try (MetadataHttpServer server = MetadataHttpServer.builder().token(TOKEN).start();
				HttpClient http = HttpClient.newHttpClient()) {
			URI agent = URI.create(server.baseUri() + "/agents/a/metadata");
			HttpResponse<Void> patch = http.send(HttpRequest.newBuilder(agent)
				.header("Authorization", "Bearer " + TOKEN)
				.method("PATCH", HttpRequest.BodyPublishers.noBody())
				.build(), HttpResponse.BodyHandlers.discarding());
			assertThat(patch.statusCode()).isEqualTo(405);
			assertThat(patch.headers().firstValue("Allow")).hasValue("GET, PUT, POST, DELETE");
			assertThat(send(http, HttpRequest.newBuilder(URI.create(server.baseUri() + "/agents/a"))
				.header("Authorization", "Bearer " + TOKEN))).isEqualTo(404);
			assertThat(send(http, HttpRequest.newBuilder(agent).header("Authorization", "Bearer " + TOKEN)))
				.as("not published")
				.isEqualTo(404);
		}
	}

	@Test
	void closeLeavesNoThreadBehind() throws Exception {
		Set<String> before = threadNames();
		Set<String> whileRunning;
		try (MetadataHttpServer server = MetadataHttpServer.builder().token(TOKEN).start()) {
			try (HttpMetadataExchange client = HttpMetadataExchange.builder(server.baseUri()).token(TOKEN).build()) {
				client.publish("empty-agent", AgentMetadata.of(MetadataSamples.read("no-registrations.bin")));
				assertThat(client.fetch("empty-agent", Duration.ofSeconds(5)).size()).isPositive();
			}
			whileRunning = threadNames();
		}
		Set<String> started = new TreeSet<>(whileRunning);
		started.removeAll(before);
		assertThat(started).as("the server's threads").anyMatch(name -> name.startsWith("nixl4j-metadata-http-"));
		// the client's HttpClient threads end just after its executor terminated
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
		Set<String> left = threadNames();
		left.retainAll(started);
		while (!left.isEmpty() && System.nanoTime() - deadline < 0) {
			Thread.sleep(20);
			left = threadNames();
			left.retainAll(started);
		}
		assertThat(left).isEmpty();
	}

	private static Set<String> threadNames() {
		Set<String> names = new TreeSet<>();
		// the JVM's common pool outlives every component that borrows it
		Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter(Thread::isAlive)
			.filter(t -> !t.getName().startsWith("ForkJoinPool.commonPool-"))
			.forEach(t -> names.add(t.getName()));
		return names;
	}

}
