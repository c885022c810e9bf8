package dev.nixl4j;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.provider.EnumSource;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.PeerMain;
import dev.nixl4j.testsupport.PeerProcess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The semantics every engine must have: one subclass per engine runs the same tests. Each
 * test uses an initiator agent and a target agent whose metadata the initiator loaded,
 * and checks every transferred byte.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class AgentContractTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final AtomicInteger ids = new AtomicInteger();

	private final List<AutoCloseable> resources = new ArrayList<>();

	/**
	 * Creates an agent of the engine under test.
	 * @param name the agent name
	 * @param customizer changes to the default configuration
	 * @return the agent
	 */
	protected abstract NixlAgent newAgent(String name, Consumer<AgentConfig.Builder> customizer);

	private NixlAgent agent(String role, TestInfo info, Consumer<AgentConfig.Builder> customizer) {
		String name = role + "-" + info.getTestMethod().map(m -> m.getName()).orElse("t") + "-" + ids.incrementAndGet();
		NixlAgent agent = newAgent(name, customizer);
		this.resources.add(agent);
		return agent;
	}

	private NixlAgent agent(String role, TestInfo info) {
		return agent(role, info, builder -> {
		});
	}

	private Arena arena() {
		Arena arena = Arena.ofShared();
		this.resources.add(arena);
		return arena;
	}

	/**
	 * Closes the agents before the arenas whose memory they registered: an engine may
	 * still hold a segment's session for a moment after a transfer completed (the
	 * embedded engine's serving thread finishing its copy), and closing the arena then
	 * fails.
	 */
	@AfterEach
	void closeResources() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			if (!(this.resources.get(i) instanceof Arena)) {
				this.resources.get(i).close();
			}
		}
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			if (this.resources.get(i) instanceof Arena) {
				this.resources.get(i).close();
			}
		}
	}

	/** Initiator and target with registered buffers; the initiator knows the target. */
	private record Pair(NixlAgent initiator, NixlAgent target, MemorySegment local, MemorySegment remote,
			Registration localRegistration, Registration remoteRegistration) {
	}

	private Pair pair(TestInfo info, long size, Consumer<AgentConfig.Builder> initiatorConfig) {
		Arena arena = arena();
		NixlAgent initiator = agent("init", info, initiatorConfig);
		NixlAgent target = agent("target", info);
		MemorySegment local = Bytes.pattern(arena, size, 1);
		MemorySegment remote = Bytes.pattern(arena, size, 2);
		Registration localRegistration = initiator.register(local);
		Registration remoteRegistration = target.register(remote);
		assertThat(initiator.loadRemoteMetadata(target.localMetadata())).isEqualTo(target.name());
		return new Pair(initiator, target, local, remote, localRegistration, remoteRegistration);
	}

	private Pair pair(TestInfo info, long size) {
		return pair(info, size, builder -> {
		});
	}

	@ParameterizedTest
	@EnumSource(XferOp.class)
	void oneShotTransferMovesEveryByte(XferOp op, TestInfo info) {
		Pair p = pair(info, 1 << 20);
		try (Transfer transfer = p.initiator.transfer(op, DescriptorList.of(p.local), DescriptorList.of(p.remote),
				p.target.name(), null)) {
			transfer.await(WAIT);
			assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
		}
		long expected = (op == XferOp.WRITE) ? 1 : 2;
		assertThat(Bytes.hasPattern(p.local, expected)).isTrue();
		assertThat(Bytes.hasPattern(p.remote, expected)).isTrue();
	}

	@ParameterizedTest
	@EnumSource(XferOp.class)
	void preparedListsSelectDescriptorsByIndexIncludingReordered(XferOp op, TestInfo info) {
		int block = 64 * 1024;
		Pair p = pair(info, 4L * block);
		DescriptorList localBlocks = blocks(p.local, block, 4);
		DescriptorList remoteBlocks = blocks(p.remote, block, 4);
		try (PreparedList local = p.initiator.prepareLocal(localBlocks);
				PreparedList remote = p.initiator.prepareRemote(p.target.name(), remoteBlocks);
				Transfer transfer = p.initiator.createTransfer(op, local, new int[] { 0, 1 }, remote,
						new int[] { 1, 0 }, null)) {
			transfer.post().join();
			MemorySegment source = (op == XferOp.WRITE) ? p.local : p.remote;
			MemorySegment destination = (op == XferOp.WRITE) ? p.remote : p.local;
			int[] sourceOf = (op == XferOp.WRITE) ? new int[] { 1, 0 } : new int[] { 1, 0 };
			for (int i = 0; i < 2; i++) {
				assertThat(Bytes.same(destination.asSlice((long) i * block, block),
						source.asSlice((long) sourceOf[i] * block, block)))
					.as("block %d", i)
					.isTrue();
			}
			MemorySegment untouched = (op == XferOp.WRITE) ? p.remote : p.local;
			long seed = (op == XferOp.WRITE) ? 2 : 1;
			assertThat(Bytes.same(untouched.asSlice(2L * block),
					Bytes.pattern(arena(), 4L * block, seed).asSlice(2L * block)))
				.as("blocks not selected stay as they were")
				.isTrue();
			// a prepared transfer can be posted again once done
			Bytes.fill(source, 77);
			transfer.post().join();
			assertThat(Bytes.same(destination.asSlice(0, block), source.asSlice(block, block))).isTrue();
		}
	}

	private static DescriptorList blocks(MemorySegment segment, int block, int count) {
		MemoryDescriptor[] descriptors = new MemoryDescriptor[count];
		for (int i = 0; i < count; i++) {
			descriptors[i] = MemoryDescriptor.of(segment.asSlice((long) i * block, block));
		}
		return DescriptorList.of(MemoryType.DRAM, descriptors);
	}

	@Test
	void notificationArrivesOnlyAfterTheDataLanded(TestInfo info) {
		Pair p = pair(info, 32 << 20);
		for (int round = 0; round < 5; round++) {
			Bytes.fill(p.local, 100 + round);
			String tag = "landed-" + round;
			CompletableFuture<Notification> arrival = p.target
				.expectNotification(NotificationMatcher.exact(p.initiator.name(), tag), WAIT)
				.thenApply(notification -> {
					// checked on the target's side the moment the message is handed over
					assertThat(Bytes.same(p.remote, p.local)).as("data landed before notification").isTrue();
					return notification;
				});
			try (Transfer transfer = p.initiator.transfer(XferOp.WRITE, DescriptorList.of(p.local),
					DescriptorList.of(p.remote), p.target.name(), tag.getBytes(StandardCharsets.UTF_8))) {
				assertThat(arrival.join().text()).isEqualTo(tag);
				transfer.await(WAIT);
			}
		}
	}

	@Test
	void aRepostWithoutAMessageNotifiesNobodyAfterAPostWithOne(TestInfo info) {
		Pair p = pair(info, 1 << 20);
		try (Transfer transfer = p.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null)) {
			transfer.post(bytes("once")).join();
			assertThat(p.target.expectNotification(NotificationMatcher.exact(p.initiator.name(), "once"), WAIT)
				.join()
				.text()).isEqualTo("once");
			for (int round = 0; round < 3; round++) {
				Bytes.fill(p.local, 200 + round);
				transfer.post().join();
				assertThat(Bytes.same(p.remote, p.local)).as("data of repost " + round).isTrue();
			}
			// a notification behind the reposts, on the same connection: had a repost
			// carried the earlier message again, it would arrive before this one
			p.initiator.sendNotification(p.target.name(), bytes("fence"));
			p.target.expectNotification(NotificationMatcher.exact(p.initiator.name(), "fence"), WAIT).join();
			assertThat(p.target.pollNotification(NotificationMatcher.prefix(null, ""))).as("no repeated notification")
				.isEmpty();
		}
	}

	@Test
	void listenersHearEachPostAndItsEndBeforeTheFutureCompletes(TestInfo info) {
		Pair p = pair(info, 1 << 20);
		List<String> heard = Collections.synchronizedList(new ArrayList<>());
		TransferListener listener = new TransferListener() {

			@Override
			public void beforePost(Transfer transfer) {
				heard.add("before " + transfer.op() + " " + transfer.byteSize());
			}

			@Override
			public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
					@Nullable NixlException failure) {
				heard.add("after " + outcome + " " + (durationNanos > 0) + " " + (failure == null) + " "
						+ transfer.completion().isDone());
			}

		};
		p.initiator.addTransferListener(listener);
		CompletableFuture<Notification> arrival = p.target
			.expectNotification(NotificationMatcher.exact(p.initiator.name(), "heard"), WAIT);
		try (Transfer transfer = p.initiator.transfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), "heard".getBytes(StandardCharsets.UTF_8))) {
			transfer.await(WAIT);
			arrival.join();
			assertThat(heard).containsExactly("before WRITE 1048576", "after COMPLETED true true false");
			p.initiator.removeTransferListener(listener);
			transfer.post(null).join();
			assertThat(heard).hasSize(2);
		}
		AgentStatistics statistics = p.initiator.statistics();
		assertThat(statistics.transfers(XferOp.WRITE, TransferState.COMPLETED)).isEqualTo(2);
		assertThat(statistics.bytes(XferOp.WRITE, TransferState.COMPLETED)).isEqualTo(2L << 20);
		assertThat(statistics.transfers(XferOp.READ, TransferState.COMPLETED)).isZero();
		assertThat(statistics.notificationsSent()).isEqualTo(1);
		assertThat(p.target.statistics().notificationsReceived()).isEqualTo(1);
	}

	@Test
	void elapsedRunsFromThePostToItsEndAndThenStaysPut(TestInfo info) {
		Pair p = pair(info, 1 << 20);
		AtomicLong heardNanos = new AtomicLong(-1);
		p.initiator.addTransferListener(new TransferListener() {

			@Override
			public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
					@Nullable NixlException failure) {
				heardNanos.set(durationNanos);
			}

		});
		try (Transfer transfer = p.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null)) {
			assertThat(transfer.elapsed()).isZero();
			transfer.post();
			transfer.await(WAIT);
			Duration ended = transfer.elapsed();
			assertThat(ended).isPositive().isEqualTo(Duration.ofNanos(heardNanos.get()));
			assertThat(transfer.elapsed()).as("frozen once the post ended").isEqualTo(ended);
		}
	}

	@Test
	void aListenerThatRefusesAPostStopsItBeforeAnyDataMoves(TestInfo info) {
		Pair p = pair(info, 1 << 20);
		List<String> heard = Collections.synchronizedList(new ArrayList<>());
		p.initiator.addTransferListener(new TransferListener() {

			@Override
			public void postRefused(Transfer transfer, RuntimeException reason) {
				heard.add("refused: " + reason.getMessage());
			}

			@Override
			public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
					@Nullable NixlException failure) {
				heard.add("after " + outcome);
			}

		});
		TransferListener gate = new TransferListener() {

			@Override
			public void beforePost(Transfer transfer) {
				throw new IllegalStateException("gate closed");
			}

		};
		p.initiator.addTransferListener(gate);
		try (Transfer transfer = p.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null)) {
			assertThatThrownBy(transfer::post).isInstanceOf(IllegalStateException.class).hasMessage("gate closed");
			assertThat(transfer.state()).isEqualTo(TransferState.READY);
			assertThat(Bytes.hasPattern(p.remote, 2)).as("target memory untouched").isTrue();
			assertThat(p.initiator.statistics().transfers(XferOp.WRITE, TransferState.COMPLETED)).isZero();
			p.initiator.removeTransferListener(gate);
			transfer.post().join();
		}
		assertThat(heard).containsExactly("refused: gate closed", "after COMPLETED");
		assertThat(Bytes.hasPattern(p.remote, 1)).isTrue();
	}

	@Test
	void standaloneNotificationsAreDeliveredByTagAndPrefixExactlyOnce(TestInfo info) {
		Pair p = pair(info, 4096);
		p.target.loadRemoteMetadata(p.initiator.localMetadata());
		CompletableFuture<Notification> byTag = p.target
			.expectNotification(NotificationMatcher.exact(p.initiator.name(), "req-7:done"), WAIT);
		CompletableFuture<Notification> firstPrefix = p.target
			.expectNotification(NotificationMatcher.prefix(null, "req-8:"), WAIT);
		CompletableFuture<Notification> secondPrefix = p.target
			.expectNotification(NotificationMatcher.prefix(null, "req-8:"), WAIT);
		for (String message : List.of("req-8:a", "req-7:done", "req-8:b", "other")) {
			p.initiator.sendNotification(p.target.name(), message.getBytes(StandardCharsets.UTF_8));
		}
		assertThat(byTag.join()).isEqualTo(new Notification(p.initiator.name(), bytes("req-7:done")));
		assertThat(List.of(firstPrefix.join().text(), secondPrefix.join().text())).containsExactlyInAnyOrder("req-8:a",
				"req-8:b");
		Notification other = p.target.expectNotification(NotificationMatcher.prefix(null, ""), WAIT).join();
		assertThat(other.text()).isEqualTo("other");
		assertThat(p.target.pollNotification(NotificationMatcher.prefix(null, ""))).as("nothing delivered twice")
			.isEmpty();
		// the reverse direction works too
		p.target.sendNotification(p.initiator.name(), bytes("back"));
		assertThat(
				p.initiator.expectNotification(NotificationMatcher.exact(p.target.name(), "back"), WAIT).join().text())
			.isEqualTo("back");
	}

	@Test
	void unclaimedNotificationsWaitInTheMailbox(TestInfo info) {
		Pair p = pair(info, 4096);
		p.initiator.sendNotification(p.target.name(), bytes("early"));
		Notification early = p.target.expectNotification(NotificationMatcher.exact(null, "early"), WAIT).join();
		assertThat(early.remoteAgent()).isEqualTo(p.initiator.name());
		p.initiator.sendNotification(p.target.name(), bytes("parked"));
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (p.target.pollNotification(NotificationMatcher.exact(null, "parked")).isEmpty()) {
			assertThat(System.nanoTime()).as("parked notification reached the mailbox").isLessThan(deadline);
			Thread.onSpinWait();
		}
	}

	@Test
	void aFloodOfUnclaimedJunkFromOnePeerNeitherStopsNorDelaysAnotherPeersNotifications(TestInfo info)
			throws Exception {
		Arena arena = arena();
		NixlAgent receiver = agent("p", info);
		NixlAgent flooder = agent("j", info);
		NixlAgent honest = agent("c", info);
		receiver.register(Bytes.pattern(arena, 4096, 1));
		flooder.loadRemoteMetadata(receiver.localMetadata());
		honest.loadRemoteMetadata(receiver.localMetadata());
		int junk = AgentConfig.DEFAULT_MAILBOX_CAPACITY + 1000;
		CompletableFuture<Void> flood = CompletableFuture.runAsync(() -> {
			for (int i = 0; i < junk; i++) {
				flooder.sendNotification(receiver.name(), bytes("junk-" + i));
			}
		});
		int during = 0;
		while (!flood.isDone() || during < 3) {
			expectFrom(receiver, honest, "during-" + during++);
		}
		flood.join();
		for (int i = 0; i < 3; i++) {
			expectFrom(receiver, honest, "after-" + i);
		}
		long expectedDrops = junk - AgentConfig.DEFAULT_MAILBOX_PER_SENDER;
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (receiver.statistics().notificationsDropped(flooder.name()) < expectedDrops) {
			assertThat(System.nanoTime()).as("every junk notification over the sender's bound was dropped")
				.isLessThan(deadline);
			Thread.onSpinWait();
		}
		assertThat(receiver.statistics().notificationsDropped(flooder.name())).isEqualTo(expectedDrops);
		assertThat(receiver.statistics().notificationsDropped()).isEqualTo(expectedDrops);
		assertThat(receiver.statistics().notificationsDropped(honest.name())).isZero();
		assertThat(receiver.pollNotification(NotificationMatcher.exact(flooder.name(), "junk-" + (junk - 1))))
			.as("the flooder's newest message is kept")
			.isPresent();
	}

	/**
	 * Sends a notification and waits a few seconds at most for the receiver to get it.
	 */
	private static void expectFrom(NixlAgent receiver, NixlAgent sender, String tag) {
		CompletableFuture<Notification> arrival = receiver
			.expectNotification(NotificationMatcher.exact(sender.name(), tag), Duration.ofSeconds(5));
		sender.sendNotification(receiver.name(), bytes(tag));
		assertThat(arrival).succeedsWithin(Duration.ofSeconds(5))
			.satisfies((notification) -> assertThat(notification.text()).isEqualTo(tag));
	}

	@Test
	void aSubscriptionGetsItsNotificationsBeforeWaitersAndNothingAfterItIsClosed(TestInfo info) {
		Pair p = pair(info, 4096);
		p.initiator.sendNotification(p.target.name(), bytes("sub/parked"));
		long deadline = System.nanoTime() + WAIT.toNanos();
		while (p.target.statistics().notificationsReceived() < 1) {
			assertThat(System.nanoTime()).as("parked notification reached the agent").isLessThan(deadline);
			Thread.onSpinWait();
		}
		List<Notification> handled = Collections.synchronizedList(new ArrayList<>());
		List<Thread> threads = Collections.synchronizedList(new ArrayList<>());
		NotificationSubscription subscription = p.target
			.subscribeNotifications(NotificationMatcher.prefix(p.initiator.name(), "sub/"), (notification) -> {
				handled.add(notification);
				threads.add(Thread.currentThread());
			});
		assertThat(subscription.isOpen()).isTrue();
		CompletableFuture<Notification> waiter = p.target.expectNotification(NotificationMatcher.prefix(null, "sub/"),
				WAIT);
		p.initiator.sendNotification(p.target.name(), bytes("sub/live"));
		deadline = System.nanoTime() + WAIT.toNanos();
		while (handled.size() < 2) {
			assertThat(System.nanoTime()).as("the subscription got both messages").isLessThan(deadline);
			Thread.onSpinWait();
		}
		assertThat(handled).extracting(Notification::text).containsExactly("sub/parked", "sub/live");
		assertThat(handled).extracting(Notification::remoteAgent).containsOnly(p.initiator.name());
		assertThat(threads).extracting(Thread::getName).containsOnly("nixl-progress-" + p.target.name());
		assertThat(waiter).isNotDone();

		subscription.close();
		p.initiator.sendNotification(p.target.name(), bytes("sub/after"));
		assertThat(waiter).succeedsWithin(WAIT).satisfies((n) -> assertThat(n.text()).isEqualTo("sub/after"));
		assertThat(handled).hasSize(2);
		assertThat(subscription.isOpen()).isFalse();
	}

	@Test
	void waitingForANotificationThatNeverComesTimesOut(TestInfo info) {
		NixlAgent agent = agent("lonely", info);
		CompletableFuture<Notification> never = agent.expectNotification(NotificationMatcher.exact(null, "never"),
				Duration.ofMillis(200));
		NixlException failure = catchThrowableOfType(NixlException.class, () -> {
			try {
				never.join();
			}
			catch (java.util.concurrent.CompletionException ex) {
				throw ex.getCause();
			}
		});
		assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(failure.getMessage()).contains("never").contains(agent.name());
	}

	@Test
	void transferToAPeerWhoseMetadataIsNotLoadedFailsClearly(TestInfo info) {
		Arena arena = arena();
		NixlAgent initiator = agent("init", info);
		NixlAgent stranger = agent("stranger", info);
		MemorySegment local = Bytes.pattern(arena, 4096, 1);
		MemorySegment remote = Bytes.pattern(arena, 4096, 2);
		initiator.register(local);
		stranger.register(remote);
		assertThat(initiator.hasRemoteMetadata(stranger.name())).isFalse();
		assertThatThrownBy(() -> initiator.createTransfer(XferOp.WRITE, DescriptorList.of(local),
				DescriptorList.of(remote), stranger.name(), null))
			.isInstanceOfSatisfying(NixlException.class, ex -> {
				assertThat(ex.status()).isNotEqualTo(NixlStatus.SUCCESS);
				assertThat(ex.remoteAgent()).isEqualTo(stranger.name());
				assertThat(ex.getMessage()).contains("create_xfer_req").contains(stranger.name());
			});
		assertThat(Bytes.hasPattern(remote, 2)).isTrue();
	}

	@Test
	void transferToAnInvalidatedPeerFailsClearlyAndReloadingRestoresIt(TestInfo info) {
		Pair p = pair(info, 4096);
		assertThat(p.initiator.hasRemoteMetadata(p.target.name())).isTrue();
		p.initiator.invalidateRemoteMetadata(p.target.name());
		assertThat(p.initiator.hasRemoteMetadata(p.target.name())).isFalse();
		assertThatThrownBy(() -> p.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null))
			.isInstanceOfSatisfying(NixlException.class, ex -> assertThat(ex.getMessage()).contains(p.target.name()));
		assertThat(Bytes.hasPattern(p.remote, 2)).isTrue();
		p.initiator.loadRemoteMetadata(p.target.localMetadata());
		try (Transfer transfer = p.initiator.transfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null)) {
			transfer.await(WAIT);
		}
		assertThat(Bytes.same(p.local, p.remote)).isTrue();
	}

	@Test
	void remoteDescriptorOutsideRegisteredMemoryIsRefused(TestInfo info) {
		Pair p = pair(info, 64 * 1024);
		MemorySegment beyond = MemorySegment.ofAddress(p.remote.address() + p.remote.byteSize() - 1024)
			.reinterpret(4096);
		assertThatThrownBy(() -> p.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(p.local.asSlice(0, 4096)),
				DescriptorList.of(beyond), p.target.name(), null))
			.isInstanceOfSatisfying(NixlException.class, ex -> {
				assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
				assertThat(ex.getMessage()).contains("remote descriptor 0").contains("not inside");
			});
		assertThatThrownBy(() -> p.initiator.prepareRemote(p.target.name(), DescriptorList.of(beyond)))
			.isInstanceOf(NixlException.class);
		assertThat(Bytes.hasPattern(p.remote, 2)).isTrue();
	}

	@Test
	void localDescriptorOutsideRegisteredMemoryIsRefusedBeforeAnyNativeCall(TestInfo info) {
		Pair p = pair(info, 64 * 1024);
		MemorySegment unregistered = arena().allocate(4096);
		assertThatThrownBy(() -> p.initiator.createTransfer(XferOp.READ, DescriptorList.of(unregistered),
				DescriptorList.of(p.remote.asSlice(0, 4096)), p.target.name(), null))
			.isInstanceOfSatisfying(NixlException.class, ex -> {
				assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
				assertThat(ex.getMessage()).contains("local descriptor 0").contains("not inside");
			});
		assertThatThrownBy(() -> p.initiator.createTransfer(XferOp.READ, DescriptorList.of(p.local.asSlice(0, 4096)),
				DescriptorList.of(p.remote.asSlice(0, 8192)), p.target.name(), null))
			.isInstanceOfSatisfying(NixlException.class,
					ex -> assertThat(ex.getMessage()).contains("differs in length"));
	}

	@Test
	void preparedIndicesOutOfRangeAreRefused(TestInfo info) {
		Pair p = pair(info, 8192);
		try (PreparedList local = p.initiator.prepareLocal(blocks(p.local, 4096, 2));
				PreparedList remote = p.initiator.prepareRemote(p.target.name(), blocks(p.remote, 4096, 2))) {
			assertThatThrownBy(() -> p.initiator.createTransfer(XferOp.WRITE, local, new int[] { 0, 2 }, remote,
					new int[] { 0, 1 }, null))
				.isInstanceOfSatisfying(NixlException.class,
						ex -> assertThat(ex.getMessage()).contains("index 1 is 2"));
			assertThatThrownBy(() -> p.initiator.createTransfer(XferOp.WRITE, local, new int[] { -1 }, remote,
					new int[] { 0 }, null))
				.isInstanceOf(NixlException.class);
			assertThatThrownBy(() -> p.initiator.createTransfer(XferOp.WRITE, remote, new int[] { 0 }, local,
					new int[] { 0 }, null))
				.isInstanceOfSatisfying(NixlException.class, ex -> assertThat(ex.getMessage()).contains("expected a"));
		}
		assertThat(Bytes.hasPattern(p.remote, 2)).isTrue();
	}

	@Test
	void useAfterCloseThrowsAndDoubleCloseIsHarmless(TestInfo info) {
		Pair p = pair(info, 8192);
		Transfer transfer = p.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null);
		transfer.close();
		transfer.close();
		assertThat(catchThrowableOfType(NixlException.class, transfer::post).status()).isEqualTo(NixlStatus.CLOSED);

		PreparedList local = p.initiator.prepareLocal(DescriptorList.of(p.local));
		PreparedList remote = p.initiator.prepareRemote(p.target.name(), DescriptorList.of(p.remote));
		local.close();
		local.close();
		assertThatThrownBy(
				() -> p.initiator.createTransfer(XferOp.WRITE, local, new int[] { 0 }, remote, new int[] { 0 }, null))
			.isInstanceOf(NixlException.class);

		Transfer prepared = p.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null);
		p.localRegistration.close();
		p.localRegistration.close();
		assertThat(p.localRegistration.isOpen()).isFalse();
		assertThat(catchThrowableOfType(NixlException.class, prepared::post).status()).isEqualTo(NixlStatus.CLOSED);
		assertThatThrownBy(() -> p.initiator.createTransfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null))
			.isInstanceOf(NixlException.class);

		p.initiator.close();
		p.initiator.close();
		assertThat(p.initiator.isOpen()).isFalse();
		assertThat(catchThrowableOfType(NixlException.class, () -> p.initiator.register(p.local)).status())
			.isEqualTo(NixlStatus.CLOSED);
		assertThat(catchThrowableOfType(NixlException.class, p.initiator::localMetadata).status())
			.isEqualTo(NixlStatus.CLOSED);
		assertThat(catchThrowableOfType(NixlException.class, prepared::post).status()).isEqualTo(NixlStatus.CLOSED);
		prepared.close();
		assertThat(Bytes.hasPattern(p.remote, 2)).isTrue();
	}

	@Test
	void aLargeTransferOf256MiBArrivesIntact(TestInfo info) {
		Pair p = pair(info, 256L << 20);
		try (Transfer transfer = p.initiator.transfer(XferOp.READ, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null)) {
			transfer.await(Duration.ofSeconds(60));
		}
		assertThat(Bytes.hasPattern(p.local, 2)).isTrue();
	}

	@Test
	void eightThreadsRunTwoHundredTransfersEachConcurrently(TestInfo info) throws Exception {
		int threads = 8;
		int perThread = 200;
		int block = 16 * 1024;
		Pair p = pair(info, (long) threads * block);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<Integer>> results = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int thread = t;
				results.add(pool.submit(() -> {
					MemorySegment local = p.local.asSlice((long) thread * block, block);
					MemorySegment remote = p.remote.asSlice((long) thread * block, block);
					int verified = 0;
					for (int i = 0; i < perThread; i++) {
						XferOp op = (i % 2 == 0) ? XferOp.WRITE : XferOp.READ;
						MemorySegment source = (op == XferOp.WRITE) ? local : remote;
						Bytes.fill(source, thread * 100_000L + i);
						try (Transfer transfer = p.initiator.transfer(op, DescriptorList.of(local),
								DescriptorList.of(remote), p.target.name(), null)) {
							transfer.await(WAIT);
						}
						if (Bytes.same(local, remote)) {
							verified++;
						}
					}
					return verified;
				}));
			}
			for (Future<Integer> result : results) {
				assertThat(result.get(2, TimeUnit.MINUTES)).isEqualTo(perThread);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(p.initiator.inFlightTransfers()).isEmpty();
	}

	/**
	 * Starts a peer agent of the engine under test in its own process.
	 * @param name its agent name
	 * @param size bytes it registers
	 * @param seed the pattern it holds
	 * @return the peer
	 * @throws java.io.IOException when it cannot start
	 */
	protected PeerProcess startPeer(String name, long size, long seed) throws java.io.IOException {
		return PeerProcess.start(name, size, seed);
	}

	/**
	 * A first READ posted to a paused peer process: it stays in flight until the peer
	 * resumes.
	 */
	private record InFlightRead(NixlAgent initiator, PeerProcess peer, MemorySegment local, Registration registration,
			Transfer transfer) {
	}

	private InFlightRead inFlightRead(TestInfo info, Consumer<AgentConfig.Builder> initiatorConfig) throws Exception {
		int size = 8 << 20;
		NixlAgent initiator = agent("init", info, initiatorConfig);
		PeerProcess peer = startPeer("peer-" + ids.incrementAndGet(), size, 42);
		this.resources.add(peer);
		MemorySegment local = Bytes.pattern(arena(), size, 1);
		Registration registration = initiator.register(local);
		initiator.loadRemoteMetadata(peer.metadata());
		// First contact needs the peer to answer the connection handshake; once
		// connected, native
		// READs are one-sided and would complete even from a stopped process.
		peer.pause();
		Transfer transfer = initiator.transfer(XferOp.READ, DescriptorList.of(local), peer.region(), peer.name(), null);
		this.resources.add(transfer);
		assertThat(transfer.state()).as("a READ from a paused peer is in flight").isEqualTo(TransferState.IN_PROGRESS);
		return new InFlightRead(initiator, peer, local, registration, transfer);
	}

	private void assertAgentStillWorks(InFlightRead read) {
		read.peer.resume();
		read.peer.fill(99);
		try (Transfer next = read.initiator.transfer(XferOp.READ, DescriptorList.of(read.local), read.peer.region(),
				read.peer.name(), null)) {
			next.await(WAIT);
		}
		assertThat(PeerMain.crc(read.local)).isEqualTo(read.peer.crc());
	}

	@Test
	void registrationUnderAnInFlightTransferCannotBeClosed(TestInfo info) throws Exception {
		InFlightRead read = inFlightRead(info, builder -> {
		});
		assertThat(read.initiator.inFlightTransfers()).containsExactly(read.transfer);
		assertThat(read.registration.inFlightTransfers()).isEqualTo(1);
		NixlException busy = catchThrowableOfType(NixlException.class, read.registration::close);
		assertThat(busy.status()).isEqualTo(NixlStatus.BUSY);
		assertThat(busy.getMessage()).contains("in flight");
		assertThat(read.registration.isOpen()).isTrue();
		read.peer.resume();
		read.transfer.await(WAIT);
		assertThat(PeerMain.crc(read.local)).isEqualTo(read.peer.crc());
		read.registration.close();
		assertThat(read.registration.isOpen()).isFalse();
	}

	@Test
	void aTransferInProgressBeyondTheStallLimitIsReportedStalled(TestInfo info) throws Exception {
		InFlightRead read = inFlightRead(info, builder -> builder.stallTimeout(Duration.ofMillis(300)));
		NixlException failure = catchThrowableOfType(NixlException.class, () -> read.transfer.await(WAIT));
		assertThat(failure.status()).isEqualTo(NixlStatus.STALLED);
		assertThat(failure.getMessage()).contains("stall limit").contains(read.peer.name());
		assertThat(read.transfer.state()).isEqualTo(TransferState.STALLED);
		assertThat(read.initiator.inFlightTransfers()).isEmpty();
		assertThat(read.registration.inFlightTransfers()).isZero();
		assertThat(catchThrowableOfType(NixlException.class, read.transfer::post).status())
			.isEqualTo(NixlStatus.CLOSED);
		assertAgentStillWorks(read);
	}

	@Test
	void cancellingAnInFlightTransferCompletesItsFutureAsCancelled(TestInfo info) throws Exception {
		InFlightRead read = inFlightRead(info, builder -> {
		});
		read.transfer.cancel();
		NixlException failure = catchThrowableOfType(NixlException.class, () -> read.transfer.await(WAIT));
		assertThat(failure.status()).isEqualTo(NixlStatus.CANCELLED);
		assertThat(read.transfer.state()).isEqualTo(TransferState.CANCELLED);
		assertThat(read.registration.inFlightTransfers()).isZero();
		assertAgentStillWorks(read);
	}

	@Test
	void waitingOnAnInFlightTransferTimesOutWithoutCancellingIt(TestInfo info) throws Exception {
		InFlightRead read = inFlightRead(info, builder -> {
		});
		NixlException timeout = catchThrowableOfType(NixlException.class,
				() -> read.transfer.await(Duration.ofMillis(200)));
		assertThat(timeout.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(read.transfer.state()).isEqualTo(TransferState.IN_PROGRESS);
		read.peer.resume();
		read.transfer.await(WAIT);
		assertThat(PeerMain.crc(read.local)).isEqualTo(read.peer.crc());
	}

	/**
	 * Reposts one transfer of sizes from 4 KiB to 1 MiB, each waited for by the caller
	 * and by a second thread at once, while the progress loop polls it too: every post
	 * moves its bytes, and its end is heard once and completes the future once.
	 */
	@ParameterizedTest
	@EnumSource(XferOp.class)
	void awaitingCallersAndTheProgressLoopEndEachPostExactlyOnce(XferOp op, TestInfo info) throws Exception {
		int rounds = 240;
		long largest = 1 << 20;
		Pair p = pair(info, largest);
		List<String> ends = Collections.synchronizedList(new ArrayList<>());
		p.initiator.addTransferListener(new TransferListener() {

			@Override
			public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
					@Nullable NixlException failure) {
				ends.add(outcome + " " + Thread.currentThread().getName());
			}

		});
		ExecutorService second = Executors.newSingleThreadExecutor();
		try {
			for (int sizeIndex = 0; sizeIndex < 9; sizeIndex++) {
				long size = 4096L << sizeIndex;
				MemorySegment local = p.local.asSlice(0, size);
				MemorySegment remote = p.remote.asSlice(0, size);
				try (Transfer transfer = p.initiator.transfer(op, DescriptorList.of(local), DescriptorList.of(remote),
						p.target.name(), null)) {
					transfer.await(WAIT);
					for (int i = 0; i < rounds / 9; i++) {
						long seed = sizeIndex * 1000L + i + 10;
						Bytes.fill((op == XferOp.WRITE) ? local : remote, seed);
						CompletableFuture<Transfer> completion = transfer.post();
						Future<Transfer> other = second.submit(() -> transfer.await(WAIT));
						assertThat(transfer.await(WAIT)).isSameAs(transfer);
						assertThat(other.get(30, TimeUnit.SECONDS)).isSameAs(transfer);
						assertThat(completion).isCompletedWithValue(transfer);
						assertThat(transfer.state()).isEqualTo(TransferState.COMPLETED);
						assertThat(Bytes.hasPattern(local, seed)).as("%d bytes, round %d", size, i).isTrue();
						assertThat(Bytes.hasPattern(remote, seed)).as("%d bytes, round %d", size, i).isTrue();
					}
				}
			}
		}
		finally {
			second.shutdownNow();
		}
		int posts = 9 * (1 + rounds / 9);
		assertThat(ends).hasSize(posts).allMatch(end -> end.startsWith("COMPLETED "));
		assertThat(p.initiator.statistics().transfers(op, TransferState.COMPLETED)).isEqualTo(posts);
		assertThat(p.initiator.inFlightTransfers()).isEmpty();
	}

	@Test
	void aCallerPollingPastTheStallLimitEndsTheTransferStalledOnce(TestInfo info) throws Exception {
		InFlightRead read = inFlightRead(info, builder -> builder.stallTimeout(Duration.ofMillis(200)));
		Transfer transfer = read.transfer;
		long deadline = System.nanoTime() + WAIT.toNanos();
		NixlException failure = null;
		while (failure == null || failure.status() == NixlStatus.TIMEOUT) {
			assertThat(System.nanoTime() - deadline).as("ended before the deadline").isNegative();
			failure = catchThrowableOfType(NixlException.class, () -> transfer.await(Duration.ofMillis(1)));
			assertThat(failure).as("a READ from a paused peer cannot complete").isNotNull();
		}
		assertThat(failure.status()).isEqualTo(NixlStatus.STALLED);
		assertThat(failure.getMessage()).contains("stall limit");
		assertThat(transfer.state()).isEqualTo(TransferState.STALLED);
		assertThat(transfer.completion()).isCompletedExceptionally();
		AgentStatistics statistics = read.initiator.statistics();
		assertThat(statistics.transfers(XferOp.READ, TransferState.STALLED)).isEqualTo(1);
		assertThat(statistics.transfers(XferOp.READ, TransferState.COMPLETED)).isZero();
		assertThat(read.initiator.inFlightTransfers()).isEmpty();
		assertThat(read.registration.inFlightTransfers()).isZero();
		assertAgentStillWorks(read);
	}

	@Test
	void anInterruptedWaitIsCancelledWithoutCancellingTheTransfer(TestInfo info) throws Exception {
		InFlightRead read = inFlightRead(info, builder -> {
		});
		Thread.currentThread().interrupt();
		NixlException interrupted;
		try {
			interrupted = catchThrowableOfType(NixlException.class, () -> read.transfer.await(WAIT));
		}
		finally {
			assertThat(Thread.interrupted()).as("the interrupt status is kept").isTrue();
		}
		assertThat(interrupted.status()).isEqualTo(NixlStatus.CANCELLED);
		assertThat(interrupted.getMessage()).contains("interrupted");
		assertThat(read.transfer.state()).isEqualTo(TransferState.IN_PROGRESS);
		NixlException none = catchThrowableOfType(NixlException.class, () -> read.transfer.await(Duration.ZERO));
		assertThat(none.status()).isEqualTo(NixlStatus.TIMEOUT);
		read.peer.resume();
		read.transfer.await(WAIT);
		assertThat(read.transfer.state()).isEqualTo(TransferState.COMPLETED);
		assertThat(PeerMain.crc(read.local)).isEqualTo(read.peer.crc());
	}

	@Test
	void closingAnAgentWithTransfersInFlightCancelsThem(TestInfo info) throws Exception {
		InFlightRead read = inFlightRead(info, builder -> {
		});
		read.initiator.close();
		assertThat(read.transfer.completion()).isCompletedExceptionally();
		assertThat(read.transfer.state()).isEqualTo(TransferState.CANCELLED);
		assertThat(catchThrowableOfType(NixlException.class, read.transfer::post).status())
			.isEqualTo(NixlStatus.CLOSED);
		read.peer.resume();
	}

	@Test
	void corruptMetadataIsRejectedBeforeItReachesTheEngine(TestInfo info) {
		NixlAgent agent = agent("reader", info);
		byte[] real = agent("writer", info).localMetadata().toByteArray();
		for (byte[] bad : List.of(new byte[0], bytes("nixlSerDes|"), java.util.Arrays.copyOf(real, real.length / 2),
				bytes("definitely not metadata"))) {
			assertThat(catchThrowableOfType(NixlException.class, () -> agent.loadRemoteMetadata(AgentMetadata.of(bad)))
				.status()).isEqualTo(NixlStatus.INVALID_METADATA);
		}
		assertThat(agent.remoteAgents()).isEmpty();
	}

	@Test
	void aRestartedPeerWithTheSameNameIsLoadedAfterInvalidation(TestInfo info) {
		Arena arena = arena();
		NixlAgent initiator = agent("init", info);
		String peerName = "peer-restart-" + ids.incrementAndGet();
		NixlAgent first = newAgent(peerName, builder -> {
		});
		MemorySegment firstMemory = Bytes.pattern(arena, 4096, 5);
		first.register(firstMemory);
		initiator.loadRemoteMetadata(first.localMetadata());
		first.close();
		try (NixlAgent second = newAgent(peerName, builder -> {
		})) {
			MemorySegment secondMemory = Bytes.pattern(arena, 4096, 6);
			second.register(secondMemory);
			initiator.invalidateRemoteMetadata(peerName);
			assertThat(initiator.loadRemoteMetadata(second.localMetadata())).isEqualTo(peerName);
			MemorySegment local = Bytes.pattern(arena, 4096, 7);
			initiator.register(local);
			try (Transfer transfer = initiator.transfer(XferOp.READ, DescriptorList.of(local),
					DescriptorList.of(secondMemory), peerName, null)) {
				transfer.await(WAIT);
			}
			assertThat(Bytes.hasPattern(local, 6)).isTrue();
		}
	}

	@Test
	void aRefusedLoadLeavesThePeerListInStepWithTheEngine(TestInfo info) {
		Arena arena = arena();
		NixlAgent initiator = agent("init", info);
		String peerName = "peer-refused-" + ids.incrementAndGet();
		try (NixlAgent first = newAgent(peerName, builder -> {
		}); NixlAgent impostor = newAgent(peerName, builder -> {
		})) {
			first.register(Bytes.pattern(arena, 4096, 1));
			impostor.register(Bytes.pattern(arena, 4096, 2));
			initiator.loadRemoteMetadata(first.localMetadata());
			// same name, other connection details: refused without an invalidation first
			assertThatThrownBy(() -> initiator.loadRemoteMetadata(impostor.localMetadata()))
				.isInstanceOf(NixlException.class);
			assertThat(initiator.remoteAgents().contains(peerName)).isEqualTo(initiator.hasRemoteMetadata(peerName));
			if (initiator.remoteAgents().contains(peerName)) {
				initiator.invalidateRemoteMetadata(peerName);
			}
			assertThat(initiator.remoteAgents()).doesNotContain(peerName);
			assertThat(initiator.loadRemoteMetadata(impostor.localMetadata())).isEqualTo(peerName);
		}
	}

	@Test
	void partialMetadataAnnouncesMemoryRegisteredLater(TestInfo info) {
		Pair p = pair(info, 4096);
		MemorySegment later = Bytes.pattern(arena(), 8192, 9);
		Registration laterRegistration = p.target.register(later);
		MemorySegment local = Bytes.pattern(arena(), 8192, 10);
		p.initiator.register(local);
		assertThatThrownBy(() -> p.initiator.createTransfer(XferOp.READ, DescriptorList.of(local),
				DescriptorList.of(later), p.target.name(), null))
			.isInstanceOf(NixlException.class);
		assertThat(p.initiator.loadRemoteMetadata(p.target.localMetadata(laterRegistration)))
			.isEqualTo(p.target.name());
		try (Transfer transfer = p.initiator.transfer(XferOp.READ, DescriptorList.of(local), DescriptorList.of(later),
				p.target.name(), null)) {
			transfer.await(WAIT);
		}
		assertThat(Bytes.hasPattern(local, 9)).isTrue();
	}

	@Test
	void telemetryReportsWhatTheTransferMoved(TestInfo info) {
		Pair p = pair(info, 1 << 20, builder -> builder.telemetry(true));
		try (Transfer transfer = p.initiator.transfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null)) {
			transfer.await(WAIT);
			TransferTelemetry telemetry = transfer.telemetry();
			assertThat(telemetry.totalBytes()).isEqualTo(1 << 20);
			assertThat(telemetry.descriptorCount()).isEqualTo(1);
			assertThat(telemetry.transferDuration()).isPositive();
		}
	}

	@Test
	void telemetryIsRefusedWhenItIsOff(TestInfo info) {
		Pair p = pair(info, 4096);
		try (Transfer transfer = p.initiator.transfer(XferOp.WRITE, DescriptorList.of(p.local),
				DescriptorList.of(p.remote), p.target.name(), null)) {
			transfer.await(WAIT);
			assertThat(catchThrowableOfType(NixlException.class, transfer::telemetry).status())
				.isEqualTo(NixlStatus.ERROR_NO_TELEMETRY);
		}
	}

	@Test
	void notificationToAnUnknownAgentFailsClearly(TestInfo info) {
		NixlAgent agent = agent("sender", info);
		assertThatThrownBy(() -> agent.sendNotification("nobody-" + ids.incrementAndGet(), bytes("hello")))
			.isInstanceOfSatisfying(NixlException.class, ex -> {
				assertThat(ex.operation()).isEqualTo("gen_notif");
				assertThat(ex.remoteAgent()).startsWith("nobody-");
			});
	}

	@Test
	void theAgentListsItsPeersRegistrationsAndBackends(TestInfo info) {
		Pair p = pair(info, 4096);
		assertThat(p.initiator.remoteAgents()).containsExactly(p.target.name());
		assertThat(p.initiator.registrations()).containsExactly(p.localRegistration);
		assertThat(p.localRegistration.byteSize()).isEqualTo(4096);
		assertThat(p.initiator.backends()).isNotEmpty();
		assertThat(p.initiator.backends().get(0).memoryTypes()).contains(MemoryType.DRAM);
		p.initiator.invalidateRemoteMetadata(p.target.name());
		assertThat(p.initiator.remoteAgents()).isEmpty();
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
