import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;

/**
 * Bytes allocated and time per KV request with nixl-core and nixl-kv alone (no observer, no Spring):
 * a producer and a consumer agent in this process, each request a lease and a pull of
 * kv-bench's 2 MiB block until the producer's confirmation, one at a time. Launched as a
 * source file with a revision's {@code nixl-core/target/classes} and
 * {@code nixl-kv/target/classes} on the class path, it
 * shows what a revision adds to a request when nothing observes it; it uses the KV
 * builders, so it runs against revisions that have them (its version in git before them
 * ran against revisions back to the KV resend). Allocation is counted by
 * {@code com.sun.management.ThreadMXBean#getTotalThreadAllocatedBytes} (every thread,
 * the producer's included) and, for the requesting thread alone,
 * {@code getThreadAllocatedBytes}; it hardly depends on the machine's load, the times
 * do.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp REV/nixl-core/target/classes:REV/nixl-kv/target/classes \
 *     src/bench/KvRequestAllocation.java [embedded|native] [rounds] [requests] [warmup]
 * </pre>
 */
public class KvRequestAllocation {

	public static void main(String[] args) throws Exception {
		Engine engine = (args.length > 0 && args[0].equals("native")) ? Engine.NATIVE : Engine.EMBEDDED;
		int rounds = (args.length > 1) ? Integer.parseInt(args[1]) : 3;
		int requests = (args.length > 2) ? Integer.parseInt(args[2]) : 2000;
		int warmup = (args.length > 3) ? Integer.parseInt(args[3]) : 1000;
		KvCacheLayout layout = KvCacheLayout.builder()
			.layers(32)
			.blocks(2)
			.blockSize(16)
			.kvHeads(8)
			.headDim(128)
			.dtypeSize(2)
			.build();
		var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		Duration wait = Duration.ofSeconds(60);
		String base = "kv-alloc-" + ProcessHandle.current().pid();
		try (InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();
				NixlAgent prefill = NixlAgent.create(AgentConfig.builder(base + "-prefill").engine(engine).build());
				PagedKvCache producerCache = PagedKvCache.allocate(prefill, layout);
				MetadataPublication p = MetadataPublication.builder(exchange, prefill).build();
				KvProducer producer = KvProducer.builder(producerCache).peers(PeerLoader.of(exchange)).build();
				NixlAgent decode = NixlAgent.create(AgentConfig.builder(base + "-decode").engine(engine).build());
				PagedKvCache consumerCache = PagedKvCache.allocate(decode, layout.withNumBlocks(1));
				MetadataPublication c = MetadataPublication.builder(exchange, decode).build()) {
			p.publish();
			c.publish();
			KvConsumer consumer = KvConsumer.builder(consumerCache).peers(PeerLoader.of(exchange)).build();
			consumer.connect(producer.handle());
			int[] blocks = producerCache.allocator().allocate(2);
			int[] local = consumerCache.allocator().allocate(1);
			System.out.printf(Locale.ROOT, "%s; %d rounds x %d requests of 1 block (2 MiB), %d warm-up%n",
					prefill.engineDescription(), rounds, requests, warmup);
			int counter = 0;
			for (int r = -1; r < rounds; r++) {
				int count = (r < 0) ? warmup : requests;
				String[] ids = new String[count];
				for (int i = 0; i < count; i++) {
					ids[i] = "req-" + (counter++);
				}
				long[] nanos = new long[count];
				long allocatedBefore = threads.getTotalThreadAllocatedBytes();
				long callerBefore = threads.getCurrentThreadAllocatedBytes();
				for (int i = 0; i < count; i++) {
					long begin = System.nanoTime();
					int[] leased = { blocks[i & 1] };
					// the two blocks are leased again and again: each lease takes over a
					// reference of its own
					producerCache.allocator().retain(leased);
					KvLease lease = producer.lease(ids[i], leased, KvLease.options().ttl(wait));
					consumer.pull(lease.params(), local, wait);
					nanos[i] = System.nanoTime() - begin;
				}
				long caller = threads.getCurrentThreadAllocatedBytes() - callerBefore;
				if (!producer.awaitLeasesEnded(wait)) {
					throw new IllegalStateException("leases still held after " + wait);
				}
				long allocated = threads.getTotalThreadAllocatedBytes() - allocatedBefore;
				if (r < 0) {
					continue;
				}
				Arrays.sort(nanos);
				System.out.printf(Locale.ROOT,
						"round %d: allocated %.0f B/request (all threads), %.0f B/request (caller); mean %.1f us, p50 %.1f us%n",
						r + 1, allocated / (double) count, caller / (double) count,
						Arrays.stream(nanos).average().orElse(0) / 1e3, nanos[count / 2] / 1e3);
			}
		}
	}

}
