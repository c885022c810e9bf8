package dev.nixl4j.metadata.http;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.ForwardingMetadataExchange;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.MetadataSamples;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Owners, bounds and expiry of the HTTP metadata registry, through real
 * {@link MetadataHttpServer}s, {@link HttpMetadataExchange} clients and raw HTTP requests
 * of a second token holder.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MetadataRegistryOwnershipTest {

	private static final String TOKEN = "registry-" + UUID.randomUUID();

	private static final String EMPTY_AGENT = "empty-agent";

	private static final String THREE_DRAM = "three-dram";

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

	private HttpResponse<String> send(MetadataHttpServer server, String method, String agentName, byte[] body,
			String ownerSecret) throws Exception {
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create(AgentPaths.metadataPath(server.baseUri().toString(), agentName)))
			.timeout(Duration.ofSeconds(10))
			.header("Authorization", "Bearer " + TOKEN)
			.method(method, (body.length > 0) ? HttpRequest.BodyPublishers.ofByteArray(body)
					: HttpRequest.BodyPublishers.noBody());
		if (ownerSecret != null) {
			request.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownerSecret);
		}
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> send(MetadataHttpServer server, String method, String agentName, byte[] body)
			throws Exception {
		return send(server, method, agentName, body, null);
	}

	@Test
	void aSecondTokenHolderCannotReplaceRenewOrDeleteAnotherAgentsEntry() throws Exception {
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(MetadataHttpServer.builder().token(TOKEN).store(store).start());
		HttpMetadataExchange owner = client(server);
		HttpMetadataExchange other = client(server);
		byte[] original = MetadataSamples.oneDram();
		owner.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(original));

		NixlException refused = catchThrowableOfType(NixlException.class,
				() -> other.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(original)));
		assertThat(refused.status()).isEqualTo(NixlStatus.BUSY);
		assertThat(refused.getMessage()).contains("'one-dram'", "another owner", "403");
		assertThat(catchThrowableOfType(NixlException.class, () -> other.invalidate(MetadataSamples.ONE_DRAM)).status())
			.isEqualTo(NixlStatus.BUSY);
		for (String secret : new String[] { null, "", "forged-" + UUID.randomUUID() }) {
			for (String method : new String[] { "PUT", "POST", "DELETE" }) {
				byte[] body = method.equals("PUT") ? MetadataSamples.read("partial-two-of-three.bin") : new byte[0];
				HttpResponse<String> response = send(server, method, MetadataSamples.ONE_DRAM, body, secret);
				assertThat(response.statusCode()).as(method + " with secret " + secret).isEqualTo(403);
				assertThat(response.body()).contains("another owner").doesNotContain("nixlSerDes");
			}
		}
		assertThat(store.fetch(MetadataSamples.ONE_DRAM, Duration.ZERO).toByteArray()).as("unchanged")
			.isEqualTo(original);

		// the owner replaces and withdraws its entry; then the name is free for anyone
		owner.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(original));
		owner.invalidate(MetadataSamples.ONE_DRAM);
		assertThat(store.isPublished(MetadataSamples.ONE_DRAM)).isFalse();
		other.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(original));
		assertThat(store.isPublished(MetadataSamples.ONE_DRAM)).isTrue();
	}

	@Test
	void theServingApplicationsOwnEntryCannotBeChangedOverHttp() throws Exception {
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(MetadataHttpServer.builder().token(TOKEN).store(store).start());
		store.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		assertThat(send(server, "PUT", MetadataSamples.ONE_DRAM, MetadataSamples.oneDram()).statusCode())
			.isEqualTo(403);
		assertThat(send(server, "DELETE", MetadataSamples.ONE_DRAM, new byte[0]).statusCode()).isEqualTo(403);
		assertThat(send(server, "GET", MetadataSamples.ONE_DRAM, new byte[0]).statusCode()).isEqualTo(200);
		assertThat(store.isPublished(MetadataSamples.ONE_DRAM)).isTrue();
	}

	@Test
	void theFirstPutHandsOutASecretThatOnlyItsHolderCanUse() throws Exception {
		MetadataHttpServer server = closing(MetadataHttpServer.builder().token(TOKEN).start());
		byte[] body = MetadataSamples.read("no-registrations.bin");
		HttpResponse<String> created = send(server, "PUT", EMPTY_AGENT, body);
		assertThat(created.statusCode()).isEqualTo(201);
		String secret = created.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER).orElseThrow();
		assertThat(secret).hasSizeGreaterThanOrEqualTo(40);
		assertThat(created.headers().firstValue(MetadataRegistryHandler.ENTRY_TTL_HEADER)).hasValue("30000");
		assertThat(send(server, "PUT", EMPTY_AGENT, body, secret).statusCode()).isEqualTo(204);
		assertThat(send(server, "POST", EMPTY_AGENT, new byte[0], secret).statusCode()).isEqualTo(204);
		assertThat(send(server, "DELETE", EMPTY_AGENT, new byte[0], secret).statusCode()).isEqualTo(204);
		assertThat(send(server, "GET", EMPTY_AGENT, new byte[0]).statusCode()).isEqualTo(404);
		assertThat(send(server, "POST", EMPTY_AGENT, new byte[0], secret).statusCode()).as("renewal of a free name")
			.isEqualTo(404);
		HttpResponse<String> again = send(server, "PUT", EMPTY_AGENT, body, secret);
		assertThat(again.statusCode()).as("the old secret claims a free name anew").isEqualTo(201);
		assertThat(again.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER)).get().isNotEqualTo(secret);
		assertThat(send(server, "DELETE", EMPTY_AGENT, new byte[0], secret).statusCode()).as("the old secret")
			.isEqualTo(403);
	}

	@Test
	void theRegistryRefusesTheEntryPastItsCount() throws Exception {
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(
				MetadataHttpServer.builder().token(TOKEN).store(store).maxEntries(2).start());
		HttpMetadataExchange client = client(server);
		client.publish(EMPTY_AGENT, AgentMetadata.of(MetadataSamples.read("no-registrations.bin")));
		client.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		HttpResponse<String> full = send(server, "PUT", THREE_DRAM, MetadataSamples.read("three-dram.bin"));
		assertThat(full.statusCode()).isEqualTo(507);
		assertThat(full.body()).contains("maximum of 2 entries");
		NixlException refused = catchThrowableOfType(NixlException.class,
				() -> client.publish(THREE_DRAM, AgentMetadata.of(MetadataSamples.read("three-dram.bin"))));
		assertThat(refused.status()).isEqualTo(NixlStatus.UNAVAILABLE);
		assertThat(refused.getMessage()).contains("full", "507", "maximum of 2 entries");
		assertThat(store.isPublished(THREE_DRAM)).isFalse();
		// an owner may still replace its entry in a full registry, and a withdrawal makes
		// room
		client.publish(EMPTY_AGENT, AgentMetadata.of(MetadataSamples.read("no-registrations.bin")));
		client.invalidate(EMPTY_AGENT);
		client.publish(THREE_DRAM, AgentMetadata.of(MetadataSamples.read("three-dram.bin")));
		assertThat(store.isPublished(THREE_DRAM)).isTrue();
	}

	@Test
	void theRegistryRefusesBytesPastItsBudgetDeclaredOrNot() throws Exception {
		byte[] empty = MetadataSamples.read("no-registrations.bin");
		byte[] oneDram = MetadataSamples.oneDram();
		byte[] threeDram = MetadataSamples.read("three-dram.bin");
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(MetadataHttpServer.builder()
			.token(TOKEN)
			.store(store)
			.maxTotalBytes(empty.length + oneDram.length + 10)
			.start());
		assertThat(send(server, "PUT", EMPTY_AGENT, empty).statusCode()).isEqualTo(201);
		assertThat(send(server, "PUT", MetadataSamples.ONE_DRAM, oneDram).statusCode()).isEqualTo(201);
		HttpResponse<String> declared = send(server, "PUT", THREE_DRAM, threeDram);
		assertThat(declared.statusCode()).isEqualTo(507);
		assertThat(declared.body()).contains("bytes of metadata");
		HttpRequest chunked = HttpRequest
			.newBuilder(URI.create(AgentPaths.metadataPath(server.baseUri().toString(), THREE_DRAM)))
			.timeout(Duration.ofSeconds(10))
			.header("Authorization", "Bearer " + TOKEN)
			.PUT(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(threeDram)))
			.build();
		HttpResponse<String> undeclared = this.http.send(chunked, HttpResponse.BodyHandlers.ofString());
		assertThat(undeclared.statusCode()).isEqualTo(507);
		assertThat(store.isPublished(THREE_DRAM)).isFalse();
		assertThat(store.isPublished(EMPTY_AGENT) && store.isPublished(MetadataSamples.ONE_DRAM)).isTrue();
	}

	@Test
	void anEntryNotRenewedExpiresWithinItsTtlWhileARenewedOneStays() throws Exception {
		Duration ttl = Duration.ofMillis(1500);
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(
				MetadataHttpServer.builder().token(TOKEN).store(store).entryTtl(ttl).start());
		HttpMetadataExchange renewing = client(server);
		renewing.publish(EMPTY_AGENT, AgentMetadata.of(MetadataSamples.read("no-registrations.bin")));
		long start = System.nanoTime();
		assertThat(send(server, "PUT", MetadataSamples.ONE_DRAM, MetadataSamples.oneDram()).statusCode())
			.isEqualTo(201);
		CountDownLatch told = new CountDownLatch(1);
		closing(store.watch(MetadataSamples.ONE_DRAM, name -> told.countDown()));

		Eventually.until(ttl.plusSeconds(3), "the entry nobody renews expires",
				() -> sendQuietly(server, "GET", MetadataSamples.ONE_DRAM) == 404);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not before its TTL").isGreaterThanOrEqualTo(ttl);
		assertThat(told.await(5, TimeUnit.SECONDS)).as("the store's watch is told").isTrue();
		assertThat(store.isPublished(MetadataSamples.ONE_DRAM)).isFalse();
		// the renewed entry outlives three TTLs
		long renewedUntil = System.nanoTime() + 3 * ttl.toNanos();
		while (System.nanoTime() < renewedUntil) {
			assertThat(sendQuietly(server, "GET", EMPTY_AGENT)).as("the renewed entry").isEqualTo(200);
			Thread.sleep(200);
		}
		assertThat(send(server, "PUT", MetadataSamples.ONE_DRAM, MetadataSamples.oneDram()).statusCode())
			.as("an expired name is free")
			.isEqualTo(201);
	}

	@Test
	void aRestartedOwnerGetsItsNameBackWhenTheOldEntryExpires() {
		Duration ttl = Duration.ofMillis(1000);
		MetadataHttpServer server = closing(MetadataHttpServer.builder().token(TOKEN).entryTtl(ttl).start());
		AgentMetadata metadata = AgentMetadata.of(MetadataSamples.oneDram());
		HttpMetadataExchange first = HttpMetadataExchange.builder(server.baseUri()).token(TOKEN).build();
		first.publish(MetadataSamples.ONE_DRAM, metadata);
		first.close();
		HttpMetadataExchange restarted = client(server);
		assertThat(
				catchThrowableOfType(NixlException.class, () -> restarted.publish(MetadataSamples.ONE_DRAM, metadata))
					.status())
			.isEqualTo(NixlStatus.BUSY);
		Eventually.until(ttl.plusSeconds(3), "the restarted owner publishes", () -> {
			try {
				restarted.publish(MetadataSamples.ONE_DRAM, metadata);
				return true;
			}
			catch (NixlException ex) {
				assertThat(ex.status()).isEqualTo(NixlStatus.BUSY);
				return false;
			}
		});
	}

	@Test
	void anOwnerRepublishesToARestartedRegistryAndRenewsThereWithoutLoggingItsSecret() throws Exception {
		Duration ttl = Duration.ofMillis(900);
		MetadataHttpServer first = MetadataHttpServer.builder().token(TOKEN).entryTtl(ttl).start();
		int port = first.port();
		HttpMetadataExchange client = client(first);
		List<String> logged = new ArrayList<>();
		Logger logger = Logger.getLogger(HttpMetadataExchange.class.getName());
		Handler capture = new Handler() {
			@Override
			public void publish(LogRecord record) {
				synchronized (logged) {
					logged.add(String.valueOf(record.getMessage()));
				}
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}
		};
		logger.addHandler(capture);
		try {
			AgentMetadata metadata = AgentMetadata.of(MetadataSamples.oneDram());
			client.publish(MetadataSamples.ONE_DRAM, metadata);
			first.close();
			// renewals fail while no registry listens; they are logged once and tried
			// again
			Thread.sleep(ttl.toMillis());
			MetadataHttpServer second = closing(
					MetadataHttpServer.builder().token(TOKEN).entryTtl(ttl).port(port).start());
			Eventually.until(Duration.ofSeconds(5), "the renewal finds the entry gone", () -> {
				synchronized (logged) {
					return logged.stream().anyMatch(message -> message.contains("no longer holds"));
				}
			});
			client.publish(MetadataSamples.ONE_DRAM, metadata);
			long stayUntil = System.nanoTime() + 3 * ttl.toNanos();
			while (System.nanoTime() < stayUntil) {
				assertThat(sendQuietly(second, "GET", MetadataSamples.ONE_DRAM)).as("renewed at the new registry")
					.isEqualTo(200);
				Thread.sleep(150);
			}
		}
		finally {
			logger.removeHandler(capture);
		}
		synchronized (logged) {
			assertThat(logged.stream().filter(message -> message.contains("Could not renew"))).hasSize(1);
			assertThat(String.join("\n", logged)).doesNotContain(TOKEN, "nixlSerDes");
		}
	}

	@Test
	void ownerSecretsAndTheTokenAreNotShownBySuccessfulOrRefusedRequests() throws Exception {
		MetadataHttpServer server = closing(MetadataHttpServer.builder().token(TOKEN).start());
		HttpResponse<String> created = send(server, "PUT", EMPTY_AGENT, MetadataSamples.read("no-registrations.bin"));
		String secret = created.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER).orElseThrow();
		HttpResponse<String> refused = send(server, "PUT", EMPTY_AGENT, MetadataSamples.read("no-registrations.bin"));
		assertThat(refused.body().getBytes(StandardCharsets.UTF_8)).asString().doesNotContain(secret, TOKEN);
		assertThat(server.toString()).doesNotContain(secret, TOKEN);
	}

	@Test
	void aClaimDoesNotCarryOverToAnEntryTheServingApplicationPublishedOverIt() throws Exception {
		Duration ttl = Duration.ofMillis(1000);
		InMemoryMetadataExchange store = closing(new InMemoryMetadataExchange());
		MetadataHttpServer server = closing(
				MetadataHttpServer.builder().token(TOKEN).store(store).entryTtl(ttl).start());
		HttpResponse<String> claimed = send(server, "PUT", MetadataSamples.ONE_DRAM, MetadataSamples.oneDram());
		assertThat(claimed.statusCode()).isEqualTo(201);
		String secret = claimed.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER).orElseThrow();
		// the serving application publishes its own agent of that name over the entry
		byte[] own = MetadataSamples.read("ucx-v2.bin");
		store.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(own));

		assertThat(send(server, "PUT", MetadataSamples.ONE_DRAM, MetadataSamples.oneDram(), secret).statusCode())
			.as("replace")
			.isEqualTo(403);
		assertThat(send(server, "DELETE", MetadataSamples.ONE_DRAM, new byte[0], secret).statusCode()).as("delete")
			.isEqualTo(403);
		assertThat(store.fetch(MetadataSamples.ONE_DRAM, Duration.ZERO).toByteArray()).isEqualTo(own);
		// nor does the old claim's expiry withdraw it
		Thread.sleep(ttl.toMillis() + 200);
		assertThat(sendQuietly(server, "GET", MetadataSamples.ONE_DRAM)).isEqualTo(200);
		assertThat(store.fetch(MetadataSamples.ONE_DRAM, Duration.ZERO).toByteArray()).isEqualTo(own);
	}

	@Test
	void anOwnerWhoseDeletionFailedInTheStoreCanDeleteAgainAndAnExpiryThatFailedIsRetried() throws Exception {
		Duration ttl = Duration.ofMillis(1000);
		InMemoryMetadataExchange memory = closing(new InMemoryMetadataExchange());
		FailingInvalidations store = new FailingInvalidations(memory);
		MetadataHttpServer server = closing(
				MetadataHttpServer.builder().token(TOKEN).store(store).entryTtl(ttl).start());
		byte[] body = MetadataSamples.read("no-registrations.bin");
		String secret = send(server, "PUT", EMPTY_AGENT, body).headers()
			.firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER)
			.orElseThrow();

		store.failNext = true;
		assertThat(send(server, "DELETE", EMPTY_AGENT, new byte[0], secret).statusCode()).as("the store failed")
			.isEqualTo(503);
		assertThat(memory.isPublished(EMPTY_AGENT)).isTrue();
		assertThat(send(server, "DELETE", EMPTY_AGENT, new byte[0], secret).statusCode()).as("the owner tries again")
			.isEqualTo(204);
		assertThat(memory.isPublished(EMPTY_AGENT)).isFalse();

		// an expiry the store fails (the server's timer tries it) is tried again at the
		// next tick, and the name is free again after it
		assertThat(send(server, "PUT", EMPTY_AGENT, body).statusCode()).isEqualTo(201);
		store.failNext = true;
		Eventually.until(ttl.multipliedBy(5), "the expiry tried, and failed in the store", () -> !store.failNext);
		Eventually.until(ttl.multipliedBy(5), "the expiry tried again", () -> !memory.isPublished(EMPTY_AGENT));
		assertThat(sendQuietly(server, "GET", EMPTY_AGENT)).isEqualTo(404);
		assertThat(send(server, "PUT", EMPTY_AGENT, body).statusCode()).as("the name is free").isEqualTo(201);
	}

	@Test
	void aWithdrawalThatFailedIsNotRenewedSoTheEntryExpires() throws Exception {
		Duration ttl = Duration.ofMillis(900);
		InMemoryMetadataExchange memory = closing(new InMemoryMetadataExchange());
		FailingInvalidations store = new FailingInvalidations(memory);
		MetadataHttpServer server = closing(
				MetadataHttpServer.builder().token(TOKEN).store(store).entryTtl(ttl).start());
		HttpMetadataExchange owner = client(server);
		owner.publish(EMPTY_AGENT, AgentMetadata.of(MetadataSamples.read("no-registrations.bin")));
		store.failNext = true;
		assertThat(catchThrowableOfType(NixlException.class, () -> owner.invalidate(EMPTY_AGENT)).status())
			.isEqualTo(NixlStatus.UNAVAILABLE);
		assertThat(memory.isPublished(EMPTY_AGENT)).isTrue();
		Eventually.until(ttl.plusSeconds(3), "the entry whose withdrawal failed expires",
				() -> sendQuietly(server, "GET", EMPTY_AGENT) == 404);
		assertThat(memory.isPublished(EMPTY_AGENT)).isFalse();
	}

	/**
	 * A real in-memory store whose next withdrawal fails as an unreachable store's would.
	 */
	private static final class FailingInvalidations extends ForwardingMetadataExchange {

		volatile boolean failNext;

		FailingInvalidations(MetadataExchange delegate) {
			super(delegate);
		}

		@Override
		public void invalidate(String agentName) {
			if (this.failNext) {
				this.failNext = false;
				throw new NixlException(NixlStatus.UNAVAILABLE, "invalidate_local_md", null, agentName,
						"the store cannot be reached");
			}
			super.invalidate(agentName);
		}

	}

	private int sendQuietly(MetadataHttpServer server, String method, String agentName) {
		try {
			return send(server, method, agentName, new byte[0]).statusCode();
		}
		catch (Exception ex) {
			throw new AssertionError("the registry did not answer", ex);
		}
	}

}
