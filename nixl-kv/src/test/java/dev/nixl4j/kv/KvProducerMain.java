package dev.nixl4j.kv;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.testsupport.Bytes;

/**
 * A KV producer in its own JVM, driven by line commands on stdin; answers on stdout.
 * Started by {@link KvProducerRestartTests}. Its consumers' metadata is given to it
 * ({@code LOAD}); its own metadata and cache handle it prints at start, for the test to
 * publish: {@code READY <base64 metadata> <base64 handle JSON>}. Commands:
 * {@code LOAD <base64 metadata>} answers {@code LOADED <agent>};
 * {@code LEASE <request> <blocks> <generation> <consumer>} fills fresh blocks with the
 * pattern of {@link #seed} and leases them to the consumer, answering
 * {@code LEASE <transfer parameters>} ({@link #encode}); {@code QUIT}.
 */
public final class KvProducerMain {

	/** The layout of the producer's cache, and of its consumers'. */
	static final KvCacheLayout LAYOUT = KvCacheLayout.builder()
		.layers(2)
		.blocks(64)
		.blockSize(16)
		.kvHeads(4)
		.headDim(8)
		.build();

	/** The model fingerprint of the producer's cache. */
	static final String MODEL = "model-a";

	private static final Duration LEASE_TTL = Duration.ofMinutes(5);

	private KvProducerMain() {
	}

	/**
	 * Runs the producer.
	 * @param args agent name and engine
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
		try (NixlAgent agent = NixlAgent.create(AgentConfig.builder(args[0]).engine(Engine.valueOf(args[1])).build());
				PagedKvCache cache = PagedKvCache.builder(agent, LAYOUT).modelFingerprint(MODEL).build();
				KvProducer producer = KvProducer.builder(cache).peers(PeerLoader.preloaded()).build()) {
			Base64.Encoder base64 = Base64.getEncoder();
			out.println("READY " + base64.encodeToString(agent.localMetadata().toByteArray()) + " "
					+ base64.encodeToString(cache.handle().toJson()));
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null) {
				String[] command = line.split(" ");
				switch (command[0]) {
					case "LOAD" -> out.println("LOADED "
							+ agent.loadRemoteMetadata(AgentMetadata.of(Base64.getDecoder().decode(command[1]))));
					case "LEASE" -> {
						int[] ids = cache.allocator().allocate(Integer.parseInt(command[2]));
						long generation = Long.parseLong(command[3]);
						for (int r = 0; r < LAYOUT.regionCount(); r++) {
							for (int id : ids) {
								Bytes.fill(cache.block(r, id), seed(r, id, generation));
							}
						}
						// the lease takes over the blocks' references
						KvLease lease = producer.lease(command[1], ids,
								KvLease.options().ttl(LEASE_TTL).consumer(command[4]));
						out.println("LEASE " + encode(lease.params()));
					}
					case "QUIT" -> {
						out.println("BYE");
						return;
					}
					default -> out.println("ERROR unknown command " + command[0]);
				}
			}
		}
	}

	/**
	 * The pattern seed of a leased block.
	 * @param region the cache region
	 * @param block the producer's block
	 * @param generation the lease's generation of data
	 * @return the seed
	 */
	static long seed(int region, int block, long generation) {
		return generation * 1_000_000_007L + region * 65_537L + block;
	}

	/**
	 * Writes transfer parameters as one word: their JSON wire form, in base64.
	 * @param params the parameters
	 * @return the word
	 */
	static String encode(KvTransferParams params) {
		return Base64.getUrlEncoder().withoutPadding().encodeToString(params.toJson().getBytes(StandardCharsets.UTF_8));
	}

	/**
	 * Reads transfer parameters written by {@link #encode}.
	 * @param word the word
	 * @return the parameters
	 */
	static KvTransferParams decode(String word) {
		return KvTransferParams.fromJson(new String(Base64.getUrlDecoder().decode(word), StandardCharsets.UTF_8));
	}

}
