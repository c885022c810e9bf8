package dev.nixl4j.cli;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.PreparedList;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

/**
 * Runs the measurements the way NIXL is used for performance, and the way nixlbench
 * measures: descriptor lists are prepared once per block size; a transfer is made from
 * them (timed as "prep") and then posted again and again (each post timed as "post", the
 * rest until completion as "tx"). Memory is registered once, before anything is timed.
 * After the timed posts the destination is checked against the source, so a number is
 * only reported for data that moved. The bytes the benchmark thread and the initiator's
 * progress thread allocate during the timed posts are counted (HotSpot's per-thread
 * allocation counters), so that allocation per post can be compared between builds.
 */
final class BenchRunner {

	/** Transfers made from the prepared lists to time "prep", at most. */
	private static final int PREP_SAMPLES = 100;

	/**
	 * How long the benchmark thread spins on a transfer that did not finish inside
	 * {@code post()} before it blocks: most finish within microseconds, and a parked
	 * thread would add its wake-up latency to every sample.
	 */
	private static final long SPIN_NANOS = 50_000;

	private static final Duration DEADLINE = Duration.ofSeconds(60);

	/**
	 * Untimed posts of the smallest block per direction, at most, before any direction is
	 * measured. Fewer (5000 per direction, each run just before its direction) left the
	 * first direction measured partly in code the JIT had not finished optimising: about
	 * 0.6 us more per 4 KiB post, and twice the allocation, whichever direction came
	 * first.
	 */
	private static final int JIT_WARMUP = 20_000;

	/**
	 * Bytes those posts may move, so that a run of large blocks does not spend minutes
	 * warming up.
	 */
	private static final long JIT_WARMUP_BYTES = 256L << 20;

	/**
	 * Posts per call of the timed loop during the JIT warm-up: few enough that the loop
	 * is called often enough to be compiled as a method.
	 */
	private static final int WARMUP_LOOP = 16;

	private final BenchOptions options;

	private final NixlAgent initiator;

	private final BenchMemory local;

	private final BenchTarget target;

	private final com.sun.management.@Nullable ThreadMXBean threads;

	/**
	 * Creates the runner.
	 * @param options what to measure
	 * @param initiator the agent that posts, with the target's metadata loaded
	 * @param local its registered memory, at least the largest block x batch
	 * @param target the target
	 */
	BenchRunner(BenchOptions options, NixlAgent initiator, BenchMemory local, BenchTarget target) {
		this.options = options;
		this.initiator = initiator;
		this.local = local;
		this.target = target;
		this.threads = (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean bean
				&& bean.isThreadAllocatedMemorySupported() && bean.isThreadAllocatedMemoryEnabled()) ? bean : null;
	}

	/**
	 * Runs every direction and block size.
	 * @param rows receives each row as soon as it is measured
	 * @return the rows, direction by direction
	 */
	List<BenchRow> run(Consumer<BenchRow> rows) {
		List<BenchRow> results = new ArrayList<>();
		for (XferOp op : this.options.ops()) {
			warmUpJit(op);
		}
		for (XferOp op : this.options.ops()) {
			for (long block : this.options.blockSizes()) {
				try (PreparedList localList = this.initiator.prepareLocal(localBlocks(block));
						PreparedList remoteList = this.initiator.prepareRemote(this.target.name(),
								remoteBlocks(block))) {
					BenchRow row = measure(op, block, localList, remoteList);
					rows.accept(row);
					results.add(row);
				}
			}
		}
		return results;
	}

	/**
	 * Makes and posts the smallest transfer up to {@value #JIT_WARMUP} times before
	 * anything is timed: until the JIT has compiled the paths that make and post a
	 * transfer, the first block sizes would measure the interpreter or code compiled
	 * without the full optimisations. Large blocks need fewer rounds, as Java's share of
	 * their time is small.
	 */
	private void warmUpJit(XferOp op) {
		long block = this.options.minBlock();
		long rounds = Math.min(JIT_WARMUP, Math.max(1, JIT_WARMUP_BYTES / (block * this.options.batch())));
		try (PreparedList localList = this.initiator.prepareLocal(localBlocks(block));
				PreparedList remoteList = this.initiator.prepareRemote(this.target.name(), remoteBlocks(block))) {
			for (long i = 0; i < rounds; i++) {
				try (Transfer transfer = this.initiator.createTransfer(op, localList, indices(), remoteList, indices(),
						null)) {
					complete(transfer);
				}
			}
			try (Transfer transfer = this.initiator.createTransfer(op, localList, indices(), remoteList, indices(),
					null)) {
				for (long i = 0; i < rounds; i += WARMUP_LOOP) {
					timedPosts(transfer, WARMUP_LOOP, new Samples(WARMUP_LOOP), new Samples(WARMUP_LOOP),
							new Samples(WARMUP_LOOP));
				}
			}
		}
	}

	/** Posts and waits in the way the options choose. */
	private void complete(Transfer transfer) {
		if (this.options.completion() == BenchOptions.Completion.CALLER) {
			transfer.post();
			transfer.await(DEADLINE);
		}
		else {
			await(transfer.post());
		}
	}

	private int[] indices() {
		int[] indices = new int[this.options.batch()];
		for (int i = 0; i < indices.length; i++) {
			indices[i] = i;
		}
		return indices;
	}

	private BenchRow measure(XferOp op, long block, PreparedList localList, PreparedList remoteList) {
		int batch = this.options.batch();
		long bytes = block * batch;
		long seed = block * 4 + op.code() + 1;
		// A fresh pattern at the source makes the check below fail unless this run moved
		// the data.
		if (op == XferOp.WRITE) {
			this.local.fill(seed, bytes);
		}
		else {
			this.target.fill(seed, bytes);
		}
		int[] indices = indices();
		int iterations = this.options.iterations(block);
		int prepSamples = Math.min(PREP_SAMPLES, iterations);
		Samples prep = new Samples(prepSamples);
		Transfer transfer = null;
		for (int i = 0; i < prepSamples; i++) {
			if (transfer != null) {
				transfer.close();
			}
			long start = System.nanoTime();
			transfer = this.initiator.createTransfer(op, localList, indices, remoteList, indices, null);
			prep.add(System.nanoTime() - start);
		}
		// iterations, and so prepSamples, are at least 1
		try (Transfer timed = Objects.requireNonNull(transfer)) {
			for (int i = 0; i < this.options.warmup(block); i++) {
				complete(timed);
			}
			Samples post = new Samples(iterations);
			Samples tx = new Samples(iterations);
			Samples postToCompletion = new Samples(iterations);
			long progressThread = progressThreadId();
			long allocatedBefore = allocated(Thread.currentThread().threadId());
			long progressAllocatedBefore = allocated(progressThread);
			long begin = System.nanoTime();
			timedPosts(timed, iterations, post, tx, postToCompletion);
			long wall = System.nanoTime() - begin;
			long allocatedPerPost = perPost(allocatedBefore, allocated(Thread.currentThread().threadId()), iterations);
			long progressAllocatedPerPost = perPost(progressAllocatedBefore, allocated(progressThread), iterations);
			boolean verified = this.local.crc(bytes) == this.target.crc(bytes);
			return new BenchRow(op, block, batch, iterations, this.options.warmup(block),
					(double) bytes * iterations / wall, wall / 1000.0 / ((double) iterations * batch),
					prep.meanMicros(), prep.percentileMicros(0.99), post.meanMicros(), post.percentileMicros(0.99),
					tx.meanMicros(), tx.percentileMicros(0.99), postToCompletion.percentileMicros(0.5),
					allocatedPerPost, progressAllocatedPerPost, verified);
		}
	}

	/**
	 * Posts a transfer again and again, each post waited for as the options choose, and
	 * records the times. Its own method, which the JIT warm-up calls often with a few
	 * posts: a loop that ran only inside {@link #measure} was measured in code compiled
	 * on stack replacement, which, with the same paths compiled, allocated 86 to 166
	 * bytes per post instead of 24 and took about 0.4 us more per 4 KiB post in whichever
	 * direction came first.
	 */
	private void timedPosts(Transfer timed, int iterations, Samples post, Samples tx, Samples postToCompletion) {
		boolean caller = this.options.completion() == BenchOptions.Completion.CALLER;
		for (int i = 0; i < iterations; i++) {
			long start = System.nanoTime();
			CompletableFuture<Transfer> completion = timed.post();
			long posted = System.nanoTime();
			if (caller) {
				timed.await(DEADLINE);
			}
			else {
				await(completion);
			}
			long done = System.nanoTime();
			post.add(posted - start);
			tx.add(done - posted);
			postToCompletion.add(done - start);
		}
	}

	/**
	 * Returns the id of the initiator's progress thread, or -1 when there is none by its
	 * name.
	 */
	private long progressThreadId() {
		String name = "nixl-progress-" + this.initiator.name();
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter(thread -> thread.getName().equals(name))
			.mapToLong(Thread::threadId)
			.findFirst()
			.orElse(-1);
	}

	/** Returns the bytes a thread allocated so far, or -1 when that cannot be known. */
	private long allocated(long threadId) {
		return (this.threads == null || threadId < 0) ? -1 : this.threads.getThreadAllocatedBytes(threadId);
	}

	private static long perPost(long before, long after, int iterations) {
		return (before < 0 || after < 0) ? -1 : (after - before) / iterations;
	}

	private DescriptorList localBlocks(long block) {
		return blocks(this.local.type(), this.local.region(), block);
	}

	private DescriptorList remoteBlocks(long block) {
		return blocks(this.target.type(), this.target.region(), block);
	}

	private DescriptorList blocks(MemoryType type, MemoryDescriptor region, long block) {
		List<MemoryDescriptor> descriptors = new ArrayList<>(this.options.batch());
		for (int i = 0; i < this.options.batch(); i++) {
			descriptors.add(new MemoryDescriptor(region.address() + i * block, block, region.deviceId()));
		}
		return new DescriptorList(type, descriptors);
	}

	private static void await(CompletableFuture<Transfer> completion) {
		long spinUntil = System.nanoTime() + SPIN_NANOS;
		while (!completion.isDone() && System.nanoTime() - spinUntil < 0) {
			Thread.onSpinWait();
		}
		try {
			completion.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("a transfer did not complete: " + ex.getMessage(), ex);
		}
	}

}
