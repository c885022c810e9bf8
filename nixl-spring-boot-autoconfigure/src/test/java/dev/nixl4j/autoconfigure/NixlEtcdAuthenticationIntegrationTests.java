package dev.nixl4j.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.testsupport.EtcdServer;
import dev.nixl4j.testsupport.EtcdServerExtension;
import dev.nixl4j.metadata.MetadataExchange;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code nixl.metadata.exchange=etcd} against a real etcd with authentication enabled:
 * the credentials come from {@code nixl.metadata.etcd.username/password} or from an
 * {@link EtcdConnectionDetails} bean; without them the application fails to start with
 * etcd's refusal, and the password shows nowhere.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NixlEtcdAuthenticationIntegrationTests {

	private static final String USER = "nixl-app";

	private static final String PASSWORD = "pw-" + UUID.randomUUID();

	private static final String NAMESPACE = "/nixl4j-auth/";

	@RegisterExtension
	static final EtcdServerExtension etcd = new EtcdServerExtension();

	@RegisterExtension
	static final EtcdServerExtension tlsEtcd = EtcdServerExtension.withClientCertificates();

	@BeforeAll
	static void enableAuthentication() {
		etcd.server().enableAuthentication(USER, PASSWORD, NAMESPACE);
	}

	private ApplicationContextRunner application(String name) {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.agent.name=" + name, "nixl.metadata.exchange=etcd",
					"nixl.metadata.etcd.endpoints=" + etcd.endpoint(), "nixl.metadata.etcd.namespace=" + NAMESPACE,
					"nixl.metadata.etcd.operation-timeout=3s");
	}

	@Test
	void theCredentialsOfThePropertiesPublishTheAgent() {
		application("auth-properties")
			.withPropertyValues("nixl.metadata.etcd.username=" + USER, "nixl.metadata.etcd.password=" + PASSWORD)
			.run(context -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(MetadataExchange.class)
					.fetch("auth-properties", Duration.ofSeconds(5))
					.toByteArray()).isEqualTo(context.getBean(NixlAgent.class).localMetadata().toByteArray());
				assertThat(context.getBean(EtcdConnectionDetails.class).toString()).doesNotContain(PASSWORD);
			});
	}

	@Test
	void theCredentialsOfAConnectionDetailsBeanPublishTheAgent() {
		EtcdConnectionDetails details = new EtcdConnectionDetails() {
			@Override
			public List<String> endpoints() {
				return List.of(etcd.endpoint());
			}

			@Override
			public @Nullable String username() {
				return USER;
			}

			@Override
			public @Nullable String password() {
				return PASSWORD;
			}
		};
		application("auth-details").withBean(EtcdConnectionDetails.class, () -> details).run(context -> {
			assertThat(context).hasNotFailed();
			assertThat(
					context.getBean(MetadataExchange.class).fetch("auth-details", Duration.ofSeconds(5)).toByteArray())
				.isEqualTo(context.getBean(NixlAgent.class).localMetadata().toByteArray());
		});
	}

	@Test
	void withoutCredentialsOrWithAWrongPasswordStartUpFailsWithEtcdsRefusal() {
		application("auth-none").run(context -> {
			assertThat(context).hasFailed();
			assertThat(refusal(context.getStartupFailure()).getMessage()).contains("refused",
					"configure a user name and password");
		});
		String wrong = "wrong-" + UUID.randomUUID();
		application("auth-wrong")
			.withPropertyValues("nixl.metadata.etcd.username=" + USER, "nixl.metadata.etcd.password=" + wrong)
			.run(context -> {
				assertThat(context).hasFailed();
				NixlException refusal = refusal(context.getStartupFailure());
				assertThat(refusal.getMessage()).contains("refused", "check the user name, password")
					.doesNotContain(wrong);
			});
	}

	@Test
	void aUserNameWithoutAPasswordIsRefusedNamingTheProperty() {
		application("auth-half").withPropertyValues("nixl.metadata.etcd.username=" + USER).run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("nixl.metadata.etcd.password");
		});
	}

	@Test
	void anSslBundleGivesTheClientCertificateOfATlsCluster() {
		EtcdServer tls = tlsEtcd.server();
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, SslAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.agent.name=auth-tls", "nixl.metadata.exchange=etcd",
					"nixl.metadata.etcd.endpoints=" + tls.endpoint(), "nixl.metadata.etcd.operation-timeout=15s",
					"nixl.metadata.etcd.ssl-bundle=etcd-client",
					"spring.ssl.bundle.pem.etcd-client.keystore.certificate=file:" + tls.tls().clientCertificate(),
					"spring.ssl.bundle.pem.etcd-client.keystore.private-key=file:" + tls.tls().clientKey(),
					"spring.ssl.bundle.pem.etcd-client.truststore.certificate=file:" + tls.tls().caCertificate())
			.run(context -> {
				assertThat(context).hasNotFailed();
				assertThat(
						context.getBean(MetadataExchange.class).fetch("auth-tls", Duration.ofSeconds(5)).toByteArray())
					.isEqualTo(context.getBean(NixlAgent.class).localMetadata().toByteArray());
			});
	}

	@Test
	void anSslBundleThatIsNotConfiguredFailsStartUpNamingTheProperty() {
		application("auth-no-bundle").withPropertyValues("nixl.metadata.etcd.ssl-bundle=missing").run(context -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("nixl.metadata.etcd.ssl-bundle");
		});
	}

	private static NixlException refusal(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof NixlException nixl) {
				assertThat(nixl.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
				return nixl;
			}
		}
		throw new AssertionError("no NixlException in the start-up failure", failure);
	}

}
