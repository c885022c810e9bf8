package dev.nixl4j.cli;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvIntegrity;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.LeaseOutcome;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nixl4j kv-bench-producer}: the prefill side of {@code kv-bench}, started by it
 * in a child JVM and driven over its standard streams. It allocates a KV cache of
 * {@code --pool} blocks, fills every block of every region with the pattern of (region,
 * block) and prints {@code READY <base64 metadata> <region bases>} and
 * {@code CRCS <base64 CRC32C per region and
 * block>}; then it answers {@code PEER <base64 metadata>} with {@code LOADED},
 * {@code LEASE <request> <blocks> [<run>]} with
 * {@code LEASED <lease id> <block ids> <generation digest in hex> <base64 checksums or ->}
 * (random distinct blocks in runs of {@code run} consecutive ids, 1 when not given,
 * leased for one consumer for {@code --lease}, checked as {@code --integrity} says),
 * {@code SUMMARY} with {@code SUMMARY <completed> <expired> <active>} and {@code QUIT}
 * with {@code BYE}. End of input also ends it.
 */
@Command(name = "kv-bench-producer", hidden = true,
		description = "The prefill side of 'nixl4j kv-bench', which starts it; not meant to be run by hand.",
		exitCodeList = { "0:ended on QUIT or at the end of its input", "1:a failure", "2:usage error" })
final class KvBenchProducerCommand extends Subcommand {

	/**
	 * How long SUMMARY waits for leases being ended; the parent waits 60 s for its
	 * answer.
	 */
	private static final Duration SUMMARY_WAIT = Duration.ofSeconds(10);

	@Option(names = "--name", paramLabel = "NAME", description = "the producer agent's name")
	private @Nullable String name;

	@Option(names = "--pool", paramLabel = "BLOCKS", converter = Counts.AtLeastOne.class, defaultValue = "256",
			description = "blocks of the cache (default ${DEFAULT-VALUE})")
	private int pool;

	// picocli sets it, from defaultValue when the option is not given, before call() runs
	@SuppressWarnings("NullAway.Init")
	@Option(names = "--lease", paramLabel = "DURATION", converter = DurationOption.class, defaultValue = "60s",
			description = "how long a lease lasts (default ${DEFAULT-VALUE})")
	private Duration ttl;

	@Option(names = "--integrity", paramLabel = "MODE", defaultValue = "generation",
			description = "what the leases let the consumer check: none, generation or crc32c"
					+ " (default ${DEFAULT-VALUE})")
	private KvIntegrity integrity = KvIntegrity.GENERATION;

	@Option(names = "--memory", paramLabel = "WHERE", defaultValue = "dram",
			description = "where the cache lies: dram or vram (CUDA device 0) (default ${DEFAULT-VALUE})")
	private BenchMemory.Kind memory = BenchMemory.Kind.DRAM;

	@Mixin
	private AgentOptions agentOptions = new AgentOptions();

	@Override
	public Integer call() throws Exception {
		PrintStream out = out();
		String name = (this.name != null) ? this.name : "nixl4j-kv-producer-" + ProcessHandle.current().pid();
		KvCacheLayout layout = KvBenchCommand.LAYOUT.withNumBlocks(this.pool);
		AtomicInteger completed = new AtomicInteger();
		AtomicInteger expired = new AtomicInteger();
		Random random = new Random(42);
		try (NixlAgent agent = NixlAgent.create(this.agentOptions.config(name));
				PagedKvCache cache = KvBenchMemory.allocate(agent, layout, this.memory);
				KvProducer producer = KvProducer.builder(cache)
					.peers(PeerLoader.preloaded())
					.integrity(this.integrity)
					.build()) {
			int[] pool = cache.allocator().allocate(layout.numBlocks());
			ByteBuffer crcs = ByteBuffer.allocate(layout.descriptorCount() * Long.BYTES);
			for (int r = 0; r < layout.regionCount(); r++) {
				for (int b : pool) {
					KvBenchMemory.fill(cache, r, b, KvBenchCommand.seed(r, b));
					crcs.putLong(KvBenchMemory.crc(cache, r, b));
				}
			}
			out.println("READY " + Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()) + " "
					+ producer.handle().regionBases().stream().map(String::valueOf).collect(Collectors.joining(","))
					+ " " + cache.memoryType() + " " + producer.handle().deviceId());
			out.println("CRCS " + Base64.getEncoder().encodeToString(crcs.array()));
			out.flush();
			return serveCommands(out, (command) -> {
				switch (command[0]) {
					case "PEER" -> {
						agent.loadRemoteMetadata(AgentMetadata.of(Base64.getDecoder().decode(command[1])));
						out.println("LOADED");
					}
					case "LEASE" -> {
						int[] blocks = pick(random, pool, Integer.parseInt(command[2]),
								(command.length > 3) ? Integer.parseInt(command[3]) : 1);
						// the pool's blocks are leased again and again: each lease takes
						// over a reference of its own
						cache.allocator().retain(blocks);
						KvLease lease = producer.lease(command[1], blocks, KvLease.options().ttl(this.ttl));
						lease.outcome().thenAccept(outcome -> {
							if (outcome == LeaseOutcome.COMPLETED) {
								completed.incrementAndGet();
							}
							else if (outcome == LeaseOutcome.EXPIRED) {
								expired.incrementAndGet();
							}
						});
						out.println("LEASED " + lease.id() + " "
								+ lease.params()
									.blockIds()
									.stream()
									.map(String::valueOf)
									.collect(Collectors.joining(","))
								+ " " + Long.toHexString(lease.params().generation()) + " "
								+ checksums(lease.params().checksums()));
					}
					case "SUMMARY" -> {
						// a lease's outcome ends just after its consumer was answered
						producer.awaitLeasesEnded(SUMMARY_WAIT);
						out.println("SUMMARY " + completed.get() + " " + expired.get() + " " + producer.activeLeases());
					}
					default -> {
						return false;
					}
				}
				return true;
			});
		}
	}

	/** Base64 of the checksums as big-endian ints, {@code -} for none. */
	private static String checksums(List<Integer> checksums) {
		if (checksums.isEmpty()) {
			return "-";
		}
		ByteBuffer bytes = ByteBuffer.allocate(checksums.size() * Integer.BYTES);
		checksums.forEach(bytes::putInt);
		return Base64.getEncoder().encodeToString(bytes.array());
	}

	/**
	 * Picks {@code count} distinct blocks of the pool in runs of {@code run} consecutive
	 * ids, each run starting at a random multiple of {@code run}.
	 */
	private static int[] pick(Random random, int[] pool, int count, int run) {
		List<Integer> starts = new ArrayList<>(pool.length / run);
		for (int start = 0; start + run <= pool.length; start += run) {
			starts.add(start);
		}
		Collections.shuffle(starts, random);
		int[] ids = new int[count];
		for (int i = 0; i < count; i++) {
			ids[i] = pool[starts.get(i / run) + i % run];
		}
		return ids;
	}

}
