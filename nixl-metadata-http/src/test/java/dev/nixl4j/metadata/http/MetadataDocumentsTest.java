package dev.nixl4j.metadata.http;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.ForwardingMetadataExchange;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.MetadataSamples;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Documents beside an agent's metadata ({@link MetadataExchange#publishDocument}): in the
 * in-memory exchange, through a real {@link MetadataHttpServer} with
 * {@link HttpMetadataExchange} clients and raw HTTP requests, and kept by a
 * {@link MetadataPublication} of a real agent.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetadataDocumentsTest {

	private static final String TOKEN = "documents-" + UUID.randomUUID();

	private static final String KIND = "kv-cache-handle";

	private static final AtomicInteger ids = new AtomicInteger();

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

	private HttpMetadataExchange client(MetadataHttpServer server) {
		return closing(HttpMetadataExchange.builder(server.baseUri()).token(TOKEN).build());
	}

	private HttpResponse<String> send(MetadataHttpServer server, String method, String path, byte[] body,
			String ownerSecret) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(server.baseUri() + path))
			.timeout(Duration.ofSeconds(10))
			.header("Authorization", "Bearer " + TOKEN)
			.method(method, (body.length > 0) ? HttpRequest.BodyPublishers.ofByteArray(body)
					: HttpRequest.BodyPublishers.noBody());
		if (ownerSecret != null) {
			request.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownerSecret);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private int status(MetadataHttpServer server, String path) {
		try {
			return send(server, "GET", path, new byte[0], null).statusCode();
		}
		catch (Exception ex) {
			return -1;
		}
	}

	private static String documentPath(String agentName, String kind) {
		return AgentPaths.documentPath("", agentName, kind);
	}

	private static byte[] document(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	@Test
	void documentKindsAreCheckedByOneRule() {
		for (String good : new String[] { "kv-cache-handle", "a", "0", "v1.2-x", "a".repeat(64) }) {
			assertThat(MetadataExchange.requireDocumentKind(good)).isEqualTo(good);
		}
		for (String bad : new String[] { "", "a".repeat(65), "-lead", ".lead", "Upper", "with/slash", "with space",
				"caf\u00e9", "..", "under_score" }) {
			NixlException refused = catchThrowableOfType(NixlException.class,
					() -> MetadataExchange.requireDocumentKind(bad));
			assertThat(refused.status()).as(bad).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
			assertThat(refused.getMessage()).contains("document kind");
		}
	}

	@Test
	void anExchangeWithoutDocumentsSaysSo() {
		InMemoryMetadataExchange bare = closing(new InMemoryMetadataExchange());
		MetadataExchange plain = new MetadataExchange() {

			@Override
			public void publish(String agentName, AgentMetadata metadata) {
				bare.publish(agentName, metadata);
			}

			@Override
			public AgentMetadata fetch(String agentName, Duration timeout) {
				return bare.fetch(agentName, timeout);
			}

			@Override
			public void invalidate(String agentName) {
				bare.invalidate(agentName);
			}

			@Override
			public Watch watch(String agentName, Consumer<String> onRemoved) {
				return bare.watch(agentName, onRemoved);
			}

			@Override
			public void close() {
				bare.close();
			}

		};
		assertThat(
				catchThrowableOfType(NixlException.class, () -> plain.publishDocument("a", KIND, new byte[1])).status())
			.isEqualTo(NixlStatus.NOT_SUPPORTED);
		assertThat(
				catchThrowableOfType(NixlException.class, () -> plain.fetchDocument("a", KIND, Duration.ZERO)).status())
			.isEqualTo(NixlStatus.NOT_SUPPORTED);
	}

	@Test
	void inMemoryDocumentsNeedTheMetadataAreAwaitedAndGoWithIt() throws Exception {
		InMemoryMetadataExchange exchange = closing(new InMemoryMetadataExchange());
		byte[] handle = document("{\"incarnation\":\"" + UUID.randomUUID() + "\"}");
		NixlException early = catchThrowableOfType(NixlException.class,
				() -> exchange.publishDocument(MetadataSamples.ONE_DRAM, KIND, handle));
		assertThat(early.status()).isEqualTo(NixlStatus.ERROR_INVALID_STATE);
		assertThat(early.getMessage()).contains("'one-dram'", "not published");

		CompletableFuture<byte[]> awaited = CompletableFuture
			.supplyAsync(() -> exchange.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ofSeconds(30)));
		exchange.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		exchange.publishDocument(MetadataSamples.ONE_DRAM, KIND, handle);
		assertThat(awaited.get(30, TimeUnit.SECONDS)).isEqualTo(handle);
		assertThat(exchange.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ZERO)).isEqualTo(handle);

		// republishing the metadata keeps the document; withdrawing it removes both
		exchange.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		assertThat(exchange.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ZERO)).isEqualTo(handle);
		exchange.invalidate(MetadataSamples.ONE_DRAM);
		NixlException gone = catchThrowableOfType(NixlException.class,
				() -> exchange.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ofMillis(100)));
		assertThat(gone.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(gone.remoteAgent()).isEqualTo(MetadataSamples.ONE_DRAM);
		assertThat(gone.getMessage()).contains("'one-dram'", "'" + KIND + "'");
		exchange.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		assertThat(catchThrowableOfType(NixlException.class,
				() -> exchange.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ZERO))
			.status()).as("not back with a new publication").isEqualTo(NixlStatus.TIMEOUT);
	}

	@Test
	void documentsOverTheCapOrWithABadKindAreRefusedByEveryExchange() throws Exception {
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(MetadataHttpServer.builder().token(TOKEN).store(store).start());
		HttpMetadataExchange client = client(server);
		client.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		byte[] largest = new byte[MetadataExchange.MAX_DOCUMENT_BYTES];
		Arrays.fill(largest, (byte) 7);
		byte[] over = new byte[MetadataExchange.MAX_DOCUMENT_BYTES + 1];
		for (MetadataExchange exchange : new MetadataExchange[] { store, client }) {
			NixlException tooLarge = catchThrowableOfType(NixlException.class,
					() -> exchange.publishDocument(MetadataSamples.ONE_DRAM, KIND, over));
			assertThat(tooLarge.status()).as(exchange.toString()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
			assertThat(tooLarge.getMessage()).contains("65537 bytes", "65536");
			assertThat(catchThrowableOfType(NixlException.class,
					() -> exchange.publishDocument(MetadataSamples.ONE_DRAM, "Bad Kind", new byte[1]))
				.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		}
		client.publishDocument(MetadataSamples.ONE_DRAM, KIND, largest);
		assertThat(client.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ZERO)).isEqualTo(largest);

		// the registry refuses what a client that skips the checks sends
		String secret = ownedEntry(server, "raw-owner");
		HttpResponse<String> badKind = send(server, "PUT", "/agents/raw-owner/documents/Bad_Kind", document("x"),
				secret);
		assertThat(badKind.statusCode()).isEqualTo(400);
		assertThat(badKind.body()).contains("document kind");
		assertThat(send(server, "PUT", "/agents/raw-owner/documents/a/b", document("x"), secret).statusCode())
			.isEqualTo(404);
		assertThat(send(server, "POST", documentPath("raw-owner", KIND), new byte[0], secret).statusCode())
			.isEqualTo(405);
		assertThat(store.isPublished("raw-owner")).isTrue();
		assertThat(
				catchThrowableOfType(NixlException.class, () -> store.fetchDocument("raw-owner", KIND, Duration.ZERO))
					.status())
			.isEqualTo(NixlStatus.TIMEOUT);
	}

	@Test
	void theRegistryRefusesAnOversizeDocumentDeclaredOrNotReadingNoFurtherThanTheCap() throws Exception {
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataRegistryHandler handler = MetadataRegistryHandler.builder().token(TOKEN).store(store).build();
		NixlAgent agent = closing(NixlAgent.create(AgentConfig.builder("sized").engine(Engine.EMBEDDED).build()));
		byte[] metadata = agent.localMetadata().toByteArray();
		MetadataRegistryHandler.Response created = handler.handle("PUT", "/nixl" + AgentPaths.metadataPath("", "sized"),
				"Bearer " + TOKEN, metadata.length, new ByteArrayInputStream(metadata));
		assertThat(created.status()).isEqualTo(201);
		String secret = created.headers().get(MetadataRegistryHandler.OWNER_SECRET_HEADER);
		String path = "/nixl" + documentPath("sized", KIND);
		byte[] over = new byte[MetadataExchange.MAX_DOCUMENT_BYTES + 1];
		MetadataRegistryHandler.Response declared = handler.handle("PUT", path, "Bearer " + TOKEN, secret, over.length,
				new ByteArrayInputStream(over));
		assertThat(declared.status()).isEqualTo(413);
		assertThat(new String(declared.body(), StandardCharsets.UTF_8)).contains("65536");
		ByteArrayInputStream endless = new ByteArrayInputStream(new byte[4 * MetadataExchange.MAX_DOCUMENT_BYTES]);
		MetadataRegistryHandler.Response undeclared = handler.handle("PUT", path, "Bearer " + TOKEN, secret, -1,
				endless);
		assertThat(undeclared.status()).isEqualTo(413);
		assertThat(endless.available()).as("read no further than the cap plus one byte")
			.isEqualTo(3 * MetadataExchange.MAX_DOCUMENT_BYTES - 1);
		assertThat(catchThrowableOfType(NixlException.class, () -> store.fetchDocument("sized", KIND, Duration.ZERO))
			.status()).isEqualTo(NixlStatus.TIMEOUT);
	}

	/** Creates the entry of an agent whose metadata names it, and returns its secret. */
	private String ownedEntry(MetadataHttpServer server, String agentName) throws Exception {
		NixlAgent agent = closing(NixlAgent.create(AgentConfig.builder(agentName).engine(Engine.EMBEDDED).build()));
		HttpResponse<String> created = send(server, "PUT", AgentPaths.metadataPath("", agentName),
				agent.localMetadata().toByteArray(), null);
		assertThat(created.statusCode()).isEqualTo(201);
		return created.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER).orElseThrow();
	}

	@Test
	void onlyTheOwnerOfAnExistingEntryPublishesItsDocumentsAndPeersFetchThem() throws Exception {
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(MetadataHttpServer.builder().token(TOKEN).store(store).start());
		HttpMetadataExchange owner = client(server);
		HttpMetadataExchange other = client(server);
		byte[] handle = document("handle-" + UUID.randomUUID());

		NixlException noEntry = catchThrowableOfType(NixlException.class,
				() -> owner.publishDocument(MetadataSamples.ONE_DRAM, KIND, handle));
		assertThat(noEntry.status()).isEqualTo(NixlStatus.ERROR_INVALID_STATE);
		assertThat(noEntry.getMessage()).contains("409", "'one-dram'");

		CompletableFuture<byte[]> awaited = CompletableFuture
			.supplyAsync(() -> other.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ofSeconds(30)));
		owner.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		owner.publishDocument(MetadataSamples.ONE_DRAM, KIND, handle);
		assertThat(awaited.get(30, TimeUnit.SECONDS)).isEqualTo(handle);
		assertThat(store.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ZERO)).isEqualTo(handle);

		NixlException squatted = catchThrowableOfType(NixlException.class,
				() -> other.publishDocument(MetadataSamples.ONE_DRAM, KIND, document("forged")));
		assertThat(squatted.status()).isEqualTo(NixlStatus.BUSY);
		for (String secret : new String[] { null, "forged-" + UUID.randomUUID() }) {
			for (String method : new String[] { "PUT", "DELETE" }) {
				HttpResponse<String> refused = send(server, method, documentPath(MetadataSamples.ONE_DRAM, KIND),
						document("forged"), secret);
				assertThat(refused.statusCode()).as(method + " with " + secret).isEqualTo(403);
				assertThat(refused.body()).contains("another owner");
			}
		}
		assertThat(other.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ZERO)).isEqualTo(handle);

		// the serving application's own agent: readable, never changed over HTTP
		store.publish("served", AgentMetadata.of(MetadataSamples.read("no-registrations.bin")));
		assertThat(send(server, "PUT", documentPath("served", KIND), document("x"), null).statusCode()).isEqualTo(403);

		// the owner's withdrawal takes the document with it
		owner.invalidate(MetadataSamples.ONE_DRAM);
		assertThat(send(server, "GET", documentPath(MetadataSamples.ONE_DRAM, KIND), new byte[0], null).statusCode())
			.isEqualTo(404);
		NixlException absent = catchThrowableOfType(NixlException.class,
				() -> other.fetchDocument(MetadataSamples.ONE_DRAM, KIND, Duration.ZERO));
		assertThat(absent.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(absent.getMessage()).contains("'" + KIND + "'", "'one-dram'");
	}

	@Test
	void documentsExpireWithTheirEntryAndLiveWhileItIsRenewed() throws Exception {
		Duration ttl = Duration.ofMillis(1200);
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(
				MetadataHttpServer.builder().token(TOKEN).store(store).entryTtl(ttl).start());
		HttpMetadataExchange renewing = client(server);
		renewing.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		renewing.publishDocument(MetadataSamples.ONE_DRAM, KIND, document("renewed"));
		String secret = ownedEntry(server, "abandoned");
		assertThat(send(server, "PUT", documentPath("abandoned", KIND), document("abandoned"), secret).statusCode())
			.isEqualTo(201);
		assertThat(send(server, "PUT", documentPath("abandoned", KIND), document("again"), secret).statusCode())
			.as("replaced")
			.isEqualTo(204);

		Eventually.until(ttl.plusSeconds(3), "the document of the entry nobody renews expires with it",
				() -> status(server, documentPath("abandoned", KIND)) == 404);
		assertThat(store.isPublished("abandoned")).isFalse();
		long until = System.nanoTime() + 2 * ttl.toNanos();
		while (System.nanoTime() < until) {
			HttpResponse<String> kept = send(server, "GET", documentPath(MetadataSamples.ONE_DRAM, KIND), new byte[0],
					null);
			assertThat(kept.statusCode()).as("the renewed entry's document").isEqualTo(200);
			assertThat(kept.body()).isEqualTo("renewed");
			Thread.sleep(200);
		}
	}

	@Test
	void documentsCountAgainstTheRegistrysBytesAndTheirNumberPerEntryIsCapped() throws Exception {
		NixlAgent agent = closing(NixlAgent.create(AgentConfig.builder("counted").engine(Engine.EMBEDDED).build()));
		byte[] metadata = agent.localMetadata().toByteArray();
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(
				MetadataHttpServer.builder().token(TOKEN).store(store).maxTotalBytes(metadata.length + 1000).start());
		HttpMetadataExchange client = client(server);
		client.publish(agent);
		client.publishDocument(agent.name(), "first", new byte[600]);
		NixlException full = catchThrowableOfType(NixlException.class,
				() -> client.publishDocument(agent.name(), "second", new byte[600]));
		assertThat(full.status()).isEqualTo(NixlStatus.UNAVAILABLE);
		assertThat(full.retryable()).isTrue();
		assertThat(full.getMessage()).contains("507", "bytes of metadata");
		// replacing a document counts its new size only; a smaller one fits beside it
		client.publishDocument(agent.name(), "first", new byte[900]);
		client.publishDocument(agent.name(), "first", new byte[500]);
		client.publishDocument(agent.name(), "second", new byte[400]);
		assertThat(catchThrowableOfType(NixlException.class,
				() -> client.publishDocument(agent.name(), "third", new byte[101]))
			.status()).isEqualTo(NixlStatus.UNAVAILABLE);
		// withdrawing the entry frees its documents' bytes
		client.invalidate(agent.name());
		client.publish(agent);
		client.publishDocument(agent.name(), "third", new byte[1000]);
		assertThat(store.fetchDocument(agent.name(), "third", Duration.ZERO)).hasSize(1000);
		assertThat(catchThrowableOfType(NixlException.class,
				() -> store.fetchDocument(agent.name(), "first", Duration.ZERO))
			.status()).isEqualTo(NixlStatus.TIMEOUT);
	}

	@Test
	void anEntryCarriesAtMostSixteenDocumentsAndItsOwnerDeletesOne() throws Exception {
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(MetadataHttpServer.builder().token(TOKEN).store(store).start());
		String secret = ownedEntry(server, "deleter");
		for (int i = 0; i < MetadataRegistryHandler.MAX_DOCUMENTS_PER_ENTRY; i++) {
			assertThat(send(server, "PUT", documentPath("deleter", "k" + i), document("v" + i), secret).statusCode())
				.isEqualTo(201);
		}
		HttpResponse<String> tooMany = send(server, "PUT", documentPath("deleter", "one-more"), new byte[0], secret);
		assertThat(tooMany.statusCode()).isEqualTo(507);
		assertThat(tooMany.body()).contains("maximum of 16 documents");
		assertThat(send(server, "DELETE", documentPath("deleter", "k0"), new byte[0], null).statusCode())
			.as("without the secret")
			.isEqualTo(403);
		assertThat(send(server, "DELETE", documentPath("deleter", "k0"), new byte[0], secret).statusCode())
			.isEqualTo(204);
		assertThat(status(server, documentPath("deleter", "k0"))).isEqualTo(404);
		assertThat(store.fetchDocument("deleter", "k1", Duration.ZERO)).isEqualTo(document("v1"));
		assertThat(send(server, "PUT", documentPath("deleter", "one-more"), new byte[0], secret).statusCode())
			.isEqualTo(201);
		assertThat(store.fetchDocument("deleter", "one-more", Duration.ZERO)).isEmpty();
	}

	private MetadataPublication publication(MetadataExchange exchange, NixlAgent agent, byte[] handle) {
		return closing(MetadataPublication.builder(exchange, agent)
			.checkInterval(Duration.ofMillis(100))
			.maxRetryInterval(Duration.ofMillis(100))
			.document(KIND, handle)
			.document("layout", document("layers=2"))
			.build());
	}

	@Test
	void aPublicationPublishesItsDocumentsAfterEveryPublicationAndWithdrawsThemWithIt() {
		InMemoryMetadataExchange exchange = closing(new InMemoryMetadataExchange());
		NixlAgent agent = closing(NixlAgent
			.create(AgentConfig.builder("publisher-" + ids.incrementAndGet()).engine(Engine.EMBEDDED).build()));
		byte[] handle = document("incarnation-" + UUID.randomUUID());
		MetadataPublication publication = publication(exchange, agent, handle);
		publication.publish();
		assertThat(exchange.fetchDocument(agent.name(), KIND, Duration.ZERO)).isEqualTo(handle);
		assertThat(exchange.fetchDocument(agent.name(), "layout", Duration.ZERO)).isEqualTo(document("layers=2"));

		exchange.invalidate(agent.name());
		Eventually.until(Duration.ofSeconds(5), "the entry and its documents are back", () -> {
			try {
				return Arrays.equals(exchange.fetchDocument(agent.name(), "layout", Duration.ZERO),
						document("layers=2"));
			}
			catch (NixlException ex) {
				return false;
			}
		});
		assertThat(exchange.fetchDocument(agent.name(), KIND, Duration.ZERO)).isEqualTo(handle);

		// a document removed alone is noticed by the checks
		assertThat(exchange.removeDocument(agent.name(), KIND)).isTrue();
		Eventually.until(Duration.ofSeconds(5), "the document is back", () -> {
			try {
				return Arrays.equals(exchange.fetchDocument(agent.name(), KIND, Duration.ZERO), handle);
			}
			catch (NixlException ex) {
				return false;
			}
		});
		Eventually.until(Duration.ofSeconds(5), "published again",
				() -> publication.state().status() == MetadataPublication.Status.PUBLISHED);

		publication.withdraw();
		assertThat(exchange.isPublished(agent.name())).isFalse();
		assertThat(catchThrowableOfType(NixlException.class,
				() -> exchange.fetchDocument(agent.name(), KIND, Duration.ZERO))
			.status()).isEqualTo(NixlStatus.TIMEOUT);
	}

	@Test
	void aPublicationWhoseDocumentsCannotBePublishedIsNotPublished() {
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataExchange withoutDocuments = closing(new ForwardingMetadataExchange(store) {

			@Override
			public void publishDocument(String agentName, String kind, byte[] document) {
				throw new NixlException(NixlStatus.UNAVAILABLE, "publish_document", agentName, null,
						"documents are down");
			}

		});
		NixlAgent agent = closing(NixlAgent
			.create(AgentConfig.builder("undocumented-" + ids.incrementAndGet()).engine(Engine.EMBEDDED).build()));
		MetadataPublication publication = publication(withoutDocuments, agent, document("h"));
		NixlException failed = catchThrowableOfType(NixlException.class, publication::publish);
		assertThat(failed.status()).isEqualTo(NixlStatus.UNAVAILABLE);
		MetadataPublication.State state = publication.state();
		assertThat(state.status()).isEqualTo(MetadataPublication.Status.NOT_PUBLISHED);
		assertThat(state.reason()).contains("documents are down");
		assertThat(publication.failures()).isPositive();
	}

	@Test
	void aPublicationRefusesABadDocumentWhenBuilt() {
		InMemoryMetadataExchange exchange = closing(new InMemoryMetadataExchange());
		NixlAgent agent = closing(NixlAgent
			.create(AgentConfig.builder("refused-" + ids.incrementAndGet()).engine(Engine.EMBEDDED).build()));
		MetadataPublication.Builder builder = MetadataPublication.builder(exchange, agent);
		assertThat(catchThrowableOfType(NixlException.class, () -> builder.document("kv_cache", new byte[1])).status())
			.isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(catchThrowableOfType(NixlException.class,
				() -> builder.document(KIND, new byte[MetadataExchange.MAX_DOCUMENT_BYTES + 1]))
			.getMessage()).contains("over the limit");
	}

}
