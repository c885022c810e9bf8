package dev.nixl4j.cli;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvTransferParams;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.kv.RemoteCacheHandle;

/**
 * The decode side of {@code kv-bench}, in its own process or in a consumer child: pulls
 * requests' blocks from the producer into its cache with a number of requests in flight
 * (one thread each, each with its own local blocks), and checks every block of every
 * request against the producer's CRC32C.
 */
final class KvBenchPuller {

	private final PagedKvCache cache;

	private final KvConsumer consumer;

	private final String producerName;

	private final KvCacheLayout remote;

	private final ByteBuffer crcs;

	private final int[][] slots;

	private final Duration timeout;

	/**
	 * Connects a consumer of the cache to the producer and sets aside local blocks for
	 * every request in flight.
	 * @param cache the local cache, with {@code inFlight} x {@code blocks} blocks
	 * @param producer the producer's cache
	 * @param crcs the CRC32C of every block of every region of the producer's cache, as
	 * big-endian longs, region by region
	 * @param blocks blocks per request
	 * @param inFlight requests in flight
	 * @param timeout how long one pull may take
	 */
	KvBenchPuller(PagedKvCache cache, RemoteCacheHandle producer, ByteBuffer crcs, int blocks, int inFlight,
			Duration timeout) {
		this.cache = cache;
		this.consumer = KvConsumer.builder(cache).peers(PeerLoader.preloaded()).build();
		this.consumer.connect(producer);
		this.producerName = producer.agentName();
		this.remote = producer.layout();
		this.crcs = crcs;
		this.slots = new int[inFlight][];
		for (int i = 0; i < inFlight; i++) {
			this.slots[i] = cache.allocator().allocate(blocks);
		}
		this.timeout = timeout;
	}

	/**
	 * Pulls requests, as many at once as this puller has requests in flight, and returns
	 * when all are done.
	 * @param prefix the requests' ids before their number, distinct among consumers
	 * @param count how many requests
	 * @param leases leases one request's blocks
	 * @return what was pulled
	 * @throws Exception what a lease or a pull threw
	 */
	Result pull(String prefix, int count, Leases leases) throws Exception {
		long[] nanos = new long[count];
		AtomicInteger next = new AtomicInteger();
		AtomicInteger verified = new AtomicInteger();
		AtomicLong bytes = new AtomicLong();
		if (this.slots.length == 1) {
			pullRequests(this.slots[0], prefix, count, leases, next, nanos, verified, bytes);
		}
		else {
			try (ExecutorService threads = Executors.newFixedThreadPool(this.slots.length)) {
				List<Future<?>> pulling = new ArrayList<>();
				for (int[] slot : this.slots) {
					pulling.add(threads.submit(() -> {
						pullRequests(slot, prefix, count, leases, next, nanos, verified, bytes);
						return null;
					}));
				}
				awaitAll(pulling);
			}
		}
		return new Result(verified.get(), bytes.get(), nanos);
	}

	private void pullRequests(int[] slot, String prefix, int count, Leases leases, AtomicInteger next, long[] nanos,
			AtomicInteger verified, AtomicLong bytes) throws Exception {
		for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
			String requestId = prefix + i;
			String[] leased = leases.lease(requestId);
			if (leased.length < 5 || !leased[0].equals("LEASED")) {
				throw new IllegalStateException("the producer did not lease request " + requestId);
			}
			List<Integer> ids = Arrays.stream(leased[2].split(",")).map(Integer::valueOf).toList();
			KvTransferParams params = KvTransferParams.builder()
				.producerAgent(this.producerName)
				.requestId(requestId)
				.blockIds(ids)
				.layoutFingerprint(this.remote.fingerprint())
				.leaseId(Long.parseLong(leased[1]))
				.generation(Long.parseUnsignedLong(leased[3], 16))
				.checksums(checksums(leased[4]))
				.build();
			for (int r = 0; r < this.cache.layout().regionCount(); r++) {
				for (int block : slot) {
					KvBenchMemory.zero(this.cache, r, block);
				}
			}
			long start = System.nanoTime();
			long pulled = this.consumer.pull(params, slot, this.timeout);
			nanos[i] = System.nanoTime() - start;
			bytes.addAndGet(pulled);
			if (verify(slot, ids)) {
				verified.incrementAndGet();
			}
		}
	}

	/**
	 * Waits for every task and throws the first failure, after interrupting the others.
	 * @param tasks the tasks
	 * @throws Exception the first task's failure
	 */
	static void awaitAll(List<? extends Future<?>> tasks) throws Exception {
		for (Future<?> task : tasks) {
			try {
				task.get();
			}
			catch (ExecutionException | InterruptedException ex) {
				tasks.forEach((other) -> other.cancel(true));
				if (ex instanceof InterruptedException) {
					Thread.currentThread().interrupt();
					throw ex;
				}
				if (ex.getCause() instanceof Exception cause) {
					throw cause;
				}
				if (ex.getCause() instanceof Error error) {
					throw error;
				}
				throw ex;
			}
		}
	}

	/**
	 * Reads the checksums of a {@code LEASED} line: base64 of big-endian ints, {@code -}
	 * for none.
	 */
	private static List<Integer> checksums(String field) {
		if (field.equals("-")) {
			return List.of();
		}
		ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode(field));
		List<Integer> checksums = new ArrayList<>(bytes.remaining() / Integer.BYTES);
		while (bytes.remaining() >= Integer.BYTES) {
			checksums.add(bytes.getInt());
		}
		return checksums;
	}

	/** Compares the CRC32C of every block of every region with the producer's. */
	private boolean verify(int[] localBlocks, List<Integer> remoteBlocks) {
		for (int r = 0; r < this.cache.layout().regionCount(); r++) {
			for (int i = 0; i < localBlocks.length; i++) {
				long expected = this.crcs.getLong((r * this.remote.numBlocks() + remoteBlocks.get(i)) * Long.BYTES);
				if (KvBenchMemory.crc(this.cache, r, localBlocks[i]) != expected) {
					return false;
				}
			}
		}
		return true;
	}

	/** Leases one request's blocks; called from every thread of a puller at once. */
	@FunctionalInterface
	interface Leases {

		/**
		 * Leases a request's blocks.
		 * @param requestId the request
		 * @return the producer's {@code LEASED} answer split at spaces
		 * @throws Exception when the producer did not answer
		 */
		String[] lease(String requestId) throws Exception;

	}

	/**
	 * What a puller pulled.
	 *
	 * @param verified requests whose every block matched the producer's
	 * @param bytes bytes pulled
	 * @param nanos each request's latency, in the order of their numbers
	 */
	record Result(int verified, long bytes, long[] nanos) {

		/**
		 * Returns the result as the words of a {@code DONE} line.
		 * @return {@code DONE <verified> <bytes> <base64 latencies>}
		 */
		String toLine() {
			ByteBuffer latencies = ByteBuffer.allocate(this.nanos.length * Long.BYTES);
			for (long n : this.nanos) {
				latencies.putLong(n);
			}
			return "DONE " + this.verified + " " + this.bytes + " "
					+ Base64.getEncoder().encodeToString(latencies.array());
		}

		/**
		 * Reads a {@code DONE} line.
		 * @param words the line split at spaces
		 * @return the result
		 */
		static Result of(String[] words) {
			ByteBuffer latencies = ByteBuffer.wrap(Base64.getDecoder().decode((words.length > 3) ? words[3] : ""));
			long[] nanos = new long[latencies.remaining() / Long.BYTES];
			for (int i = 0; i < nanos.length; i++) {
				nanos[i] = latencies.getLong();
			}
			return new Result(Integer.parseInt(words[1]), Long.parseLong(words[2]), nanos);
		}

	}

}
