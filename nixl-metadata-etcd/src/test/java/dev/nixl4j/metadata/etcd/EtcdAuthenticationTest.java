package dev.nixl4j.metadata.etcd;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.auth.Permission;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import dev.nixl4j.testsupport.EtcdServer;
import dev.nixl4j.testsupport.EtcdServerExtension;
import dev.nixl4j.testsupport.MetadataSamples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link EtcdMetadataExchange} against a real etcd with authentication enabled: a root
 * user, a user whose role may read and write NIXL's namespace, and one whose role may
 * only read it.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class EtcdAuthenticationTest {

	private static final String WRITER = "nixl-writer";

	private static final String READER = "nixl-reader";

	private static final String PASSWORD = "pw-" + UUID.randomUUID();

	private static final Duration WAIT = Duration.ofSeconds(10);

	@RegisterExtension
	static final EtcdServerExtension etcd = new EtcdServerExtension();

	private final List<EtcdMetadataExchange> exchanges = new ArrayList<>();

	@BeforeAll
	static void startEtcdWithAuthentication() throws Exception {
		try (Client client = Client.builder().endpoints(etcd.endpoint()).build()) {
			EtcdServer.addUser(client.getAuthClient(), READER, PASSWORD, "nixl-ro",
					EtcdMetadataExchange.DEFAULT_NAMESPACE, Permission.Type.READ);
		}
		etcd.server().enableAuthentication(WRITER, PASSWORD, EtcdMetadataExchange.DEFAULT_NAMESPACE);
	}

	private EtcdMetadataExchange exchange(String user, String password) {
		EtcdMetadataExchange.Builder builder = EtcdMetadataExchange.builder()
			.endpoints(etcd.endpoint())
			.leaseTtl(Duration.ofSeconds(2))
			.operationTimeout(Duration.ofSeconds(3));
		if (user != null) {
			builder.credentials(user, password);
		}
		EtcdMetadataExchange exchange = builder.build();
		this.exchanges.add(exchange);
		return exchange;
	}

	@AfterEach
	void closeExchanges() {
		this.exchanges.forEach(EtcdMetadataExchange::close);
	}

	@Test
	void withoutCredentialsEveryCallIsRefusedAtOnceWithATypedError() {
		EtcdMetadataExchange anonymous = exchange(null, null);
		long start = System.nanoTime();
		NixlException publish = catchThrowableOfType(NixlException.class,
				() -> anonymous.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram())));
		assertThat(publish.status()).as(publish.getMessage()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(publish.getMessage()).contains("refused", "user name is empty",
				"configure a user name and password");
		NixlException fetch = catchThrowableOfType(NixlException.class,
				() -> anonymous.fetch(MetadataSamples.ONE_DRAM, WAIT));
		assertThat(fetch.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("refused, not retried until the deadline")
			.isLessThan(WAIT);
	}

	@Test
	void aWrongPasswordIsRefusedWithoutShowingIt() {
		String wrong = "wrong-" + UUID.randomUUID();
		List<String> logged = new ArrayList<>();
		Logger logger = Logger.getLogger(EtcdMetadataExchange.class.getName());
		Handler capture = new Handler() {
			@Override
			public void publish(LogRecord record) {
				synchronized (logged) {
					logged.add(String.valueOf(record.getMessage()) + " " + String.valueOf(record.getThrown()));
				}
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}
		};
		Level level = logger.getLevel();
		logger.setLevel(Level.ALL);
		logger.addHandler(capture);
		try {
			EtcdMetadataExchange exchange = exchange(WRITER, wrong);
			NixlException failure = catchThrowableOfType(NixlException.class,
					() -> exchange.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram())));
			assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
			assertThat(failure.getMessage()).contains("refused", "check the user name, password").doesNotContain(wrong);
			assertThat(exchange.toString()).doesNotContain(wrong, PASSWORD);
		}
		finally {
			logger.removeHandler(capture);
			logger.setLevel(level);
		}
		synchronized (logged) {
			assertThat(String.join("\n", logged)).doesNotContain(wrong, PASSWORD);
		}
	}

	@Test
	void aUserWhoseRoleMayWritePublishesFetchesAndWithdraws() {
		EtcdMetadataExchange writer = exchange(WRITER, PASSWORD);
		EtcdMetadataExchange reader = exchange(READER, PASSWORD);
		writer.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		assertThat(reader.fetch(MetadataSamples.ONE_DRAM, WAIT).toByteArray()).isEqualTo(MetadataSamples.oneDram());

		NixlException readOnly = catchThrowableOfType(NixlException.class, () -> reader
			.publish(MetadataSamples.UTF8_NAME, AgentMetadata.of(MetadataSamples.read("utf8-name.bin"))));
		assertThat(readOnly.status()).as("a role that may only read").isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(readOnly.getMessage()).contains("roles");

		writer.invalidate(MetadataSamples.ONE_DRAM);
		NixlException gone = catchThrowableOfType(NixlException.class,
				() -> reader.fetch(MetadataSamples.ONE_DRAM, Duration.ofMillis(300)));
		assertThat(gone.status()).isEqualTo(NixlStatus.TIMEOUT);
	}

}
