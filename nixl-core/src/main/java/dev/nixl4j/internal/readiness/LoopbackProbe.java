package dev.nixl4j.internal.readiness;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;
import dev.nixl4j.readiness.Patterns;

/**
 * The smallest proof that a configuration moves data: two agents, 64 KiB of registered
 * memory each, a WRITE that carries a notification and a READ, every byte compared.
 */
final class LoopbackProbe {

	/** Bytes moved each way. */
	static final long SIZE = 64 * 1024;

	private static final Duration DEADLINE = Duration.ofSeconds(10);

	private LoopbackProbe() {
	}

	/**
	 * Runs the probe.
	 * @param initiator the agent that posts the transfers
	 * @param target the agent whose memory they use
	 * @return evidence lines
	 * @throws Failure when bytes differ or the notification does not arrive
	 * @throws dev.nixl4j.NixlException when NIXL refuses a step
	 */
	static List<String> run(NixlAgent initiator, NixlAgent target) {
		List<String> evidence = new ArrayList<>();
		try (Arena arena = Arena.ofShared()) {
			MemorySegment local = arena.allocate(SIZE, 64);
			MemorySegment remote = arena.allocate(SIZE, 64);
			Patterns.fill(local, 1);
			Patterns.fill(remote, 2);
			try (Registration localRegistration = initiator.register(local);
					Registration remoteRegistration = target.register(remote)) {
				initiator.loadRemoteMetadata(target.localMetadata());
				String tag = "nixl4j-doctor-" + System.nanoTime();
				CompletableFuture<Notification> notification = target
					.expectNotification(NotificationMatcher.exact(initiator.name(), tag), DEADLINE);
				long writeNanos = transfer(initiator, XferOp.WRITE, local, remote, target.name(), tag);
				await(notification, "the WRITE's notification did not reach the target");
				if (!Patterns.holds(remote, 1)) {
					throw new Failure("WRITE completed but the target's memory does not hold the bytes sent");
				}
				evidence
					.add("loopback: WRITE of " + SIZE + " bytes from '" + initiator.name() + "' to '" + target.name()
							+ "' verified byte for byte in " + micros(writeNanos) + ", its notification delivered");
				Patterns.fill(remote, 3);
				long readNanos = transfer(initiator, XferOp.READ, local, remote, target.name(), null);
				if (!Patterns.holds(local, 3)) {
					throw new Failure("READ completed but the initiator's memory does not hold the target's bytes");
				}
				evidence.add("loopback: READ of " + SIZE + " bytes verified byte for byte in " + micros(readNanos));
			}
		}
		return evidence;
	}

	private static long transfer(NixlAgent initiator, XferOp op, MemorySegment local, MemorySegment remote,
			String targetName, @Nullable String tag) {
		long start = System.nanoTime();
		try (Transfer transfer = initiator.transfer(op, DescriptorList.of(local), DescriptorList.of(remote), targetName,
				(tag != null) ? tag.getBytes(StandardCharsets.UTF_8) : null)) {
			transfer.await(DEADLINE);
		}
		return System.nanoTime() - start;
	}

	private static void await(CompletableFuture<?> future, String failure) {
		try {
			future.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (TimeoutException | ExecutionException ex) {
			throw new Failure(failure + " within " + DEADLINE + " (" + ex.getCause() + ")");
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new Failure("interrupted while waiting: " + failure);
		}
	}

	private static String micros(long nanos) {
		return (nanos / 1000) + " us";
	}

	/**
	 * The probe ran but the data or the notification was wrong.
	 */
	static final class Failure extends RuntimeException {

		private static final long serialVersionUID = 1L;

		/**
		 * Creates the failure.
		 * @param message what went wrong
		 */
		Failure(String message) {
			super(message);
		}

	}

}
