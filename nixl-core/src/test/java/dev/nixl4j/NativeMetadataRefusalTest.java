package dev.nixl4j;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.testsupport.PeerProcess;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Why native NIXL refuses a peer's metadata, told from this agent's own state: another
 * process under the name of a peer still loaded (a restart under the same name), and a
 * peer whose connection details the backend cannot take. The peers are real processes
 * ({@link PeerProcess}).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NativeMetadataRefusalTest {

	private static final AtomicInteger ids = new AtomicInteger();

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	private static String uniqueName(String role) {
		return role + "-" + ProcessHandle.current().pid() + "-" + ids.incrementAndGet();
	}

	private static NixlAgent agent() {
		return NixlAgent.create(AgentConfig.builder(uniqueName("loader")).engine(Engine.NATIVE).build());
	}

	@Test
	void aPeerRestartedUnderTheNameOfOneStillLoadedIsRefusedAsSuchUntilTheOldOneIsInvalidated() throws IOException {
		String name = uniqueName("restarting");
		try (NixlAgent agent = agent()) {
			AgentMetadata before;
			try (PeerProcess first = PeerProcess.start(name, 4096, 1, Map.of(), Engine.NATIVE)) {
				before = first.metadata();
				assertThat(agent.loadRemoteMetadata(before)).isEqualTo(name);
				first.kill();
			}
			try (PeerProcess second = PeerProcess.start(name, 4096, 2, Map.of(), Engine.NATIVE)) {
				NixlException refused = catchThrowableOfType(NixlException.class,
						() -> agent.loadRemoteMetadata(second.metadata()));

				System.out.println("refused while the old one is loaded: " + refused.getMessage());
				assertThat(refused.remoteAgent()).isEqualTo(name);
				assertThat(refused.getMessage()).doesNotContain("could not reach")
					.contains("is loaded already")
					.contains("invalidated first");
				agent.invalidateRemoteMetadata(name);
				assertThat(agent.loadRemoteMetadata(second.metadata())).isEqualTo(name);
			}
		}
	}

	@Test
	void aPeerWhoseConnectionDetailsTheBackendCannotTakeIsRefusedWithTheBackendsCause() throws IOException {
		String name = uniqueName("dead");
		try (NixlAgent agent = agent()) {
			AgentMetadata metadata;
			try (PeerProcess peer = PeerProcess.start(name, 4096, 1, Map.of(), Engine.NATIVE)) {
				metadata = peer.metadata();
				peer.kill();
			}
			long start = System.nanoTime();
			NixlException refused = catchThrowableOfType(NixlException.class, () -> agent.loadRemoteMetadata(metadata));
			System.out.println("refused after " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms: "
					+ ((refused != null) ? refused.getMessage() : "loaded"));
			assertThat(refused).isNotNull();
			assertThat(refused.remoteAgent()).isEqualTo(name);
			assertThat(refused.status()).isEqualTo(NixlStatus.ERROR_BACKEND);
			assertThat(refused.getMessage()).doesNotContain("invalidated first")
				.contains("connection details for UCX")
				.contains("gone or unreachable");
		}
	}

}
