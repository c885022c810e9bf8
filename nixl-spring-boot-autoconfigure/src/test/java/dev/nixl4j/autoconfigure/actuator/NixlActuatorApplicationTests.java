package dev.nixl4j.autoconfigure.actuator;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.connect.Connector;
import dev.nixl4j.connect.Descriptor;
import dev.nixl4j.connect.RdmaMetadata;
import dev.nixl4j.connect.ReadOperation;
import dev.nixl4j.connect.ReadableOperation;
import dev.nixl4j.connect.WritableOperation;
import dev.nixl4j.connect.WriteOperation;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.task.AsyncTaskExecutor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A whole application on the embedded engine, with Actuator over HTTP: its
 * {@link Connector} bean reads from and writes to a peer agent, and then
 * {@code /actuator/health}, {@code /actuator/nixl} and {@code /actuator/metrics} show
 * exactly what moved, and nothing secret. The transfers are issued from the application's
 * task executor, so the subclass that turns on virtual threads issues them from a virtual
 * thread.
 */
@SpringBootTest(classes = NixlActuatorApplicationTests.Application.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "nixl.agent.engine=embedded", "nixl.connect.peer-linger=10m",
				"management.endpoints.web.exposure.include=health,nixl,metrics",
				"management.endpoint.health.show-details=always",
				// no Spring Security here: every caller is anonymous
				"nixl.endpoint.show-names=always" })
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class NixlActuatorApplicationTests {

	private static final int READ_SIZE = 1 << 20;

	private static final int WRITE_SIZE = 256 * 1024;

	private static final int STAGING_SIZE = 3 << 20;

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final AtomicInteger ids = new AtomicInteger();

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();

	private final JsonMapper json = JsonMapper.builder().build();

	/** What must never appear in an answer: memory addresses and metadata. */
	private final List<String> secrets = new ArrayList<>();

	@LocalServerPort
	private int port;

	@Autowired
	private Connector connector;

	@Autowired
	private NixlAgent agent;

	@Autowired
	@Qualifier("applicationTaskExecutor")
	private AsyncTaskExecutor executor;

	private Arena arena;

	private Connector peer;

	/**
	 * Whether the application runs with {@code spring.threads.virtual.enabled=true}.
	 * @return {@code true} for virtual threads
	 */
	abstract boolean virtualThreads();

	@BeforeEach
	void peer() {
		this.arena = Arena.ofShared();
		this.peer = Connector
			.create(AgentConfig.builder("actuator-peer-" + ProcessHandle.current().pid() + "-" + ids.incrementAndGet())
				.engine(Engine.EMBEDDED)
				.build());
	}

	@AfterEach
	void close() {
		this.peer.close();
		this.arena.close();
	}

	@Test
	void transfersThroughTheConnectorShowInHealthTheNixlEndpointAndMetrics() throws Exception {
		MemorySegment exposed = Bytes.pattern(this.arena, READ_SIZE, 11);
		MemorySegment readInto = Bytes.pattern(this.arena, READ_SIZE, 0);
		MemorySegment written = Bytes.pattern(this.arena, WRITE_SIZE, 12);
		MemorySegment writtenInto = Bytes.pattern(this.arena, WRITE_SIZE, 0);
		MemorySegment staging = this.arena.allocate(STAGING_SIZE, 64);
		for (MemorySegment segment : List.of(exposed, readInto, written, writtenInto, staging)) {
			this.secrets.add(Long.toString(segment.address()));
			this.secrets.add(Long.toHexString(segment.address()));
		}
		this.secrets.add(Base64.getEncoder().encodeToString(this.agent.localMetadata().toByteArray()).substring(0, 40));
		this.secrets
			.add(Base64.getEncoder().encodeToString(this.peer.agent().localMetadata().toByteArray()).substring(0, 40));

		Future<Boolean> done = this.executor.submit(() -> {
			try (ReadableOperation readable = this.peer.createReadable(Descriptor.of(exposed));
					ReadOperation read = this.connector.beginRead(overTheWire(readable.metadata()),
							Descriptor.of(readInto))) {
				read.await(WAIT);
				readable.await(WAIT);
			}
			try (WritableOperation writable = this.peer.createWritable(Descriptor.of(writtenInto));
					WriteOperation write = this.connector.beginWrite(overTheWire(writable.metadata()),
							Descriptor.of(written))) {
				write.await(WAIT);
				writable.await(WAIT);
			}
			return Thread.currentThread().isVirtual();
		});
		assertThat(done.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("issued from a virtual thread")
			.isEqualTo(virtualThreads());
		assertThat(Bytes.hasPattern(readInto, 11)).as("READ moved every byte").isTrue();
		assertThat(Bytes.hasPattern(writtenInto, 12)).as("WRITE moved every byte").isTrue();

		try (Registration _ = this.agent.register(staging)) {
			checkHealth();
			checkNixlEndpoint();
			checkMetrics();
		}
	}

	private RdmaMetadata overTheWire(RdmaMetadata metadata) {
		String wire = metadata.toJson();
		String encoded = this.json.readTree(wire).get("nixl_metadata").asString();
		this.secrets.add(encoded.substring(encoded.length() - 40));
		return RdmaMetadata.fromJson(wire);
	}

	private void checkHealth() throws Exception {
		JsonNode health = get("/actuator/health");
		assertThat(health.get("status").asString()).isEqualTo("UP");
		JsonNode nixl = health.get("components").get("nixl");
		assertThat(nixl.get("status").asString()).isEqualTo("UP");
		JsonNode details = nixl.get("details");
		assertThat(details.get("agent").asString()).isEqualTo(this.agent.name());
		assertThat(details.get("engine").asString()).isEqualTo("EMBEDDED");
		assertThat(details.get("peers").get("count").asInt()).isOne();
		assertThat(details.get("peers").get("names").get(0).asString()).isEqualTo(this.peer.name());
		assertThat(details.get("inFlightTransfers").asInt()).isZero();
		assertThat(details.get("stalledTransfers").asInt()).isZero();
		assertThat(details.get("readiness").get("status").asString()).isEqualTo("not checked");
		assertThat(details.propertyNames()).containsExactlyInAnyOrder("agent", "engine", "engineDescription",
				"backends", "peers", "inFlightTransfers", "stalledTransfers", "readiness");
		assertNoSecrets(nixl.toString());
	}

	private void checkNixlEndpoint() throws Exception {
		JsonNode nixl = get("/actuator/nixl");
		assertThat(nixl.get("agent").asString()).isEqualTo(this.agent.name());
		assertThat(nixl.get("open").asBoolean()).isTrue();
		assertThat(nixl.get("engine").asString()).isEqualTo("EMBEDDED");
		assertThat(nixl.get("engineDescription").asString()).isEqualTo(this.agent.engineDescription());
		assertThat(nixl.get("availablePlugins").size()).isEqualTo(this.agent.availablePlugins().size());
		assertThat(nixl.get("backends").get(0).get("memoryTypes").get(0).asString()).isEqualTo("DRAM");
		assertThat(nixl.get("registrations").get("count").asInt()).isOne();
		assertThat(nixl.get("registrations").get("bytes").asLong()).isEqualTo(STAGING_SIZE);
		assertThat(nixl.get("registrations").get("byMemoryType").get("DRAM").get("bytes").asLong())
			.isEqualTo(STAGING_SIZE);
		assertThat(nixl.get("peers").size()).isOne();
		assertThat(nixl.get("peers").get(0).asString()).isEqualTo(this.peer.name());
		assertThat(nixl.get("inFlightTransfers").size()).isZero();
		JsonNode statistics = nixl.get("statistics");
		assertThat(statistics.get("transfers").get("READ").get("COMPLETED").asLong()).isOne();
		assertThat(statistics.get("transfers").get("WRITE").get("COMPLETED").asLong()).isOne();
		assertThat(statistics.get("transfers").get("READ").get("FAILED").asLong()).isZero();
		assertThat(statistics.get("bytes").get("READ").get("COMPLETED").asLong()).isEqualTo(READ_SIZE);
		assertThat(statistics.get("bytes").get("WRITE").get("COMPLETED").asLong()).isEqualTo(WRITE_SIZE);
		assertThat(statistics.get("notificationsSent").asLong()).isEqualTo(2);
		assertNoSecrets(nixl.toString());
	}

	private void checkMetrics() throws Exception {
		assertThat(measurement("/actuator/metrics/nixl.transfers", "COUNT")).isEqualTo(2);
		assertThat(measurement("/actuator/metrics/nixl.transfers?tag=op:read&tag=outcome:completed", "COUNT")).isOne();
		assertThat(measurement("/actuator/metrics/nixl.transfers?tag=op:write&tag=outcome:completed", "COUNT")).isOne();
		assertThat(availableTags("/actuator/metrics/nixl.transfers")).containsExactlyInAnyOrder("agent", "op",
				"outcome");
		assertThat(measurement("/actuator/metrics/nixl.transfer.bytes?tag=op:read", "COUNT")).isEqualTo(READ_SIZE);
		assertThat(measurement("/actuator/metrics/nixl.transfer.bytes?tag=op:write", "COUNT")).isEqualTo(WRITE_SIZE);
		assertThat(get("/actuator/metrics/nixl.transfer.bytes").get("baseUnit").asString()).isEqualTo("bytes");
		assertThat(measurement("/actuator/metrics/nixl.transfer.duration", "COUNT")).isEqualTo(2);
		assertThat(measurement("/actuator/metrics/nixl.transfer.duration?tag=op:read", "COUNT")).isOne();
		assertThat(measurement("/actuator/metrics/nixl.transfer.duration", "TOTAL_TIME")).isPositive();
		assertThat(measurement("/actuator/metrics/nixl.transfer?tag=outcome:completed", "COUNT"))
			.as("the observation's timer")
			.isEqualTo(2);
		assertThat(measurement("/actuator/metrics/nixl.registered.bytes", "VALUE")).isEqualTo(STAGING_SIZE);
		assertThat(measurement("/actuator/metrics/nixl.registrations", "VALUE")).isOne();
		assertThat(measurement("/actuator/metrics/nixl.peers", "VALUE")).isOne();
		assertThat(measurement("/actuator/metrics/nixl.transfers.in.flight", "VALUE")).isZero();
		assertThat(measurement("/actuator/metrics/nixl.transfers.stalled", "COUNT")).isZero();
		assertThat(measurement("/actuator/metrics/nixl.notifications?tag=direction:sent", "COUNT")).isEqualTo(2);
	}

	private double measurement(String path, String statistic) throws Exception {
		for (JsonNode measurement : get(path).get("measurements").values()) {
			if (measurement.get("statistic").asString().equals(statistic)) {
				return measurement.get("value").asDouble();
			}
		}
		throw new AssertionError("no " + statistic + " in " + path);
	}

	private List<String> availableTags(String path) throws Exception {
		List<String> tags = new ArrayList<>();
		for (JsonNode tag : get(path).get("availableTags").values()) {
			tags.add(tag.get("tag").asString());
		}
		return tags;
	}

	private void assertNoSecrets(String answer) {
		for (String secret : this.secrets) {
			assertThat(answer).doesNotContain(secret);
		}
		String lower = answer.toLowerCase(Locale.ROOT);
		assertThat(lower).doesNotContain("metadata")
			.doesNotContain("rkey")
			.doesNotContain("token")
			.doesNotContain("ptr")
			.doesNotContain("addr");
	}

	private JsonNode get(String path) throws IOException, InterruptedException {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(WAIT)
			.build();
		HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as("GET " + path + ": " + response.body()).isEqualTo(200);
		return this.json.readTree(response.body());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class Application {

	}

}
