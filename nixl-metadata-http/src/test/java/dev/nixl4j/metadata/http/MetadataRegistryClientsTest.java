package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.testsupport.Eventually;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Client identities and quotas of the metadata registry
 * ({@link MetadataRegistryHandler.Builder#client}), served over real HTTP on the loopback
 * interface, with {@link HttpMetadataExchange} clients and raw requests of a token holder
 * who attacks: squatting a worker's name while it restarts, and filling the registry.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetadataRegistryClientsTest {

	private static final String SHARED = "shared-" + UUID.randomUUID();

	private static final String DECODE = "decode-" + UUID.randomUUID();

	private static final String ATTACKER = "attacker-" + UUID.randomUUID();

	private final List<AutoCloseable> resources = new ArrayList<>();

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@AfterEach
	void closeAll() throws Exception {
		for (AutoCloseable resource : this.resources.reversed()) {
			resource.close();
		}
		this.http.close();
	}

	private <T extends AutoCloseable> T closing(T resource) {
		this.resources.add(resource);
		return resource;
	}

	private NixlAgent agent(String name) {
		return closing(NixlAgent.create(AgentConfig.builder(name).engine(Engine.EMBEDDED).build()));
	}

	/** Serves a handler over HTTP, as the registry servers do. */
	private URI serve(MetadataRegistryHandler handler) throws IOException {
		HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		ExecutorService executor = Executors.newFixedThreadPool(4);
		server.setExecutor(executor);
		server.createContext(handler.basePath() + "/", exchange -> answer(handler, exchange));
		server.start();
		this.resources.add(() -> {
			server.stop(0);
			executor.shutdownNow();
		});
		return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + handler.basePath());
	}

	private static void answer(MetadataRegistryHandler handler, HttpExchange exchange) throws IOException {
		try (exchange; InputStream body = exchange.getRequestBody()) {
			String length = exchange.getRequestHeaders().getFirst("Content-Length");
			MetadataRegistryHandler.Response response = handler.handle(exchange.getRequestMethod(),
					exchange.getRequestURI().getRawPath(), exchange.getRequestHeaders().getFirst("Authorization"),
					exchange.getRequestHeaders().getFirst(MetadataRegistryHandler.OWNER_SECRET_HEADER),
					(length != null) ? Long.parseLong(length) : -1, body);
			for (Map.Entry<String, String> header : response.headers().entrySet()) {
				exchange.getResponseHeaders().set(header.getKey(), header.getValue());
			}
			byte[] bytes = response.body();
			exchange.sendResponseHeaders(response.status(), (bytes.length > 0) ? bytes.length : -1);
			if (bytes.length > 0) {
				try (OutputStream out = exchange.getResponseBody()) {
					out.write(bytes);
				}
			}
		}
	}

	private HttpMetadataExchange client(URI registry, String token) {
		return closing(HttpMetadataExchange.builder(registry).token(token).build());
	}

	private HttpResponse<String> send(URI registry, String token, String method, String path, byte[] body)
			throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create(registry + path))
			.timeout(Duration.ofSeconds(10))
			.header("Authorization", "Bearer " + token)
			.method(method,
					(body.length > 0) ? HttpRequest.BodyPublishers.ofByteArray(body)
							: HttpRequest.BodyPublishers.noBody())
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> sendWithSecret(URI registry, String token, String method, String path, String secret)
			throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create(registry + path))
			.timeout(Duration.ofSeconds(10))
			.header("Authorization", "Bearer " + token)
			.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, secret)
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	private static MetadataRegistryHandler.Builder registry() {
		return MetadataRegistryHandler.builder()
			.store(new InMemoryMetadataExchange())
			.client("decode", DECODE, List.of("decode-"))
			.client("attacker", ATTACKER, List.of("attacker-"), 3, 1L << 20);
	}

	@Test
	void aClientTokenChangesNoNameOutsideItsPrefixesButReadsEveryEntry() throws Exception {
		URI registry = serve(registry().build());
		NixlAgent decode = agent("decode-0");
		client(registry, DECODE).publish(decode);
		byte[] forged = agent("decode-1").localMetadata().toByteArray();
		for (String name : new String[] { "decode-0", "decode-1" }) {
			for (String method : new String[] { "PUT", "POST", "DELETE" }) {
				HttpResponse<String> refused = send(registry, ATTACKER, method, AgentPaths.metadataPath("", name),
						method.equals("PUT") ? forged : new byte[0]);
				assertThat(refused.statusCode()).as(method + " " + name).isEqualTo(403);
				assertThat(refused.body()).contains("client 'attacker'", "[attacker-]");
			}
			for (String method : new String[] { "PUT", "DELETE" }) {
				assertThat(send(registry, ATTACKER, method, AgentPaths.documentPath("", name, "handle"), new byte[1])
					.statusCode()).as("document " + method + " " + name).isEqualTo(403);
			}
		}
		NixlException refused = catchThrowableOfType(NixlException.class,
				() -> client(registry, ATTACKER).publish(agent("decode-2")));
		assertThat(refused.status()).isEqualTo(NixlStatus.BUSY);
		assertThat(refused.getMessage()).contains("403", "attacker-");
		assertThat(client(registry, ATTACKER).fetch("decode-0", Duration.ZERO)).isEqualTo(decode.localMetadata());
		assertThat(send(registry, "unknown-" + UUID.randomUUID(), "GET", AgentPaths.metadataPath("", "decode-0"),
				new byte[0])
			.statusCode()).isEqualTo(401);
		client(registry, ATTACKER).publish(agent("attacker-0"));
	}

	@Test
	void aClientPastItsQuotaIsRefusedWhileAnotherStillPublishes() throws Exception {
		URI registry = serve(registry().maxEntries(5).build());
		HttpMetadataExchange attacker = client(registry, ATTACKER);
		for (int i = 0; i < 3; i++) {
			attacker.publish(agent("attacker-" + i));
		}
		NixlAgent fourth = agent("attacker-3");
		HttpResponse<String> refused = send(registry, ATTACKER, "PUT", AgentPaths.metadataPath("", fourth.name()),
				fourth.localMetadata().toByteArray());
		assertThat(refused.statusCode()).isEqualTo(429);
		assertThat(refused.body()).contains("client 'attacker' holds its maximum of 3 entries");
		NixlException overQuota = catchThrowableOfType(NixlException.class, () -> attacker.publish(fourth));
		assertThat(overQuota.status()).isEqualTo(NixlStatus.UNAVAILABLE);
		assertThat(overQuota.retryable()).isTrue();
		assertThat(overQuota.getMessage()).contains("429", "quota");

		HttpMetadataExchange decode = client(registry, DECODE);
		decode.publish(agent("decode-0"));
		decode.publish(agent("decode-1"));
		// the global bound still holds for everyone
		NixlException full = catchThrowableOfType(NixlException.class, () -> decode.publish(agent("decode-2")));
		assertThat(full.getMessage()).contains("507", "maximum of 5 entries");

		// an entry the attacker withdraws makes room in its own quota
		attacker.invalidate("attacker-0");
		attacker.publish(fourth);
	}

	@Test
	void documentsAndMetadataCountAgainstTheClientsBytes() throws Exception {
		NixlAgent first = agent("attacker-a");
		int metadataBytes = first.localMetadata().toByteArray().length;
		URI registry = serve(MetadataRegistryHandler.builder()
			.store(new InMemoryMetadataExchange())
			.client("attacker", ATTACKER, List.of("attacker-"), 10, metadataBytes + 1000L)
			.client("decode", DECODE, List.of("decode-"))
			.build());
		HttpMetadataExchange attacker = client(registry, ATTACKER);
		attacker.publish(first);
		attacker.publishDocument(first.name(), "handle", new byte[1000]);
		NixlException overBytes = catchThrowableOfType(NixlException.class,
				() -> attacker.publishDocument(first.name(), "more", new byte[1]));
		assertThat(overBytes.status()).isEqualTo(NixlStatus.UNAVAILABLE);
		assertThat(overBytes.getMessage()).contains("429", "maximum of " + (metadataBytes + 1000L) + " bytes");
		assertThat(catchThrowableOfType(NixlException.class, () -> attacker.publish(agent("attacker-b"))).getMessage())
			.contains("429");
		HttpMetadataExchange decode = client(registry, DECODE);
		NixlAgent worker = agent("decode-0");
		decode.publish(worker);
		decode.publishDocument(worker.name(), "handle", new byte[60_000]);
		assertThat(decode.fetchDocument(worker.name(), "handle", Duration.ZERO)).hasSize(60_000);
	}

	@Test
	void aRestartedWorkerReclaimsItsNameAtOnceAndAnAttackerWithItsOwnTokenCannot() throws Exception {
		Duration ttl = Duration.ofSeconds(30);
		URI registry = serve(registry().entryTtl(ttl).build());
		NixlAgent worker = agent("decode-0");
		HttpMetadataExchange before = HttpMetadataExchange.builder(registry).token(DECODE).build();
		before.publish(worker);
		before.publishDocument("decode-0", "handle", new byte[100]);
		// the worker's process dies: its owner secret is lost, its entry no longer
		// renewed
		before.close();
		byte[] forged = worker.localMetadata().toByteArray();
		assertThat(send(registry, ATTACKER, "PUT", AgentPaths.metadataPath("", "decode-0"), forged).statusCode())
			.as("the attacker's PUT of the worker's name")
			.isEqualTo(403);
		NixlAgent restartedWorker = agent("decode-0");
		HttpMetadataExchange restarted = client(registry, DECODE);
		long start = System.nanoTime();
		restarted.publish(restartedWorker);
		long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		System.out.printf("a worker restarted under its fixed name reclaimed it in %d ms (entry TTL %d s)%n",
				tookMillis, ttl.toSeconds());
		assertThat(tookMillis).as("reclaimed at once, not after the TTL").isLessThan(2_000);
		assertThat(client(registry, ATTACKER).fetch("decode-0", Duration.ZERO))
			.isEqualTo(restartedWorker.localMetadata());
		assertThat(send(registry, ATTACKER, "GET", AgentPaths.documentPath("", "decode-0", "handle"), new byte[0])
			.statusCode()).as("the earlier process's document went with its entry").isEqualTo(404);
		assertThat(
				send(registry, ATTACKER, "DELETE", AgentPaths.metadataPath("", "decode-0"), new byte[0]).statusCode())
			.isEqualTo(403);
		restarted.publishDocument("decode-0", "handle", new byte[10]);
		assertThat(restarted.fetchDocument("decode-0", "handle", Duration.ZERO)).hasSize(10);
	}

	@Test
	void onlyTheClientThatOwnsTheNameReclaimsItsEntryAndTheEarlierSecretStopsWorking() throws Exception {
		URI registry = serve(registry().token(SHARED).build());
		byte[] metadata = agent("decode-0").localMetadata().toByteArray();
		String path = AgentPaths.metadataPath("", "decode-0");
		HttpResponse<String> created = send(registry, DECODE, "PUT", path, metadata);
		assertThat(created.statusCode()).isEqualTo(201);
		String first = created.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER).orElseThrow();
		// the shared token does not reclaim, nor does another client
		assertThat(send(registry, SHARED, "PUT", path, metadata).statusCode()).isEqualTo(403);
		assertThat(send(registry, ATTACKER, "PUT", path, metadata).statusCode()).isEqualTo(403);
		HttpResponse<String> reclaimed = send(registry, DECODE, "PUT", path, metadata);
		assertThat(reclaimed.statusCode()).as("the owning client's PUT without the secret").isEqualTo(201);
		String second = reclaimed.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER).orElseThrow();
		assertThat(second).isNotEqualTo(first);
		assertThat(sendWithSecret(registry, DECODE, "POST", path, first).statusCode())
			.as("a renewal with the earlier secret")
			.isEqualTo(403);
		assertThat(sendWithSecret(registry, DECODE, "POST", path, second).statusCode()).isEqualTo(204);
	}

	@Test
	void aClientReclaimsANameOfItsPrefixesThatTheSharedTokenSquatted() throws Exception {
		URI registry = serve(registry().token(SHARED).build());
		NixlAgent worker = agent("decode-0");
		// a shared-token holder takes the worker's name before its first publication
		HttpMetadataExchange squatter = client(registry, SHARED);
		squatter.publish(agent("decode-0"));
		client(registry, DECODE).publish(worker);
		assertThat(client(registry, DECODE).fetch("decode-0", Duration.ZERO)).isEqualTo(worker.localMetadata());
		// the squatter's republish is refused: the name is the client's again
		NixlException taken = catchThrowableOfType(NixlException.class, () -> squatter.publish(agent("decode-0")));
		assertThat(taken.status()).isEqualTo(NixlStatus.BUSY);
		// a name of no client's prefixes stays the shared token's
		client(registry, SHARED).publish(agent("other-0"));
		assertThat(send(registry, DECODE, "PUT", AgentPaths.metadataPath("", "other-0"), new byte[1]).statusCode())
			.isEqualTo(403);
	}

	@Test
	void anAttackerThatFillsItsQuotaLeavesRoomForARestartedWorker() throws Exception {
		URI registry = serve(registry().maxEntries(4).build());
		HttpMetadataExchange attacker = client(registry, ATTACKER);
		int filled = 0;
		for (int i = 0; i < 10; i++) {
			try {
				attacker.publish(agent("attacker-fill-" + i));
				filled++;
			}
			catch (NixlException ex) {
				assertThat(ex.getMessage()).contains("429");
			}
		}
		assertThat(filled).as("the attacker's quota").isEqualTo(3);
		NixlAgent worker = agent("decode-0");
		HttpMetadataExchange restarted = client(registry, DECODE);
		restarted.publish(worker);
		Eventually.until(Duration.ofSeconds(5), "the worker's entry is readable",
				() -> client(registry, ATTACKER).fetch("decode-0", Duration.ZERO).equals(worker.localMetadata()));
	}

	@Test
	void clientGrantsAreChecked() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> MetadataRegistryHandler.builder().store(new InMemoryMetadataExchange()).build())
			.withMessageContaining("token(...) or client(...)");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> MetadataRegistryHandler.builder().client("a", DECODE, List.of()))
			.withMessageContaining("'a'", "prefix");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> MetadataRegistryHandler.builder().client("a", DECODE, List.of("")))
			.withMessageContaining("none empty");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> MetadataRegistryHandler.builder()
				.client("a", DECODE, List.of("a-"))
				.client("b", " " + DECODE, List.of("b-")))
			.withMessageContaining("'b'", "another client")
			.withMessageNotContaining(DECODE);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> MetadataRegistryHandler.builder()
				.client("a", DECODE, List.of("a-"))
				.client("a", ATTACKER, List.of("b-")))
			.withMessageContaining("twice");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> MetadataRegistryHandler.builder()
				.store(new InMemoryMetadataExchange())
				.token(DECODE)
				.client("a", DECODE, List.of("a-"))
				.build())
			.withMessageContaining("shared token");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> MetadataRegistryHandler.builder().client("a", DECODE, List.of("a-"), 0, 1));
	}

}
