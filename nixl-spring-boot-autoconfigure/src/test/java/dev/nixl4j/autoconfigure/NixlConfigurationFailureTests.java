package dev.nixl4j.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Bad configuration stops a real application at start-up, and Spring Boot's failure
 * report names the property and says what is allowed.
 */
@ExtendWith(OutputCaptureExtension.class)
class NixlConfigurationFailureTests {

	private static final String SECRET = "tok3n with space";

	@Test
	void aNegativeDurationIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.transfer.stall-timeout", "must be a positive duration",
				"nixl.transfer.stall-timeout=-1s");
	}

	@Test
	void aNegativeSizeIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.max-size", "must be between 1B and 2GB", "nixl.metadata.max-size=-1MB");
	}

	@Test
	void aZeroCapacityIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.agent.mailbox-capacity", "must be at least 1", "nixl.agent.mailbox-capacity=0");
	}

	@Test
	void aPortOutOfRangeIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.embedded.port", "0..65535", "nixl.embedded.port=70000");
	}

	@Test
	void anEmbeddedListenerWithoutConnectionsIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.embedded.max-connections", "must be at least 1",
				"nixl.embedded.max-connections=0");
	}

	@Test
	void aZeroEmbeddedDeadlineIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.embedded.response-timeout", "must be a positive duration",
				"nixl.embedded.response-timeout=0s");
	}

	@Test
	void anUnknownEngineIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.agent.engine", "quantum", "nixl.agent.engine=quantum");
	}

	@Test
	void anInvalidKvLayoutIsNamed(CapturedOutput output) {
		// each dimension is allowed, the descriptors they make together are too many
		assertStartFails(output, "nixl.kv", "valid KV cache layout", "nixl.kv.layers=1024", "nixl.kv.blocks=4194304");
	}

	@Test
	void nixlsOwnEtcdExchangeWithoutAnAgentIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.exchange", "nixl.agent.enabled is false", "nixl.agent.enabled=false",
				"nixl.metadata.exchange=nixl-etcd");
	}

	@Test
	void anUnknownBackendIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.agent.backends[0].plugin", "NO_SUCH_PLUGIN",
				"nixl.agent.backends[0].plugin=NO_SUCH_PLUGIN");
	}

	@Test
	void aRegistryBudgetBelowOneEntryIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.http.registry.max-total-size", "at least nixl.metadata.max-size",
				"nixl.metadata.http.registry.max-total-size=1MB");
	}

	@Test
	void aTooShortRegistryEntryTtlIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.http.registry.entry-ttl", "at least 100ms",
				"nixl.metadata.http.registry.entry-ttl=10ms");
	}

	@Test
	void anEtcdLeaseShorterThanASecondIsNamedWithTheExchangesRule(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.etcd.lease-ttl", "must be at least 1 s", "nixl.metadata.exchange=etcd",
				"nixl.metadata.etcd.lease-ttl=500ms");
	}

	@Test
	void aNegativeProgressDelayIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.agent.native-progress-delay", "must be zero or a positive duration",
				"nixl.agent.native-progress-delay=-1ms");
	}

	@Test
	void anEtcdPasswordWithoutAUserIsNamedWithoutBeingShown(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.etcd.username", "is required with nixl.metadata.etcd.password",
				"nixl.metadata.etcd.password=" + SECRET);
		assertThat(output.getAll()).doesNotContain(SECRET);
	}

	@Test
	void aMissingTokenOfTheHttpExchangeIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.http.token", "is required", "nixl.metadata.exchange=http");
	}

	@Test
	void aMalformedTokenIsNamedWithoutBeingShown(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.http.token", "visible ASCII", "nixl.metadata.exchange=http",
				"nixl.metadata.http.token=" + SECRET);
		assertThat(output.getAll()).doesNotContain(SECRET);
	}

	@Test
	void aShortTokenIsNamedWithoutBeingShown(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.http.token", "at least 16 characters", "nixl.metadata.exchange=http",
				"nixl.metadata.http.token=tiny-secret");
		assertThat(output.getAll()).doesNotContain("tiny-secret");
	}

	@Test
	void anEtcdEndpointThatIsNotAUriIsNamed(CapturedOutput output) {
		assertStartFails(output, "nixl.metadata.etcd.endpoints[0]", "http or https URI", "nixl.metadata.exchange=etcd",
				"nixl.metadata.etcd.endpoints=etcd-somewhere");
	}

	@Test
	void aZeroKvBlockSizeIsNamedWithItsValue(CapturedOutput output) {
		assertStartFails(output, "nixl.kv.block-size", "blockSize must be positive, was 0", "nixl.kv.layers=4",
				"nixl.kv.block-size=0");
		assertThat(output.getAll()).contains("Value: \"0\"");
	}

	@Test
	void aNegativeKvHeadDimIsNamedWithItsValue(CapturedOutput output) {
		assertStartFails(output, "nixl.kv.head-dim", "headDim must be positive, was -128", "nixl.kv.layers=4",
				"nixl.kv.head-dim=-128");
		assertThat(output.getAll()).contains("Value: \"-128\"");
	}

	@Test
	void aKvCacheLargerThanTheMemoryFailsBeforeItIsAllocated(CapturedOutput output) {
		// 64 layers x K, V x 131,072 blocks x 32 KiB: 512 GiB
		assertStartFails(output, "nixl.kv.blocks", "549755813888 bytes", "nixl.kv.layers=64", "nixl.kv.blocks=131072");
		assertThat(output.getAll()).contains("this process can have").contains("blocks of this shape fit");
	}

	@Test
	void anEtcdExchangeAtAClosedPortIsNamedWithItsEndpoint(CapturedOutput output) throws Exception {
		String endpoint = "http://127.0.0.1:" + closedPort();
		assertStartFails(output, "nixl.metadata.etcd.endpoints", endpoint, "nixl.metadata.exchange=etcd",
				"nixl.metadata.etcd.endpoints=" + endpoint, "nixl.metadata.etcd.operation-timeout=2s");
	}

	static int closedPort() throws java.io.IOException {
		try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1,
				java.net.InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

	private static void assertStartFails(CapturedOutput output, String property, String reason, String... properties) {
		SpringApplicationBuilder application = new SpringApplicationBuilder(Application.class)
			.web(WebApplicationType.NONE)
			.properties("nixl.agent.engine=embedded")
			.properties(properties);
		assertThatException().isThrownBy(application::run);
		assertThat(output.getAll()).contains("APPLICATION FAILED TO START").contains(property).contains(reason);
	}

	@SpringBootConfiguration
	@ImportAutoConfiguration(NixlAutoConfiguration.class)
	static class Application {

	}

}
