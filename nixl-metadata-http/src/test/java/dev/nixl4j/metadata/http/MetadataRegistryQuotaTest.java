package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static dev.nixl4j.testsupport.RawHttp.answerWithin;
import static dev.nixl4j.testsupport.RawHttp.readUntilClosed;
import static dev.nixl4j.testsupport.RawHttp.send;
import static dev.nixl4j.testsupport.RawHttp.trickle;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Quotas of the metadata registry against uploads in progress, over
 * {@link MetadataHttpServer} and real sockets: a token holder whose {@code PUT}s declare
 * large bodies and trickle them reserves no more than its own quota (its further
 * {@code PUT}s are refused before their bodies are read), the body deadline and minimum
 * rate give its room back, and honest clients keep publishing and fetching. The shared
 * token has a quota of its own. The figures are printed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetadataRegistryQuotaTest {

	private static final String SHARED = "shared-" + UUID.randomUUID();

	private static final String DECODE = "decode-" + UUID.randomUUID();

	private static final String ATTACKER = "attacker-" + UUID.randomUUID();

	private static final long ATTACKER_QUOTA = 1L << 20;

	private static final int ATTACKS = 29;

	private final List<AutoCloseable> resources = new ArrayList<>();

	private final AtomicBoolean stop = new AtomicBoolean();

	@AfterEach
	void closeAll() throws Exception {
		this.stop.set(true);
		for (AutoCloseable resource : this.resources.reversed()) {
			resource.close();
		}
	}

	private <T extends AutoCloseable> T closing(T resource) {
		this.resources.add(resource);
		return resource;
	}

	private NixlAgent agent(String name) {
		return closing(NixlAgent.create(AgentConfig.builder(name).engine(Engine.EMBEDDED).build()));
	}

	private MetadataHttpServer.Builder server() {
		return MetadataHttpServer.builder()
			.token(SHARED)
			.client("decode", DECODE, List.of("decode-"))
			.client("attacker", ATTACKER, List.of("attacker-"), 4, ATTACKER_QUOTA)
			.maxEntries(256)
			.maxTotalBytes(64L << 20)
			.threads(2);
	}

	@Test
	void tricklingUploadsReserveNoMoreThanTheirClientsQuotaAndHonestClientsKeepPublishing() throws Exception {
		MetadataHttpServer server = closing(server().start());
		Attack attack = attack(server, ATTACKER, "attacker-", 512 << 10);
		assertThat(attack.reservedBytes).as("bytes the attacker reserved, of its quota of " + ATTACKER_QUOTA)
			.isLessThanOrEqualTo(ATTACKER_QUOTA);
		assertThat(attack.refused).as("PUTs refused before their bodies were read").isGreaterThanOrEqualTo(ATTACKS - 2);
		assertThat(attack.refusals).allMatch(status -> status.startsWith("HTTP/1.1 429 "));
		int verified = honestRounds(server, 22);
		assertThat(verified).as("honest publications fetched back").isEqualTo(22);
	}

	@Test
	void tricklingUploadsOfNewNamesCountAgainstTheClientsEntries() throws Exception {
		MetadataHttpServer server = closing(server().start());
		Attack attack = attack(server, ATTACKER, "attacker-", 100);
		assertThat(attack.admitted).as("uploads in progress, of the attacker's 4 entries").isEqualTo(4);
		assertThat(attack.refusals).allMatch(status -> status.startsWith("HTTP/1.1 429 "));
		assertThat(honestRounds(server, 10)).isEqualTo(10);
	}

	@Test
	void theSharedTokenHasAQuotaBesideClientsSoItsHoldersCannotTakeTheirRoom() throws Exception {
		MetadataHttpServer server = closing(server().sharedTokenQuota(8, 2L << 20).start());
		Attack attack = attack(server, SHARED, "squat-", 1 << 20);
		assertThat(attack.reservedBytes).as("bytes the shared token reserved, of its quota of 2 MiB")
			.isLessThanOrEqualTo(2L << 20);
		// the shared token's holders fill its entries, not the registry's
		HttpMetadataExchange shared = closing(HttpMetadataExchange.builder(server.baseUri()).token(SHARED).build());
		int filled = 0;
		for (int i = 0; i < 20; i++) {
			try {
				shared.publish(agent("squat-fill-" + i));
				filled++;
			}
			catch (dev.nixl4j.NixlException ex) {
				assertThat(ex.getMessage()).contains("429", "the shared token holds its maximum");
			}
		}
		System.out.printf(
				"shared-token quota (8 entries, 2 MiB): shared-token holders published %d of 20 more "
						+ "entries while their trickled uploads reserved %d bytes of it%n",
				filled, attack.reservedBytes);
		assertThat(filled).isLessThanOrEqualTo(8);
		assertThat(honestRounds(server, 20)).as("a client-token worker's publications fetched back").isEqualTo(20);
	}

	@Test
	void aDeclaredBodyPastTheWholeQuotaIs413AndPastWhatIsLeftIs429BeforeItIsRead() throws Exception {
		MetadataHttpServer server = closing(server().start());
		String tooLarge = exchange(server, "PUT", "/nixl/agents/attacker-big/metadata", ATTACKER,
				"Content-Length: " + (ATTACKER_QUOTA + 1) + "\r\n", null);
		assertThat(tooLarge).startsWith("HTTP/1.1 413 ")
			.contains("over the quota of client 'attacker', " + ATTACKER_QUOTA + " bytes")
			.doesNotContain(ATTACKER);
		Socket holding = closing(connect(server));
		send(holding, head("PUT", "/nixl/agents/attacker-0/metadata", ATTACKER,
				"Content-Length: " + (ATTACKER_QUOTA - 1000) + "\r\n"));
		assertThat(answerWithin(holding, Duration.ofMillis(300))).as("admitted: its body is awaited").isNull();
		String overQuota = exchange(server, "PUT", "/nixl/agents/attacker-1/metadata", ATTACKER,
				"Content-Length: 2000\r\n", null);
		assertThat(overQuota).startsWith("HTTP/1.1 429 ")
			.contains("client 'attacker' holds its maximum of " + ATTACKER_QUOTA + " bytes",
					"reserved by uploads in progress");
	}

	@Test
	void aTricklingBodyIsCutAtTheMinimumRateAndItsRoomIsGivenBack() throws Exception {
		MetadataHttpServer server = closing(
				server().minBodyRate(16 << 10).requestBodyTimeout(Duration.ofSeconds(30)).start());
		Socket trickling = closing(connect(server));
		send(trickling, head("PUT", "/nixl/agents/attacker-slow/metadata", ATTACKER,
				"Content-Length: " + (ATTACKER_QUOTA - 10) + "\r\n"));
		long start = System.nanoTime();
		trickle(trickling, Duration.ofMillis(100), this.stop);
		NixlAgent agent = agent("attacker-honest");
		HttpMetadataExchange attacker = closing(HttpMetadataExchange.builder(server.baseUri()).token(ATTACKER).build());
		dev.nixl4j.NixlException refused = org.assertj.core.api.Assertions
			.catchThrowableOfType(dev.nixl4j.NixlException.class, () -> attacker.publish(agent));
		assertThat(refused.getMessage()).as("while the trickled body holds the quota").contains("429");
		assertThat(readUntilClosed(trickling, Duration.ofSeconds(15))).as("a body cut at its rate gets no answer")
			.isEmpty();
		long cutAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		System.out.printf("a body trickled at 10 bytes/s was cut after %d ms (minimum rate 16 KiB/s after 1 s, "
				+ "body timeout 30 s)%n", cutAfter);
		assertThat(cutAfter).isBetween(900L, 5_000L);
		attacker.publish(agent);
		assertThat(attacker.fetch(agent.name(), Duration.ZERO)).isEqualTo(agent.localMetadata());
	}

	/** What a trickling attack got: the room its admitted PUTs hold, and the refusals. */
	private record Attack(long reservedBytes, int admitted, int refused, List<String> refusals) {
	}

	/**
	 * Sends {@value #ATTACKS} PUTs at once that each declare {@code declared} bytes and
	 * trickle one byte every 2 s, as an attacker did; those answered at once were refused
	 * before their bodies were read, the others were admitted and hold their room.
	 */
	private Attack attack(MetadataHttpServer server, String token, String prefix, int declared) throws Exception {
		List<Socket> sockets = new ArrayList<>();
		for (int i = 0; i < ATTACKS; i++) {
			Socket socket = closing(connect(server));
			send(socket, head("PUT", "/nixl/agents/" + prefix + "trickle-" + i + "/metadata", token,
					"Content-Length: " + declared + "\r\n"));
			trickle(socket, Duration.ofSeconds(2), this.stop);
			sockets.add(socket);
		}
		Thread.sleep(300);
		int admitted = 0;
		List<String> refusals = new ArrayList<>();
		for (Socket socket : sockets) {
			String answer = answerWithin(socket, Duration.ofMillis(20));
			if (answer == null) {
				admitted++;
			}
			else {
				refusals.add(answer.lines().findFirst().orElse(""));
			}
		}
		long reserved = (long) admitted * declared;
		System.out.printf(
				"%d trickled PUTs at once with %s, each declaring %d bytes: %d admitted (%d bytes reserved), %d "
						+ "refused before their bodies were read (%s)%n",
				ATTACKS, token.equals(SHARED) ? "the shared token" : "a client token", declared, admitted, reserved,
				refusals.size(), refusals.stream().distinct().toList());
		return new Attack(reserved, admitted, refusals.size(), refusals);
	}

	/**
	 * Restarts a decode worker {@code rounds} times under fresh names: each publishes
	 * with the decode client's token, and another client fetches its metadata back.
	 * @return how many were fetched back as published
	 */
	private int honestRounds(MetadataHttpServer server, int rounds) {
		int verified = 0;
		try (HttpMetadataExchange reader = HttpMetadataExchange.builder(server.baseUri()).token(DECODE).build()) {
			for (int i = 0; i < rounds; i++) {
				NixlAgent worker = agent("decode-" + UUID.randomUUID());
				try (HttpMetadataExchange decode = HttpMetadataExchange.builder(server.baseUri())
					.token(DECODE)
					.build()) {
					decode.publish(worker);
					if (reader.fetch(worker.name(), Duration.ofSeconds(2)).equals(worker.localMetadata())) {
						verified++;
					}
					decode.invalidate(worker.name());
				}
				catch (dev.nixl4j.NixlException ex) {
					System.out.println("an honest round failed: " + ex.getMessage());
				}
			}
		}
		System.out.printf("honest decode worker during the attack: %d of %d publications fetched back%n", verified,
				rounds);
		return verified;
	}

	private Socket connect(MetadataHttpServer server) throws IOException {
		Socket socket = new Socket(server.address().getAddress(), server.port());
		socket.setSoTimeout(15_000);
		return socket;
	}

	private static String head(String method, String path, String token, String headers) {
		return method + " " + path + " HTTP/1.1\r\nHost: registry\r\nAuthorization: Bearer " + token + "\r\n" + headers
				+ "\r\n";
	}

	private String exchange(MetadataHttpServer server, String method, String path, String token, String headers,
			byte @Nullable [] body) throws IOException {
		try (Socket socket = connect(server)) {
			send(socket, head(method, path, token, headers + "Connection: close\r\n"));
			if (body != null) {
				socket.getOutputStream().write(body);
			}
			String answer = answerWithin(socket, Duration.ofSeconds(5));
			assertThat(answer).as("an answer before any body byte was sent").isNotNull();
			return answer;
		}
	}

}
