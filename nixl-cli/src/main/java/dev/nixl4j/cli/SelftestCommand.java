package dev.nixl4j.cli;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.PreparedList;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.readiness.Patterns;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nixl4j selftest}: the operations an inference service relies on, each verified:
 * READ and WRITE of several sizes, a prepared-list transfer with reordered indices
 * reposted twice, a WRITE whose notification arrives after its data, and a notification
 * on its own.
 */
@Command(name = "selftest", description = {
		"Verified READ/WRITE, prepared-list and notification transfers between two agents.", "",
		"Creates two agents in this process and checks, comparing every byte: WRITE and READ of 4 KiB, 1 MiB and "
				+ "16 MiB; a prepared-list transfer that selects descriptors by index (reordered) and is posted twice, "
				+ "as WRITE and as READ; a WRITE whose notification reaches the target only after its data; a "
				+ "notification sent on its own. Prints one line per check and a summary." },
		exitCodeList = { "0:every check passed", "1:a check failed", "2:usage error",
				"3:NIXL's native library cannot be loaded" })
final class SelftestCommand extends Subcommand {

	/** Sizes of the one-shot transfers. */
	static final List<Long> SIZES = List.of(4L << 10, 1L << 20, 16L << 20);

	private static final long BLOCK = 64 << 10;

	private static final int BLOCKS = 4;

	// picocli sets it, from defaultValue when the option is not given, before call() runs
	@SuppressWarnings("NullAway.Init")
	@Option(names = "--timeout", paramLabel = "DURATION", converter = DurationOption.class, defaultValue = "30s",
			description = "how long one check may wait for a transfer or a notification (default ${DEFAULT-VALUE}), "
					+ "for example 500ms, 10s or 2m")
	private Duration deadline;

	@Mixin
	private AgentOptions agentOptions = new AgentOptions();

	@Override
	public Integer call() {
		PrintStream out = out();
		String base = "nixl4j-selftest-" + ProcessHandle.current().pid();
		AgentConfig config = this.agentOptions.config(base);
		long size = SIZES.getLast();
		try (Arena arena = Arena.ofShared();
				NixlAgent initiator = NixlAgent.create(config.toBuilder().name(base + "-initiator").build());
				NixlAgent target = NixlAgent.create(config.toBuilder().name(base + "-target").build())) {
			MemorySegment local = arena.allocate(size, 4096);
			MemorySegment remote = arena.allocate(size, 4096);
			initiator.register(local);
			target.register(remote);
			initiator.loadRemoteMetadata(target.localMetadata());
			out.println("selftest: agents '" + initiator.name() + "' and '" + target.name() + "', backends "
					+ config.backends());
			Pair pair = new Pair(initiator, target, local, remote, this.deadline);
			List<Check> checks = new ArrayList<>();
			for (long bytes : SIZES) {
				checks.add(new Check("WRITE " + bytes + " bytes", () -> oneShot(pair, XferOp.WRITE, bytes)));
				checks.add(new Check("READ " + bytes + " bytes", () -> oneShot(pair, XferOp.READ, bytes)));
			}
			checks.add(new Check("prepared lists, indices reordered, posted as WRITE then READ", () -> prepared(pair)));
			checks.add(new Check("WRITE with a notification that arrives after the data", () -> notified(pair)));
			checks.add(new Check("notification on its own", () -> standalone(pair)));
			int failed = 0;
			for (Check check : checks) {
				long start = System.nanoTime();
				try {
					check.body().run();
					out.printf("ok    %s (%.1f ms)%n", check.name(), (System.nanoTime() - start) / 1e6);
				}
				catch (RuntimeException ex) {
					failed++;
					out.printf("FAIL  %s: %s%n", check.name(), ex.getMessage());
				}
			}
			out.println((failed == 0) ? "selftest: all " + checks.size() + " checks passed"
					: "selftest: " + failed + " of " + checks.size() + " checks FAILED");
			return (failed == 0) ? Nixl4jCli.EXIT_OK : Nixl4jCli.EXIT_FAILURE;
		}
	}

	private static void oneShot(Pair pair, XferOp op, long bytes) {
		MemorySegment local = pair.local().asSlice(0, bytes);
		MemorySegment remote = pair.remote().asSlice(0, bytes);
		long seed = bytes * 31 + op.code();
		Patterns.fill((op == XferOp.WRITE) ? local : remote, seed);
		Patterns.fill((op == XferOp.WRITE) ? remote : local, ~seed);
		try (Transfer transfer = pair.initiator()
			.transfer(op, DescriptorList.of(local), DescriptorList.of(remote), pair.target().name(), null)) {
			transfer.await(pair.deadline());
		}
		expect(Patterns.holds((op == XferOp.WRITE) ? remote : local, seed),
				"the destination does not hold the bytes sent");
	}

	private static void prepared(Pair pair) {
		DescriptorList localBlocks = blocks(pair.local());
		DescriptorList remoteBlocks = blocks(pair.remote());
		for (int i = 0; i < BLOCKS; i++) {
			Patterns.fill(block(pair.local(), i), 100 + i);
			Patterns.fill(block(pair.remote(), i), 200 + i);
		}
		int[] localIndices = { 0, 1, 2, 3 };
		int[] remoteIndices = { 3, 2, 1, 0 };
		try (PreparedList local = pair.initiator().prepareLocal(localBlocks);
				PreparedList remote = pair.initiator().prepareRemote(pair.target().name(), remoteBlocks);
				Transfer write = pair.initiator()
					.createTransfer(XferOp.WRITE, local, localIndices, remote, remoteIndices, null);
				Transfer read = pair.initiator()
					.createTransfer(XferOp.READ, local, localIndices, remote, remoteIndices, null)) {
			write.post();
			write.await(pair.deadline());
			for (int i = 0; i < BLOCKS; i++) {
				expect(Patterns.holds(block(pair.remote(), remoteIndices[i]), 100 + i),
						"WRITE: remote block " + remoteIndices[i] + " does not hold local block " + i);
			}
			for (int i = 0; i < BLOCKS; i++) {
				Patterns.fill(block(pair.remote(), i), 300 + i);
			}
			read.post();
			read.await(pair.deadline());
			for (int i = 0; i < BLOCKS; i++) {
				expect(Patterns.holds(block(pair.local(), i), 300 + remoteIndices[i]),
						"READ: local block " + i + " does not hold remote block " + remoteIndices[i]);
			}
			Patterns.fill(block(pair.local(), 0), 400);
			write.post();
			write.await(pair.deadline());
			expect(Patterns.holds(block(pair.remote(), remoteIndices[0]), 400),
					"the reposted WRITE did not move the new bytes");
		}
	}

	private static void notified(Pair pair) {
		long bytes = 1 << 20;
		MemorySegment local = pair.local().asSlice(0, bytes);
		MemorySegment remote = pair.remote().asSlice(0, bytes);
		Patterns.fill(local, 500);
		Patterns.fill(remote, 501);
		String tag = "nixl4j-selftest-" + System.nanoTime();
		CompletableFuture<Notification> arrival = pair.target()
			.expectNotification(NotificationMatcher.exact(pair.initiator().name(), tag), pair.deadline());
		CompletableFuture<Boolean> landedFirst = arrival.thenApply(notification -> Patterns.holds(remote, 500));
		try (Transfer transfer = pair.initiator()
			.transfer(XferOp.WRITE, DescriptorList.of(local), DescriptorList.of(remote), pair.target().name(),
					tag.getBytes(StandardCharsets.UTF_8))) {
			transfer.await(pair.deadline());
			expect(join(landedFirst, pair.deadline()), "the notification arrived before the data had landed");
		}
	}

	private static void standalone(Pair pair) {
		String tag = "nixl4j-selftest-alone-" + System.nanoTime();
		CompletableFuture<Notification> arrival = pair.target()
			.expectNotification(NotificationMatcher.exact(pair.initiator().name(), tag), pair.deadline());
		pair.initiator().sendNotification(pair.target().name(), tag.getBytes(StandardCharsets.UTF_8));
		expect(join(arrival, pair.deadline()).text().equals(tag), "a different message arrived");
	}

	private static <T> T join(CompletableFuture<T> future, Duration deadline) {
		try {
			return future.get(deadline.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("nothing arrived within " + deadline + ": " + ex, ex);
		}
	}

	private static DescriptorList blocks(MemorySegment segment) {
		List<MemoryDescriptor> descriptors = new ArrayList<>();
		for (int i = 0; i < BLOCKS; i++) {
			descriptors.add(MemoryDescriptor.of(block(segment, i)));
		}
		return new DescriptorList(MemoryType.DRAM, descriptors);
	}

	private static MemorySegment block(MemorySegment segment, int index) {
		return segment.asSlice(index * BLOCK, BLOCK);
	}

	private static void expect(boolean condition, String failure) {
		if (!condition) {
			throw new IllegalStateException(failure);
		}
	}

	/** The two agents and their registered memory. */
	private record Pair(NixlAgent initiator, NixlAgent target, MemorySegment local, MemorySegment remote,
			Duration deadline) {
	}

	/** One named check. */
	private record Check(String name, Runnable body) {
	}

}
