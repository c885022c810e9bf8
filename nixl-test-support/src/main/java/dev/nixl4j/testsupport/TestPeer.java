package dev.nixl4j.testsupport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

/**
 * An agent in the test's JVM with registered memory, for the agent under test (an
 * application's, or one a plain integration observes) to move bytes to and from.
 */
public final class TestPeer implements AutoCloseable {

	private static final AtomicInteger ids = new AtomicInteger();

	/** Generous deadline for a transfer on a loaded machine. */
	public static final Duration WAIT = Duration.ofSeconds(30);

	private final NixlAgent agent;

	private final Arena arena = Arena.ofShared();

	private final MemorySegment memory;

	private final Registration registration;

	private TestPeer(String role, long size, long seed, Engine engine) {
		this.agent = NixlAgent.create(
				AgentConfig.builder("peer-" + role + "-" + ProcessHandle.current().pid() + "-" + ids.incrementAndGet())
					.engine(engine)
					.build());
		this.memory = Bytes.pattern(this.arena, size, seed);
		this.registration = this.agent.register(this.memory);
	}

	/**
	 * Starts a peer on the embedded engine.
	 * @param role part of its name
	 * @param size bytes it registers
	 * @param seed the pattern they hold
	 * @return the peer
	 */
	public static TestPeer start(String role, long size, long seed) {
		return start(role, size, seed, Engine.EMBEDDED);
	}

	/**
	 * Starts a peer.
	 * @param role part of its name
	 * @param size bytes it registers
	 * @param seed the pattern they hold
	 * @param engine the engine of its agent
	 * @return the peer
	 */
	public static TestPeer start(String role, long size, long seed, Engine engine) {
		return new TestPeer(role, size, seed, engine);
	}

	/**
	 * Returns the peer's agent.
	 * @return the agent
	 */
	public NixlAgent agent() {
		return this.agent;
	}

	/**
	 * Returns the peer's registered memory.
	 * @return the memory
	 */
	public MemorySegment memory() {
		return this.memory;
	}

	/**
	 * Moves the peer's whole memory to or from a local segment of an application agent
	 * that registered it and loaded this peer's metadata, and checks every byte.
	 * @param initiator the application's agent
	 * @param op the direction
	 * @param local the local segment, as large as the peer's memory
	 * @param notification message for the peer, or {@code null}
	 */
	public void transfer(NixlAgent initiator, XferOp op, MemorySegment local, @Nullable String notification) {
		try (Transfer transfer = initiator.transfer(op, DescriptorList.of(local), DescriptorList.of(this.memory),
				this.agent.name(), (notification != null) ? notification.getBytes(StandardCharsets.UTF_8) : null)) {
			transfer.await(WAIT);
			if (transfer.state() != TransferState.COMPLETED) {
				throw new AssertionError(op + " with peer " + this.agent.name() + " ended " + transfer.state());
			}
		}
		if (!Bytes.same(local, this.memory)) {
			throw new AssertionError(op + " with peer " + this.agent.name() + " did not move every byte");
		}
	}

	@Override
	public void close() {
		this.registration.close();
		this.agent.close();
		this.arena.close();
	}

}
