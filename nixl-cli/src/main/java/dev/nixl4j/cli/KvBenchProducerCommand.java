package dev.nixl4j.cli;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.KvLease;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.LeaseOutcome;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.PeerLoader;
import dev.nixl4j.readiness.Patterns;

/**
 * {@code nixl4j kv-bench-producer}: the prefill side of {@code kv-bench}, started by it in a child
 * JVM and driven over its standard streams. It allocates a KV cache of {@code --pool} blocks,
 * fills every block of every region with the pattern of (region, block) and prints
 * {@code READY <base64 metadata> <region bases>} and {@code CRCS <base64 CRC32C per region and
 * block>}; then it answers {@code PEER <base64 metadata>} with {@code LOADED},
 * {@code LEASE <request> <blocks>} with {@code LEASED <lease id> <block ids>} (random distinct
 * blocks, leased for one consumer), {@code SUMMARY} with {@code SUMMARY <completed> <expired>
 * <active>} and {@code QUIT} with {@code BYE}. End of input also ends it.
 */
final class KvBenchProducerCommand implements Command {

	static final String NAME = "--name";

	static final String POOL = "--pool";

	static final String LEASE_MS = "--lease-ms";

	@Override
	public String name() {
		return "kv-bench-producer";
	}

	@Override
	public String summary() {
		return "the producer side of kv-bench (started by kv-bench)";
	}

	@Override
	public String help() {
		return """
				Usage: nixl4j kv-bench-producer --name NAME --pool BLOCKS [--lease-ms N] [agent options]

				The prefill side of 'nixl4j kv-bench', which starts it; not meant to be run by hand.

				""" + AgentOptions.HELP;
	}

	@Override
	public Set<String> valuedOptions() {
		Set<String> options = new HashSet<>(AgentOptions.NAMES);
		options.addAll(Set.of(NAME, POOL, LEASE_MS));
		return options;
	}

	@Override
	public Set<String> flagOptions() {
		return Set.of();
	}

	@Override
	public int run(Arguments arguments, PrintStream out) throws Exception {
		String name = arguments.value(NAME, "nixl4j-kv-producer-" + ProcessHandle.current().pid());
		KvCacheLayout layout = KvBenchCommand.LAYOUT.withNumBlocks(arguments.count(POOL, 256));
		Duration ttl = Duration.ofMillis(arguments.count(LEASE_MS, 60_000));
		AtomicInteger completed = new AtomicInteger();
		AtomicInteger expired = new AtomicInteger();
		Random random = new Random(42);
		try (NixlAgent agent = NixlAgent.create(AgentOptions.config(arguments, name));
				PagedKvCache cache = PagedKvCache.allocate(agent, layout);
				KvProducer producer = new KvProducer(cache, PeerLoader.preloaded())) {
			int[] pool = cache.allocator().allocate(layout.numBlocks());
			ByteBuffer crcs = ByteBuffer.allocate(layout.descriptorCount() * Long.BYTES);
			for (int r = 0; r < layout.regionCount(); r++) {
				for (int b : pool) {
					Patterns.fill(cache.block(r, b), KvBenchCommand.seed(r, b));
					crcs.putLong(Patterns.crc(cache.block(r, b)));
				}
			}
			out.println("READY " + Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()) + " "
					+ producer.handle().regionBases().stream().map(String::valueOf).collect(Collectors.joining(",")));
			out.println("CRCS " + Base64.getEncoder().encodeToString(crcs.array()));
			out.flush();
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null) {
				String[] command = line.strip().split(" ");
				switch (command[0]) {
					case "PEER" -> {
						agent.loadRemoteMetadata(AgentMetadata.of(Base64.getDecoder().decode(command[1])));
						out.println("LOADED");
					}
					case "LEASE" -> {
						int[] blocks = pick(random, pool, Integer.parseInt(command[2]));
						KvLease lease = producer.lease(command[1], blocks, 1, ttl);
						lease.outcome().thenAccept(outcome -> {
							if (outcome == LeaseOutcome.COMPLETED) {
								completed.incrementAndGet();
							}
							else if (outcome == LeaseOutcome.EXPIRED) {
								expired.incrementAndGet();
							}
						});
						out.println("LEASED " + lease.id() + " "
								+ lease.params().blockIds().stream().map(String::valueOf).collect(Collectors.joining(",")));
					}
					case "SUMMARY" -> out.println("SUMMARY " + completed.get() + " " + expired.get() + " "
							+ producer.activeLeases());
					case "QUIT" -> {
						out.println("BYE");
						out.flush();
						return Nixl4jCli.EXIT_OK;
					}
					default -> out.println("ERROR unknown command '" + command[0] + "'");
				}
				out.flush();
			}
		}
		return Nixl4jCli.EXIT_OK;
	}

	private static int[] pick(Random random, int[] pool, int count) {
		List<Integer> ids = new ArrayList<>(pool.length);
		for (int id : pool) {
			ids.add(id);
		}
		Collections.shuffle(ids, random);
		return ids.subList(0, count).stream().mapToInt(Integer::intValue).toArray();
	}

}
