package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

import com.sun.net.httpserver.HttpServer;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.MetadataValues;
import dev.nixl4j.testsupport.MetadataSamples;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link HttpMetadataExchange} against {@link MetadataHttpServer} and hand-written
 * hostile servers, over real HTTP on the loopback interface.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HttpMetadataExchangeTest {

	private static final String TOKEN = "tok-" + UUID.randomUUID();

	private final List<AutoCloseable> resources = new ArrayList<>();

	private MetadataHttpServer server;

	@BeforeEach
	void startServer() {
		this.server = MetadataHttpServer.builder().token(TOKEN).start();
	}

	@AfterEach
	void closeAll() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
		this.server.close();
	}

	private HttpMetadataExchange client(URI base, String token) {
		return client(HttpMetadataExchange.builder(base).token(token));
	}

	private HttpMetadataExchange client(HttpMetadataExchange.Builder builder) {
		HttpMetadataExchange client = builder.pollInterval(Duration.ofMillis(50))
			.maxRetryInterval(Duration.ofMillis(100))
			.build();
		this.resources.add(client);
		return client;
	}

	private HttpMetadataExchange client() {
		return client(this.server.baseUri(), TOKEN);
	}

	@Test
	void metadataPublishedByOneClientIsFetchedByAnother() {
		client().publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		assertThat(client().fetch(MetadataSamples.ONE_DRAM, Duration.ofSeconds(5)).toByteArray())
			.isEqualTo(MetadataSamples.oneDram());
	}

	@Test
	void agentNamesAreEncodedAsOnePathSegment() {
		byte[] utf8 = MetadataSamples.read("utf8-name.bin");
		client().publish(MetadataSamples.UTF8_NAME, AgentMetadata.of(utf8));
		assertThat(client().fetch(MetadataSamples.UTF8_NAME, Duration.ofSeconds(5)).toByteArray()).isEqualTo(utf8);
		assertThat(AgentPaths.decode(AgentPaths.encode("a/b c+%.."))).isEqualTo("a/b c+%..");
		assertThat(AgentPaths.encode("..")).isEqualTo("%2E%2E");
	}

	@Test
	void aWrongTokenIsRefusedWithoutShowingIt() {
		client().publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		String wrong = "wrong-" + UUID.randomUUID();
		HttpMetadataExchange intruder = client(this.server.baseUri(), wrong);
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> intruder.fetch(MetadataSamples.ONE_DRAM, Duration.ofSeconds(5)));
		assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(failure.getMessage()).contains("refused the bearer token (HTTP 401)").doesNotContain(wrong, TOKEN);
		assertThat(intruder.toString()).contains(this.server.baseUri().toString()).doesNotContain(wrong);
	}

	@Test
	void rawRequestsWithoutOrWithAWrongTokenGetNoMetadata() throws Exception {
		client().publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		URI uri = URI.create(this.server.baseUri() + "/agents/one-dram/metadata");
		try (HttpClient http = HttpClient.newHttpClient()) {
			HttpResponse<byte[]> none = http.send(HttpRequest.newBuilder(uri).build(),
					HttpResponse.BodyHandlers.ofByteArray());
			HttpResponse<byte[]> wrong = http.send(
					HttpRequest.newBuilder(uri).header("Authorization", "Bearer not-" + TOKEN).build(),
					HttpResponse.BodyHandlers.ofByteArray());
			HttpResponse<byte[]> right = http.send(
					HttpRequest.newBuilder(uri).header("Authorization", "Bearer " + TOKEN).build(),
					HttpResponse.BodyHandlers.ofByteArray());
			for (HttpResponse<byte[]> refused : List.of(none, wrong)) {
				assertThat(refused.statusCode()).isEqualTo(401);
				assertThat(refused.headers().firstValue("WWW-Authenticate"))
					.hasValueSatisfying(value -> assertThat(value).startsWith("Bearer"));
				assertThat(new String(refused.body(), StandardCharsets.ISO_8859_1)).doesNotContain("nixlSerDes",
						"one-dram");
			}
			assertThat(right.statusCode()).isEqualTo(200);
			assertThat(right.headers().firstValue("Content-Type")).hasValue("application/octet-stream");
			assertThat(right.body()).isEqualTo(MetadataSamples.oneDram());
		}
	}

	@Test
	void fetchOfAnUnknownAgentFailsAtItsDeadlineNamingTheAgent() {
		// long enough for the client's first connection on a loaded machine, so that at
		// least one answer (404) arrives and the message can say what it was, even when
		// the deadline cuts the last attempt short
		Duration timeout = Duration.ofSeconds(5);
		long start = System.nanoTime();
		NixlException failure = catchThrowableOfType(NixlException.class, () -> client().fetch("ghost", timeout));
		Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
		assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(failure.remoteAgent()).isEqualTo("ghost");
		assertThat(failure.getMessage()).contains("'ghost'", "not published");
		assertThat(elapsed).isGreaterThanOrEqualTo(timeout).isLessThan(timeout.plusSeconds(3));
	}

	@Test
	void aClosedServerFailsAtTheDeadlineAndFetchRecoversWhenItComesBack() throws Exception {
		int port = this.server.port();
		HttpMetadataExchange client = client();
		this.server.close();
		Duration timeout = Duration.ofMillis(500);
		long start = System.nanoTime();
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> client.fetch(MetadataSamples.ONE_DRAM, timeout));
		Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
		assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(failure.getMessage()).contains("'one-dram'", "connection refused");
		assertThat(elapsed).isGreaterThanOrEqualTo(timeout).isLessThan(timeout.plusSeconds(3));

		CompletableFuture<AgentMetadata> fetched = CompletableFuture
			.supplyAsync(() -> client.fetch(MetadataSamples.ONE_DRAM, Duration.ofSeconds(20)));
		this.server = MetadataHttpServer.builder().token(TOKEN).port(port).start();
		client.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		assertThat(fetched.get(30, TimeUnit.SECONDS).toByteArray()).isEqualTo(MetadataSamples.oneDram());
	}

	@Test
	void failuresThatMayPassAreRetryableAndRefusedTokensAreNot() throws Exception {
		int port = this.server.port();
		HttpMetadataExchange client = client();
		this.server.close();
		NixlException refused = catchThrowableOfType(NixlException.class,
				() -> client.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram())));
		assertThat(refused.status()).isEqualTo(NixlStatus.UNAVAILABLE);
		assertThat(refused.retryable()).as("a registry not listening may come").isTrue();

		HttpServer failing = hostile(exchange -> {
			exchange.getRequestBody().readAllBytes();
			exchange.sendResponseHeaders(503, -1);
		});
		NixlException serverError = catchThrowableOfType(NixlException.class, () -> client(base(failing), TOKEN)
			.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram())));
		assertThat(serverError.status()).isEqualTo(NixlStatus.UNAVAILABLE);
		assertThat(serverError.retryable()).as("a server error may pass").isTrue();

		this.server = MetadataHttpServer.builder().token(TOKEN).port(port).start();
		NixlException token = catchThrowableOfType(NixlException.class,
				() -> client(this.server.baseUri(), "wrong-" + UUID.randomUUID()).publish(MetadataSamples.ONE_DRAM,
						AgentMetadata.of(MetadataSamples.oneDram())));
		assertThat(token.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(token.retryable()).as("a refused token needs another token").isFalse();
		client.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
	}

	@Test
	void anEndlessBodyIsCutAtTheCapAndRejected() throws Exception {
		AtomicLong written = new AtomicLong();
		HttpServer hostile = hostile(exchange -> {
			exchange.sendResponseHeaders(200, 0);
			byte[] chunk = new byte[64 * 1024];
			try (OutputStream out = exchange.getResponseBody()) {
				for (int i = 0; i < 4096; i++) {
					out.write(chunk);
					written.addAndGet(chunk.length);
				}
			}
		});
		HttpMetadataExchange client = client(
				HttpMetadataExchange.builder(base(hostile)).token(TOKEN).maxBytes(256 * 1024));
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> client.fetch("flood", Duration.ofSeconds(10)));
		assertThat(failure.status()).isEqualTo(NixlStatus.INVALID_METADATA);
		assertThat(failure.getMessage()).contains("over the limit of 262144 bytes");
		assertThat(written.get()).as("the client stopped reading long before the 256 MiB the server had")
			.isLessThan(64L << 20);
	}

	@Test
	void aDeclaredOversizeBodyIsRejectedWithoutReadingIt() throws Exception {
		AtomicLong written = new AtomicLong();
		HttpServer hostile = hostile(exchange -> {
			exchange.sendResponseHeaders(200, 1L << 30);
			byte[] chunk = new byte[64 * 1024];
			OutputStream out = exchange.getResponseBody();
			for (int i = 0; i < (1 << 30) / chunk.length; i++) {
				out.write(chunk);
				written.addAndGet(chunk.length);
			}
		});
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> client(base(hostile), TOKEN).fetch("big", Duration.ofSeconds(10)));
		assertThat(failure.status()).isEqualTo(NixlStatus.INVALID_METADATA);
		assertThat(failure.getMessage()).contains("over the limit of " + MetadataValues.DEFAULT_MAX_BYTES + " bytes");
		assertThat(written.get()).as("the client did not read the 1 GiB it was offered").isLessThan(64L << 20);
	}

	@Test
	void aRegistryAskingForRenewalsTooOftenOrWithNoNumberIsNotObeyed() throws Exception {
		for (String ttl : List.of("1", "not-a-number")) {
			AtomicInteger renewals = new AtomicInteger();
			HttpServer hostile = hostile(exchange -> {
				exchange.getRequestBody().readAllBytes();
				if (exchange.getRequestMethod().equals("POST")) {
					renewals.incrementAndGet();
					exchange.sendResponseHeaders(204, -1);
				}
				else {
					exchange.getResponseHeaders().set(MetadataRegistryHandler.OWNER_SECRET_HEADER, "secret");
					exchange.getResponseHeaders().set(MetadataRegistryHandler.ENTRY_TTL_HEADER, ttl);
					exchange.sendResponseHeaders(201, -1);
				}
				exchange.close();
			});
			HttpMetadataExchange client = client(base(hostile), TOKEN);
			client.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
			Thread.sleep(600);
			// a TTL of 1 ms would mean a renewal every third of a millisecond: 1,800 in
			// this time
			assertThat(renewals.get()).as("renewals in 0.6 s for a TTL header of '%s'", ttl).isLessThanOrEqualTo(25);
		}
	}

	@Test
	void aCorruptBodyIsRejected() throws Exception {
		byte[] random = new byte[2048];
		new Random(3).nextBytes(random);
		HttpServer hostile = hostile(exchange -> {
			exchange.sendResponseHeaders(200, random.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(random);
			}
		});
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> client(base(hostile), TOKEN).fetch("corrupt", Duration.ofSeconds(10)));
		assertThat(failure.status()).isEqualTo(NixlStatus.INVALID_METADATA);
		assertThat(failure.getMessage()).contains("not NIXL agent metadata");
	}

	@Test
	void aWatchFiresOnceWhenTheMetadataIsDeleted() throws Exception {
		HttpMetadataExchange publisher = client();
		HttpMetadataExchange watcher = client();
		publisher.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		AtomicInteger told = new AtomicInteger();
		CompletableFuture<String> first = new CompletableFuture<>();
		watcher.watch(MetadataSamples.ONE_DRAM, name -> {
			told.incrementAndGet();
			first.complete(name);
		});
		publisher.invalidate(MetadataSamples.ONE_DRAM);
		assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo(MetadataSamples.ONE_DRAM);

		// published and deleted again: a newer watch is told, the first one is not told
		// twice
		publisher.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		CompletableFuture<String> second = new CompletableFuture<>();
		watcher.watch(MetadataSamples.ONE_DRAM, second::complete);
		publisher.invalidate(MetadataSamples.ONE_DRAM);
		assertThat(second.get(10, TimeUnit.SECONDS)).isEqualTo(MetadataSamples.ONE_DRAM);
		assertThat(told).hasValue(1);
	}

	@Test
	void anErrorFromAWatcherIsCountedAndTheWatchThreadGoesOnToTheOtherWatches() throws Exception {
		HttpMetadataExchange publisher = client();
		HttpMetadataExchange watcher = client();
		publisher.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		publisher.publish(MetadataSamples.UTF8_NAME, AgentMetadata.of(MetadataSamples.read("utf8-name.bin")));
		CompletableFuture<String> failing = new CompletableFuture<>();
		watcher.watch(MetadataSamples.ONE_DRAM, name -> {
			failing.complete(name);
			throw new OutOfMemoryError("injected into a watcher");
		});
		CompletableFuture<String> later = new CompletableFuture<>();
		watcher.watch(MetadataSamples.UTF8_NAME, later::complete);

		publisher.invalidate(MetadataSamples.ONE_DRAM);
		assertThat(failing).succeedsWithin(Duration.ofSeconds(1)).isEqualTo(MetadataSamples.ONE_DRAM);
		publisher.invalidate(MetadataSamples.UTF8_NAME);

		assertThat(later).as("the watch thread still polls")
			.succeedsWithin(Duration.ofSeconds(1))
			.isEqualTo(MetadataSamples.UTF8_NAME);
		assertThat(watcher.internalErrors()).isOne();
	}

	@Test
	void aBlankTokenIsRefusedAtConstruction() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> HttpMetadataExchange.builder(this.server.baseUri()).token("  ").build())
			.withMessageContaining("needs a bearer token");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> HttpMetadataExchange.builder(this.server.baseUri()).build())
			.withMessageContaining("needs a bearer token");
	}

	@Test
	void neitherTheTokenNorMetadataIsLoggedOrShownByFailingFetches() throws Exception {
		byte[] metadata = MetadataSamples.oneDram();
		HttpServer impostor = hostile(exchange -> {
			exchange.sendResponseHeaders(200, metadata.length);
			try (OutputStream out = exchange.getResponseBody()) {
				out.write(metadata);
			}
		});
		List<String> logged = new ArrayList<>();
		List<String> shown = new ArrayList<>();
		Logger root = Logger.getLogger("");
		Level rootLevel = root.getLevel();
		Logger nixl = Logger.getLogger("dev.nixl4j");
		Level nixlLevel = nixl.getLevel();
		SimpleFormatter formatter = new SimpleFormatter();
		Handler capture = new Handler() {
			@Override
			public void publish(LogRecord record) {
				synchronized (logged) {
					logged.add(formatter.format(record));
				}
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}
		};
		capture.setLevel(Level.ALL);
		root.addHandler(capture);
		root.setLevel(Level.ALL);
		nixl.setLevel(Level.ALL);
		try {
			client().publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(metadata));
			HttpMetadataExchange good = client();
			HttpMetadataExchange wrongToken = client(this.server.baseUri(), TOKEN + "x");
			HttpMetadataExchange toImpostor = client(base(impostor), TOKEN);
			shown.add(good.toString());
			shown.add(toImpostor.toString());
			for (Runnable failing : List.<Runnable>of(() -> good.fetch("absent", Duration.ofMillis(300)),
					() -> wrongToken.fetch(MetadataSamples.ONE_DRAM, Duration.ofSeconds(2)),
					() -> toImpostor.fetch("someone-else", Duration.ofSeconds(2)))) {
				NixlException failure = catchThrowableOfType(NixlException.class, failing::run);
				shown.add(failure.toString());
				for (Throwable t = failure.getCause(); t != null; t = t.getCause()) {
					shown.add(t.toString());
				}
			}
			assertThat(logged).as("the retries were logged").isNotEmpty();
		}
		finally {
			root.removeHandler(capture);
			root.setLevel(rootLevel);
			nixl.setLevel(nixlLevel);
		}
		String base64 = Base64.getEncoder().encodeToString(metadata);
		String raw = new String(metadata, StandardCharsets.ISO_8859_1);
		synchronized (logged) {
			for (String text : concat(logged, shown)) {
				assertThat(text).doesNotContain(TOKEN, base64, raw);
			}
		}
	}

	private static List<String> concat(List<String> a, List<String> b) {
		List<String> all = new ArrayList<>(a);
		all.addAll(b);
		return all;
	}

	private HttpServer hostile(com.sun.net.httpserver.HttpHandler handler) throws IOException {
		HttpServer hostile = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
		ExecutorService executor = Executors.newSingleThreadExecutor();
		hostile.setExecutor(executor);
		hostile.createContext("/", exchange -> {
			try (exchange) {
				handler.handle(exchange);
			}
		});
		hostile.start();
		this.resources.add(() -> {
			hostile.stop(0);
			executor.shutdownNow();
			executor.awaitTermination(10, TimeUnit.SECONDS);
		});
		return hostile;
	}

	private static URI base(HttpServer server) {
		return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/nixl");
	}

}
