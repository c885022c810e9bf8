package dev.nixl4j.metadata.etcd;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import dev.nixl4j.testsupport.EtcdServerExtension;
import dev.nixl4j.testsupport.MetadataSamples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link EtcdMetadataExchange} against a real etcd that serves TLS only and requires a
 * client certificate signed by its CA ({@code --client-cert-auth}).
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class EtcdClientCertificateTest {

	@RegisterExtension
	static final EtcdServerExtension etcd = EtcdServerExtension.withClientCertificates();

	private static EtcdMetadataExchange.Builder exchange() {
		return EtcdMetadataExchange.builder()
			.endpoints(etcd.endpoint())
			.leaseTtl(Duration.ofSeconds(2))
			// the first TLS connection of a JVM loads and initialises a lot; a loaded
			// machine may need seconds
			.operationTimeout(Duration.ofSeconds(15));
	}

	@Test
	void aClientWithItsCertificatePublishesFetchesAndWithdraws() {
		try (EtcdMetadataExchange writer = exchange()
			.tls(etcd.server().tls().clientKeyManagers(), etcd.server().tls().trustManagers())
			.build();
				EtcdMetadataExchange reader = exchange()
					.tls(etcd.server().tls().clientKeyManagers(), etcd.server().tls().trustManagers())
					.build()) {
			assertThat(etcd.endpoint()).startsWith("https://");
			writer.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
			assertThat(reader.fetch(MetadataSamples.ONE_DRAM, Duration.ofSeconds(10)).toByteArray())
				.isEqualTo(MetadataSamples.oneDram());
			writer.invalidate(MetadataSamples.ONE_DRAM);
			assertThat(catchThrowableOfType(NixlException.class,
					() -> reader.fetch(MetadataSamples.ONE_DRAM, Duration.ofMillis(300)))
				.status()).isEqualTo(NixlStatus.TIMEOUT);
		}
	}

	@Test
	void aClientWithoutACertificateIsRefusedWithinTheOperationTimeout() {
		try (EtcdMetadataExchange anonymous = exchange().tls(null, etcd.server().tls().trustManagers()).build()) {
			long start = System.nanoTime();
			NixlException failure = catchThrowableOfType(NixlException.class,
					() -> anonymous.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram())));
			assertThat(failure.status()).as(failure.getMessage()).isEqualTo(NixlStatus.UNAVAILABLE);
			assertThat(failure.getMessage()).contains(etcd.endpoint());
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(30));
		}
	}

}
