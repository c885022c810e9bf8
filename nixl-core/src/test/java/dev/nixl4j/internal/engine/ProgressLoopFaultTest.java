package dev.nixl4j.internal.engine;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentState;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.NativeNixl;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import dev.nixl4j.testsupport.FaultInjectingDriver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Errors thrown into an agent's progress loop, with both engines: one unit of work that
 * throws is survived (counted, and later transfers still move every byte); a unit that
 * keeps throwing turns the agent FAILED within a second, failing waiters at once and
 * refusing posts.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ProgressLoopFaultTest {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final long SIZE = 256 * 1024;

	private static final AtomicInteger ids = new AtomicInteger();

	private final List<AutoCloseable> resources = new ArrayList<>();

	private final Arena arena = Arena.ofShared();

	@AfterEach
	void close() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
		this.arena.close();
	}

	private record Setup(FaultInjectingDriver driver, NixlAgent initiator, NixlAgent target, MemorySegment local,
			MemorySegment remote) {

		Transfer write() {
			return this.initiator.transfer(XferOp.WRITE, DescriptorList.of(this.local), DescriptorList.of(this.remote),
					this.target.name(), null);
		}

	}

	private Setup setup(Engine engine) {
		if (engine == Engine.NATIVE) {
			NativeNixl.require();
		}
		int id = ids.incrementAndGet();
		AgentConfig initiatorConfig = AgentConfig.builder("fault-init-" + id).engine(engine).build();
		FaultInjectingDriver driver = FaultInjectingDriver.open(initiatorConfig);
		NixlAgent initiator = driver.agent(initiatorConfig);
		this.resources.add(initiator);
		NixlAgent target = NixlAgent.create(AgentConfig.builder("fault-target-" + id).engine(engine).build());
		this.resources.add(target);
		MemorySegment local = Bytes.pattern(this.arena, SIZE, 1);
		MemorySegment remote = Bytes.pattern(this.arena, SIZE, 2);
		initiator.register(local);
		target.register(remote);
		initiator.loadRemoteMetadata(target.localMetadata());
		return new Setup(driver, initiator, target, local, remote);
	}

	/** Writes a fresh pattern to the target and checks every byte arrived. */
	private static void writeAndCheck(Setup s, long seed) {
		Bytes.fill(s.local, seed);
		try (Transfer transfer = s.write()) {
			transfer.await(WAIT);
			assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
		}
		assertThat(Bytes.hasPattern(s.remote, seed)).as("bytes written with seed %d", seed).isTrue();
	}

	@ParameterizedTest
	@EnumSource(names = { "EMBEDDED", "NATIVE" })
	void anErrorFromAListenerOnTheProgressThreadIsSurvived(Engine engine) {
		Setup s = setup(engine);
		s.driver.deferPosts(true);
		AtomicInteger thrown = new AtomicInteger();
		AtomicInteger heard = new AtomicInteger();
		TransferListener failing = new TransferListener() {
			@Override
			public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
					@Nullable NixlException failure) {
				if (Thread.currentThread().getName().startsWith("nixl-progress-") && thrown.getAndIncrement() == 0) {
					throw new OutOfMemoryError("injected into a transfer listener");
				}
			}
		};
		TransferListener counting = new TransferListener() {
			@Override
			public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
					@Nullable NixlException failure) {
				heard.incrementAndGet();
			}
		};
		s.initiator.addTransferListener(failing);
		s.initiator.addTransferListener(counting);

		// waited for on its future: Transfer.await would poll, and so end it, on this
		// thread
		Bytes.fill(s.local, 3);
		try (Transfer transfer = s.write()) {
			assertThat(transfer.completion()).succeedsWithin(WAIT);
		}
		assertThat(Bytes.hasPattern(s.remote, 3)).isTrue();
		assertThat(thrown).as("the listener ran on the progress thread").hasValue(1);
		assertThat(heard).as("the other listener still heard the end").hasValue(1);
		// the loop counts the Error once the transfer's future completed: just after the
		// wait ends
		await(() -> s.initiator.statistics().internalErrors() == 1, "the listener's Error was counted",
				Duration.ofSeconds(1));

		writeAndCheck(s, 4);
		assertThat(heard).hasValue(2);
		assertThat(s.initiator.statistics().internalErrors()).isEqualTo(1);
		assertThat(s.initiator.state()).isEqualTo(AgentState.ACTIVE);
	}

	@ParameterizedTest
	@EnumSource(names = { "EMBEDDED", "NATIVE" })
	void aTransferWhosePollThrowsFailsAndLaterTransfersMoveEveryByte(Engine engine) {
		Setup s = setup(engine);
		s.driver.deferPosts(true);
		s.driver.failStatus(new OutOfMemoryError("injected into a status poll"), 1);
		try (Transfer transfer = s.write()) {
			NixlException failure = catchThrowableOfType(NixlException.class, () -> transfer.await(WAIT));
			assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_EXCEPTION);
			assertThat(failure.getCause()).isInstanceOf(OutOfMemoryError.class);
			assertThat(transfer.state()).isEqualTo(TransferState.FAILED);
		}
		assertThat(s.initiator.statistics().internalErrors()).isEqualTo(1);

		writeAndCheck(s, 5);
		assertThat(s.initiator.state()).isEqualTo(AgentState.ACTIVE);
	}

	@ParameterizedTest
	@EnumSource(names = { "EMBEDDED", "NATIVE" })
	void aPostThatThrowsEndsFailedAndTheTransferCanBePostedAgain(Engine engine) {
		Setup s = setup(engine);
		Transfer transfer = s.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(s.local),
				DescriptorList.of(s.remote), s.target.name(), null);
		this.resources.add(transfer);
		s.driver.failPosts(new OutOfMemoryError("injected into a post"), 1);

		Throwable thrown = catchThrowable(transfer::post);

		assertThat(transfer.state()).isEqualTo(TransferState.FAILED);
		assertThat(s.initiator.inFlightTransfers()).isEmpty();
		assertThat(transfer.completion()).failsWithin(WAIT)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOfSatisfying(NixlException.class, ex -> {
				assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_EXCEPTION);
				assertThat(ex.getCause()).isInstanceOf(OutOfMemoryError.class);
			});
		assertThat(thrown).isNull();

		Bytes.fill(s.local, 9);
		transfer.post();
		transfer.await(WAIT);
		assertThat(Bytes.hasPattern(s.remote, 9)).isTrue();
		assertThat(s.initiator.state()).isEqualTo(AgentState.ACTIVE);
	}

	@ParameterizedTest
	@EnumSource(names = { "EMBEDDED", "NATIVE" })
	void aTransferWhosePollAndReleaseKeepThrowingStillEndsFailed(Engine engine) {
		Setup s = setup(engine);
		s.driver.deferPosts(true);
		s.driver.failStatus(new OutOfMemoryError("injected into every status poll"), Integer.MAX_VALUE);
		s.driver.failReleases(new OutOfMemoryError("injected into every release"), Integer.MAX_VALUE);
		try (Transfer transfer = s.write()) {
			NixlException failure = catchThrowableOfType(NixlException.class, () -> transfer.await(WAIT));
			assertThat(failure.status()).isEqualTo(NixlStatus.ERROR_EXCEPTION);
			assertThat(transfer.state()).isEqualTo(TransferState.FAILED);
			assertThat(s.initiator.inFlightTransfers()).isEmpty();
		}
		s.driver.failStatus(new OutOfMemoryError(), 0);
		s.driver.failReleases(new OutOfMemoryError(), 0);
		writeAndCheck(s, 8);
		assertThat(s.initiator.state()).isEqualTo(AgentState.ACTIVE);
	}

	@ParameterizedTest
	@EnumSource(names = { "EMBEDDED", "NATIVE" })
	void closingAnAgentWhoseEngineCannotReleaseRequestsStillEndsItsTransfersAndCloses(Engine engine) {
		Setup s = setup(engine);
		s.driver.deferPosts(true);
		s.driver.holdTransfers(true);
		Transfer held = s.write();
		Transfer idle = s.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(s.local),
				DescriptorList.of(s.remote), s.target.name(), null);
		CompletableFuture<Transfer> inFlight = held.completion();
		s.driver.failReleases(new OutOfMemoryError("injected into every release"), Integer.MAX_VALUE);

		catchThrowable(s.initiator::close);

		assertThat(inFlight).isCompletedExceptionally();
		assertThat(held.state()).isEqualTo(TransferState.CANCELLED);
		assertThat(idle.state()).isEqualTo(TransferState.CLOSED);
		assertThat(s.initiator.isOpen()).isFalse();
		assertThat(s.initiator.state()).isEqualTo(AgentState.CLOSED);
	}

	@ParameterizedTest
	@EnumSource(names = { "EMBEDDED", "NATIVE" })
	void aDrainThatThrowsOnceIsSurvivedAndNotificationsStillArrive(Engine engine) {
		Setup s = setup(engine);
		s.target.loadRemoteMetadata(s.initiator.localMetadata());
		s.driver.failDrains(new OutOfMemoryError("injected into a notification drain"), 3);
		await(() -> s.initiator.statistics().internalErrors() == 3, "three drains threw");

		CompletableFuture<Notification> waiter = s.initiator
			.expectNotification(NotificationMatcher.exact(null, "after"), WAIT);
		s.target.sendNotification(s.initiator.name(), "after".getBytes());
		assertThat(waiter.join().remoteAgent()).isEqualTo(s.target.name());
		writeAndCheck(s, 6);
		assertThat(s.initiator.state()).isEqualTo(AgentState.ACTIVE);
	}

	@ParameterizedTest
	@EnumSource(names = { "EMBEDDED", "NATIVE" })
	void aDrainThatKeepsThrowingFailsTheAgentWithinASecond(Engine engine) {
		Setup s = setup(engine);
		writeAndCheck(s, 7);
		CompletableFuture<Notification> waiter = s.initiator
			.expectNotification(NotificationMatcher.exact(null, "never"), Duration.ofSeconds(30));
		Transfer ready = s.write();
		this.resources.add(ready);
		s.driver.deferPosts(true);
		s.driver.holdTransfers(true);
		Transfer held = s.write();
		this.resources.add(held);
		CompletableFuture<Transfer> inFlight = held.completion();
		assertThat(held.state()).isEqualTo(TransferState.IN_PROGRESS);

		s.driver.failDrains(new OutOfMemoryError("injected into every notification drain"), Integer.MAX_VALUE);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
		await(() -> s.initiator.state() == AgentState.FAILED, "the agent failed");
		assertThat(System.nanoTime()).as("failed within a second").isLessThan(deadline);

		assertThatThrownBy(() -> waiter.get(1, TimeUnit.SECONDS)).as("the waiter fails at once, not at its timeout")
			.isInstanceOf(ExecutionException.class)
			.cause()
			.isInstanceOfSatisfying(NixlException.class, ex -> assertThat(ex.status()).isEqualTo(NixlStatus.FAILED));
		assertThatThrownBy(() -> inFlight.get(1, TimeUnit.SECONDS)).as("the transfer in flight fails at once")
			.isInstanceOf(ExecutionException.class)
			.cause()
			.isInstanceOfSatisfying(NixlException.class, ex -> assertThat(ex.status()).isEqualTo(NixlStatus.FAILED));
		assertThat(held.state()).isEqualTo(TransferState.FAILED);
		assertThatThrownBy(ready::post).isInstanceOfSatisfying(NixlException.class,
				ex -> assertThat(ex.status()).isEqualTo(NixlStatus.FAILED));
		assertThatThrownBy(() -> s.initiator.expectNotification(NotificationMatcher.exact(null, "x"), WAIT))
			.isInstanceOfSatisfying(NixlException.class, ex -> assertThat(ex.status()).isEqualTo(NixlStatus.FAILED));
		assertThat(s.initiator.failure()).get()
			.satisfies(failure -> assertThat(failure.getCause()).isInstanceOf(OutOfMemoryError.class));
		assertThat(s.initiator.statistics().internalErrors()).isPositive();
		assertThat(s.target.state()).isEqualTo(AgentState.ACTIVE);
	}

	private static void await(BooleanSupplier condition, String what) {
		await(condition, what, WAIT);
	}

	private static void await(BooleanSupplier condition, String what, Duration wait) {
		long deadline = System.nanoTime() + wait.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("not within " + wait + ": " + what);
			}
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError("interrupted while waiting: " + what, ex);
			}
		}
	}

}
