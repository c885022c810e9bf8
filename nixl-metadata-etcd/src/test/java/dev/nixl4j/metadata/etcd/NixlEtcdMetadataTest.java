package dev.nixl4j.metadata.etcd;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlEtcdMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.Eventually;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.options.GetOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link NixlAgent#etcdMetadata()}: native agents publish, fetch-and-load and withdraw
 * through NIXL's own etcd client against a real etcd, and the metadata carries real
 * transfers.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class NixlEtcdMetadataTest extends EtcdAgentTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	/** The deadline of loads that must fail, and how much later than it they may end. */
	private static final Duration SHORT = Duration.ofSeconds(1);

	private static final Duration LATE = Duration.ofSeconds(3);

	private static final AtomicInteger ids = new AtomicInteger();

	private static String name(String role, TestInfo info) {
		return role + "-" + info.getTestMethod().map(m -> m.getName()).orElse("t") + "-" + ids.incrementAndGet();
	}

	private NixlAgent nixlEtcdAgent(String role, TestInfo info) {
		return track(NixlAgent.create(
				NixlEtcdMetadata.configure(AgentConfig.builder(name(role, info)).engine(Engine.NATIVE), etcd.endpoint())
					.build()));
	}

	private static NixlEtcdMetadata etcdOf(NixlAgent agent) {
		return agent.etcdMetadata().orElseThrow();
	}

	private MemorySegment registered(NixlAgent agent, long seed) {
		Arena arena = track(Arena.ofShared());
		MemorySegment segment = Bytes.pattern(arena, 1 << 20, seed);
		agent.register(segment);
		return segment;
	}

	private static void transfer(NixlAgent initiator, XferOp op, MemorySegment local, MemorySegment remote,
			String target) {
		try (Transfer transfer = initiator.transfer(op, DescriptorList.of(local), DescriptorList.of(remote), target,
				null)) {
			transfer.await(WAIT);
			assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
		}
	}

	private static NixlException failedLoad(NixlEtcdMetadata etcd, String peer) {
		long start = System.nanoTime();
		NixlException failure = catchThrowableOfType(NixlException.class, () -> etcd.load(peer, SHORT));
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(SHORT)
			.isLessThan(SHORT.plus(LATE));
		return failure;
	}

	@Test
	void twoNativeAgentsFindEachOtherAndMoveData(TestInfo info) {
		NixlAgent target = nixlEtcdAgent("target", info);
		MemorySegment remote = registered(target, 2);
		NixlAgent initiator = nixlEtcdAgent("initiator", info);
		MemorySegment local = registered(initiator, 1);

		etcdOf(target).publish();
		etcdOf(initiator).publish();
		etcdOf(initiator).load(target.name(), WAIT);
		assertThat(initiator.hasRemoteMetadata(target.name())).isTrue();
		transfer(initiator, XferOp.WRITE, local, remote, target.name());
		assertThat(Bytes.hasPattern(remote, 1)).isTrue();

		// the other way round: the target loads the initiator it never heard of, and
		// reads from it
		Bytes.fill(local, 3);
		etcdOf(target).load(initiator.name(), WAIT);
		transfer(target, XferOp.READ, remote, local, initiator.name());
		assertThat(Bytes.hasPattern(remote, 3)).isTrue();
		// loading a peer that is loaded already returns at once, whatever the deadline
		etcdOf(initiator).load(target.name(), Duration.ZERO);
	}

	@Test
	void afterInvalidateLoadsFailAtTheirDeadline(TestInfo info) {
		NixlAgent target = nixlEtcdAgent("target", info);
		registered(target, 2);
		NixlAgent initiator = nixlEtcdAgent("initiator", info);
		etcdOf(target).publish();
		etcdOf(initiator).load(target.name(), WAIT);

		assertThat(keysOf(target.name())).as("the target's keys before invalidate").isPositive();

		etcdOf(target).invalidate();

		// NIXL deletes the keys on its own thread, after invalidate returned
		Eventually.until(WAIT, "the keys of " + target.name() + " are deleted", () -> keysOf(target.name()) == 0);
		NixlException newcomer = failedLoad(etcdOf(nixlEtcdAgent("newcomer", info)), target.name());
		assertThat(newcomer.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(newcomer.remoteAgent()).isEqualTo(target.name());
		// An agent that loaded the target forgets it when NIXL's watch of the key sees
		// the
		// deletion; NIXL sets that watch up on its own thread after the fetch, so a
		// deletion
		// that comes first may go unseen. Once forgotten, a new load fails at its
		// deadline.
		if (!initiator.hasRemoteMetadata(target.name())) {
			NixlException again = failedLoad(etcdOf(initiator), target.name());
			assertThat(again.status()).isEqualTo(NixlStatus.TIMEOUT);
			assertThat(again.remoteAgent()).isEqualTo(target.name());
		}
	}

	/** Counts the keys NIXL's etcd client keeps for an agent. */
	private static long keysOf(String agent) {
		try {
			return raw.getKVClient()
				.get(ByteSequence.from("/nixl/agents//" + agent + "/", StandardCharsets.UTF_8),
						GetOption.builder().isPrefix(true).withCountOnly(true).build())
				.get(10, TimeUnit.SECONDS)
				.getCount();
		}
		catch (Exception ex) {
			throw new IllegalStateException("etcd could not be read", ex);
		}
	}

	@Test
	void aLoadOfAnAgentThatNeverPublishedFailsAtItsDeadline(TestInfo info) {
		NixlAgent initiator = nixlEtcdAgent("initiator", info);

		NixlException failure = failedLoad(etcdOf(initiator), "never-published");

		assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(failure.operation()).isEqualTo("fetch_remote_md");
		assertThat(failure.remoteAgent()).isEqualTo("never-published");
		assertThat(initiator.hasRemoteMetadata("never-published")).isFalse();
	}

	@Test
	void anInterruptedLoadEndsCancelledBeforeItsDeadline(TestInfo info) {
		NixlEtcdMetadata etcd = etcdOf(nixlEtcdAgent("initiator", info));

		Thread.currentThread().interrupt();
		NixlException failure;
		try {
			failure = catchThrowableOfType(NixlException.class, () -> etcd.load("never-published", WAIT));
		}
		finally {
			assertThat(Thread.interrupted()).as("the interrupt flag stays set").isTrue();
		}
		assertThat(failure.status()).isEqualTo(NixlStatus.CANCELLED);
		assertThat(failure.remoteAgent()).isEqualTo("never-published");
	}

	@Test
	void thePeerLoaderOfNixlsEtcdLoadsPeersAndRefusesAnAgentWithoutIt(TestInfo info) {
		NixlAgent target = nixlEtcdAgent("target", info);
		MemorySegment remote = registered(target, 2);
		NixlAgent initiator = nixlEtcdAgent("initiator", info);
		MemorySegment local = registered(initiator, 1);
		etcdOf(target).publish();

		PeerLoader.nixlEtcd().load(initiator, target.name(), WAIT);
		transfer(initiator, XferOp.WRITE, local, remote, target.name());
		assertThat(Bytes.hasPattern(remote, 1)).isTrue();

		NixlAgent embedded = track(
				NixlAgent.create(AgentConfig.builder(name("embedded", info)).engine(Engine.EMBEDDED).build()));
		NixlException refused = catchThrowableOfType(NixlException.class,
				() -> PeerLoader.nixlEtcd().load(embedded, target.name(), WAIT));
		assertThat(refused.status()).isEqualTo(NixlStatus.NOT_SUPPORTED);
	}

	@Test
	void onlyANativeAgentCreatedWithEndpointsHasIt(TestInfo info) {
		NixlAgent embedded = track(NixlAgent.create(NixlEtcdMetadata
			.configure(AgentConfig.builder(name("embedded", info)).engine(Engine.EMBEDDED), etcd.endpoint())
			.build()));
		NixlAgent plain = track(
				NixlAgent.create(AgentConfig.builder(name("plain", info)).engine(Engine.NATIVE).build()));

		assertThat(embedded.etcdMetadata()).isEmpty();
		assertThat(plain.etcdMetadata()).isEmpty();
		assertThat(nixlEtcdAgent("configured", info).etcdMetadata()).isPresent();
	}

	@Test
	void badArgumentsAndAClosedAgentAreRefused(TestInfo info) {
		NixlAgent agent = nixlEtcdAgent("agent", info);
		NixlEtcdMetadata etcd = etcdOf(agent);

		assertThatIllegalArgumentException().isThrownBy(() -> etcd.load(" ", WAIT))
			.withMessageContaining("remoteAgent");
		assertThatIllegalArgumentException().isThrownBy(() -> etcd.load("peer", Duration.ofSeconds(-1)))
			.withMessageContaining("timeout");
		assertThatIllegalArgumentException().isThrownBy(() -> NixlEtcdMetadata.configure(AgentConfig.builder("x"), " "))
			.withMessageContaining("endpoints");

		agent.close();
		assertThat(catchThrowableOfType(NixlException.class, etcd::publish).status()).isEqualTo(NixlStatus.CLOSED);
		assertThat(catchThrowableOfType(NixlException.class, () -> etcd.load("peer", WAIT)).status())
			.isEqualTo(NixlStatus.CLOSED);
		assertThat(catchThrowableOfType(NixlException.class, etcd::invalidate).status()).isEqualTo(NixlStatus.CLOSED);
	}

}
