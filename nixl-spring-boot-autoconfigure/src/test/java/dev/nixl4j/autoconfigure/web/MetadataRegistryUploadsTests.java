package dev.nixl4j.autoconfigure.web;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.metadata.http.MetadataRegistryHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import jakarta.servlet.Filter;

import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static dev.nixl4j.autoconfigure.web.RegistryApplications.port;
import static dev.nixl4j.autoconfigure.web.RegistryApplications.start;
import static dev.nixl4j.testsupport.RawHttp.answerWithin;
import static dev.nixl4j.testsupport.RawHttp.readUntilClosed;
import static dev.nixl4j.testsupport.RawHttp.send;
import static dev.nixl4j.testsupport.RawHttp.trickle;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The registry a Spring application serves on its real Tomcat, under clients that hold
 * {@code PUT} bodies open: quotas count the room of uploads in progress, a body has a
 * total deadline and a minimum rate ({@code nixl.metadata.http.registry.body-timeout},
 * {@code min-body-rate}) that Tomcat's per-read timeout does not give, the shared token
 * has a quota, and a client reclaims its own names. The figures are printed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MetadataRegistryUploadsTests {

	private static final String SHARED = "shared-" + UUID.randomUUID();

	private static final String DECODE = "decode-" + UUID.randomUUID();

	private static final String ATTACKER = "attacker-" + UUID.randomUUID();

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

	private ConfigurableApplicationContext registry(String... more) {
		return registry(List.of(), more);
	}

	private ConfigurableApplicationContext registry(List<Class<?>> sources, String... more) {
		List<String> properties = new ArrayList<>(List.of("nixl.metadata.http.token=" + SHARED,
				"spring.application.name=registry", "nixl.metadata.http.registry.clients.decode.token=" + DECODE,
				"nixl.metadata.http.registry.clients.decode.agent-name-prefixes=decode-",
				"nixl.metadata.http.registry.clients.attacker.token=" + ATTACKER,
				"nixl.metadata.http.registry.clients.attacker.agent-name-prefixes=attacker-",
				"nixl.metadata.http.registry.clients.attacker.max-total-size=1MB",
				"nixl.metadata.http.registry.clients.attacker.max-entries=4"));
		properties.addAll(List.of(more));
		return closing(start(properties, sources.toArray(Class<?>[]::new)));
	}

	@Test
	void tricklingUploadsReserveNoMoreThanTheirClientsQuotaAndHonestClientsKeepPublishing() throws Exception {
		// the rate off, so that the admitted uploads hold their room for the whole test
		ConfigurableApplicationContext registry = registry("nixl.metadata.http.registry.min-body-rate=0");
		int admitted = 0;
		List<String> refusals = new ArrayList<>();
		List<Socket> sockets = new ArrayList<>();
		for (int i = 0; i < ATTACKS; i++) {
			Socket socket = closing(connect(registry));
			send(socket, head("/nixl/agents/attacker-trickle-" + i + "/metadata", ATTACKER, 512 << 10));
			trickle(socket, Duration.ofSeconds(2), this.stop);
			sockets.add(socket);
		}
		Thread.sleep(1500);
		for (Socket socket : sockets) {
			String answer = answerWithin(socket, Duration.ofMillis(50));
			if (answer == null) {
				admitted++;
			}
			else {
				refusals.add(answer.lines().findFirst().orElse(""));
			}
		}
		System.out.printf(
				"servlet: %d trickled PUTs at once with a client token (quota 1 MB), each declaring 512 KiB: %d "
						+ "admitted, %d refused before their bodies were read (%s)%n",
				ATTACKS, admitted, refusals.size(), refusals.stream().distinct().toList());
		assertThat((long) admitted * (512 << 10)).as("bytes reserved, of the attacker's quota")
			.isLessThanOrEqualTo(1 << 20);
		assertThat(refusals).hasSizeGreaterThanOrEqualTo(ATTACKS - 2).allMatch(line -> line.contains(" 429"));
		int verified = 0;
		URI base = base(registry);
		try (HttpMetadataExchange reader = HttpMetadataExchange.builder(base).token(DECODE).build()) {
			for (int i = 0; i < 22; i++) {
				try (NixlAgent worker = standalone("decode-" + UUID.randomUUID());
						HttpMetadataExchange decode = HttpMetadataExchange.builder(base).token(DECODE).build()) {
					decode.publish(worker);
					if (reader.fetch(worker.name(), Duration.ofSeconds(2)).equals(worker.localMetadata())) {
						verified++;
					}
					decode.invalidate(worker.name());
				}
			}
		}
		System.out.printf("servlet: honest decode worker during the attack: %d of 22 publications fetched back%n",
				verified);
		assertThat(verified).isEqualTo(22);
	}

	@Test
	void aBodyStillArrivingAtItsDeadlineGets408AndItsRoomIsGivenBack() throws Exception {
		ConfigurableApplicationContext registry = registry("nixl.metadata.http.registry.body-timeout=2s",
				"nixl.metadata.http.registry.min-body-rate=0", "server.tomcat.connection-timeout=20s");
		Socket trickling = closing(connect(registry));
		send(trickling, head("/nixl/agents/attacker-slow/metadata", ATTACKER, (1 << 20) - 10));
		long start = System.nanoTime();
		// a byte every 500 ms: Tomcat's 20 s read timeout would never fire
		trickle(trickling, Duration.ofMillis(500), this.stop);
		HttpMetadataExchange attacker = closing(HttpMetadataExchange.builder(base(registry)).token(ATTACKER).build());
		NixlAgent agent = closing(standalone("attacker-0"));
		NixlException refused = org.assertj.core.api.Assertions.catchThrowableOfType(NixlException.class,
				() -> attacker.publish(agent));
		assertThat(refused.getMessage()).as("while the trickled body holds the quota").contains("429");
		String answer = readUntilClosed(trickling, Duration.ofSeconds(15));
		long answeredAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		System.out.printf(
				"servlet: a body trickled at 2 bytes/s was answered '%s' after %d ms (body-timeout 2s, "
						+ "Tomcat's connection-timeout 20s)%n",
				answer.lines().findFirst().orElse("nothing"), answeredAfter);
		assertThat(answer).startsWith("HTTP/1.1 408 ").contains("did not arrive within PT2S");
		assertThat(answeredAfter).isBetween(1_900L, 6_000L);
		attacker.publish(agent);
		assertThat(attacker.fetch(agent.name(), Duration.ZERO)).isEqualTo(agent.localMetadata());
	}

	@Test
	void behindAFilterWithoutAsyncSupportTheBodyIsReadBlockingAndStillCutAtItsDeadline() throws Exception {
		ConfigurableApplicationContext registry = registry(List.of(BlockingFilter.class),
				"nixl.metadata.http.registry.body-timeout=2s", "nixl.metadata.http.registry.min-body-rate=0",
				"server.tomcat.connection-timeout=20s");
		Socket trickling = closing(connect(registry));
		send(trickling, head("/nixl/agents/attacker-slow/metadata", ATTACKER, 100_000));
		long start = System.nanoTime();
		trickle(trickling, Duration.ofMillis(500), this.stop);
		// Tomcat then reads the rest of the body itself (server.tomcat.max-swallow-size);
		// the registry's room was given back with the answer
		String answer = answerWithin(trickling, Duration.ofSeconds(15));
		long answeredAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		System.out.printf(
				"servlet, blocking reads: a body trickled at 2 bytes/s was answered '%s' after %d ms "
						+ "(body-timeout 2s)%n",
				(answer != null) ? answer.lines().findFirst().orElse("") : "nothing", answeredAfter);
		assertThat(answer).startsWith("HTTP/1.1 408 ");
		HttpMetadataExchange attacker = closing(HttpMetadataExchange.builder(base(registry)).token(ATTACKER).build());
		NixlAgent agent = closing(standalone("attacker-0"));
		attacker.publish(agent);
		assertThat(answeredAfter).isBetween(1_900L, 6_000L);
	}

	/** A filter on the registry's path that does not support asynchronous requests. */
	@Configuration(proxyBeanMethods = false)
	static class BlockingFilter {

		@Bean
		FilterRegistrationBean<Filter> blockingFilter() {
			FilterRegistrationBean<Filter> registration = new FilterRegistrationBean<>(
					(request, response, chain) -> chain.doFilter(request, response));
			registration.addUrlPatterns("/nixl/*");
			registration.setAsyncSupported(false);
			return registration;
		}

	}

	@Test
	void aBodyBehindTheMinimumRateGets408AfterItsFirstSecond() throws Exception {
		ConfigurableApplicationContext registry = registry("server.tomcat.connection-timeout=20s");
		Socket trickling = closing(connect(registry));
		send(trickling, head("/nixl/agents/attacker-slow/metadata", ATTACKER, 100_000));
		long start = System.nanoTime();
		trickle(trickling, Duration.ofMillis(100), this.stop);
		String answer = readUntilClosed(trickling, Duration.ofSeconds(15));
		long answeredAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
		System.out.printf("servlet: a body trickled at 10 bytes/s was answered '%s' after %d ms (min-body-rate 16KB, "
				+ "body-timeout 30s)%n", answer.lines().findFirst().orElse("nothing"), answeredAfter);
		assertThat(answer).startsWith("HTTP/1.1 408 ");
		assertThat(answeredAfter).isBetween(900L, 5_000L);
	}

	@Test
	void aDeclaredBodyPastTheWholeQuotaIs413BeforeItIsRead() throws Exception {
		ConfigurableApplicationContext registry = registry();
		try (Socket socket = connect(registry)) {
			send(socket, head("/nixl/agents/attacker-big/metadata", ATTACKER, (1 << 20) + 1));
			String answer = answerWithin(socket, Duration.ofSeconds(5));
			assertThat(answer).as("answered before any body byte").isNotNull();
			assertThat(answer).startsWith("HTTP/1.1 413 ")
				.contains("over the quota of client 'attacker', 1048576 bytes")
				.doesNotContain(ATTACKER);
		}
	}

	@Test
	void theSharedTokenHasItsQuotaAndAClientReclaimsItsNames() throws Exception {
		ConfigurableApplicationContext registry = registry("nixl.metadata.http.registry.shared-token-max-entries=2");
		URI base = base(registry);
		HttpClient http = closing(HttpClient.newHttpClient());
		int published = 0;
		for (int i = 0; i < 4; i++) {
			try (NixlAgent squat = standalone("squat-" + i)) {
				HttpResponse<byte[]> answer = RegistryApplications.send(http, "PUT", metadata(base, squat.name()),
						"Bearer " + SHARED, squat.localMetadata().toByteArray());
				if (answer.statusCode() == 201) {
					published++;
				}
				else {
					assertThat(answer.statusCode()).isEqualTo(429);
					assertThat(new String(answer.body(), StandardCharsets.UTF_8))
						.contains("the shared token holds its maximum of 2 entries");
				}
			}
		}
		assertThat(published).as("entries the shared token's holders got, of its quota of 2").isEqualTo(2);

		try (NixlAgent worker = standalone("decode-0")) {
			byte[] value = worker.localMetadata().toByteArray();
			HttpResponse<byte[]> first = RegistryApplications.send(http, "PUT", metadata(base, "decode-0"),
					"Bearer " + DECODE, value);
			assertThat(first.statusCode()).isEqualTo(201);
			// the process restarts: no owner secret, the same client token
			long start = System.nanoTime();
			HttpResponse<byte[]> reclaimed = RegistryApplications.send(http, "PUT", metadata(base, "decode-0"),
					"Bearer " + DECODE, value);
			System.out.printf("servlet: a restarted worker reclaimed its name in %d ms (entry TTL 30 s)%n",
					TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
			assertThat(reclaimed.statusCode()).isEqualTo(201);
			assertThat(reclaimed.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER)).isPresent()
				.isNotEqualTo(first.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER));
			assertThat(RegistryApplications.send(http, "PUT", metadata(base, "decode-0"), "Bearer " + ATTACKER, value)
				.statusCode()).isEqualTo(403);
			assertThat(RegistryApplications.send(http, "PUT", metadata(base, "decode-0"), "Bearer " + SHARED, value)
				.statusCode()).isEqualTo(403);
		}
	}

	private static NixlAgent standalone(String name) {
		return NixlAgent.create(AgentConfig.builder(name).engine(Engine.EMBEDDED).build());
	}

	private static URI base(ConfigurableApplicationContext registry) {
		return URI.create("http://127.0.0.1:" + port(registry) + "/nixl");
	}

	private static URI metadata(URI base, String agentName) {
		return URI.create(base + "/agents/" + agentName + "/metadata");
	}

	private static Socket connect(ConfigurableApplicationContext registry) throws IOException {
		Socket socket = new Socket("127.0.0.1", port(registry));
		socket.setSoTimeout(15_000);
		return socket;
	}

	private static String head(String path, String token, long contentLength) {
		return "PUT " + path + " HTTP/1.1\r\nHost: registry\r\nAuthorization: Bearer " + token
				+ "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + contentLength + "\r\n\r\n";
	}

}
