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
				PagedKvCache cache = PagedKvCache.allocate(agent, LAYOUT, MODEL);
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
						KvLease lease = producer.lease(command[1], ids, 1, LEASE_TTL, command[4]);
						cache.allocator().release(ids);
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
	 * Writes transfer parameters as one word.
	 * @param params the parameters, without checksums or trace context
	 * @return the word
	 */
	static String encode(KvTransferParams params) {
		List<String> fields = List.of(params.producerAgent(), params.requestId(), join(params.blockIds()),
				params.layoutFingerprint(), Long.toString(params.leaseId()), Integer.toString(params.consumerRanks()),
				Long.toString(params.generation()), params.producerIncarnation());
		Base64.Encoder base64 = Base64.getUrlEncoder().withoutPadding();
		List<String> encoded = new ArrayList<>();
		for (String field : fields) {
			encoded.add(base64.encodeToString(field.getBytes(StandardCharsets.UTF_8)));
		}
		return String.join(".", encoded);
	}

	/**
	 * Reads transfer parameters written by {@link #encode}.
	 * @param word the word
	 * @return the parameters
	 */
	static KvTransferParams decode(String word) {
		String[] encoded = word.split("\\.", -1);
		String[] fields = new String[encoded.length];
		for (int i = 0; i < encoded.length; i++) {
			fields[i] = new String(Base64.getUrlDecoder().decode(encoded[i]), StandardCharsets.UTF_8);
		}
		List<Integer> blocks = new ArrayList<>();
		for (String id : fields[2].split(",")) {
			blocks.add(Integer.valueOf(id));
		}
		return new KvTransferParams(fields[0], fields[1], blocks, fields[3], Long.parseLong(fields[4]),
				Integer.parseInt(fields[5]), Long.parseLong(fields[6]), List.of(), Objects.requireNonNull(fields[7]));
	}

	private static String join(List<Integer> ids) {
		List<String> words = new ArrayList<>();
		for (int id : ids) {
			words.add(Integer.toString(id));
		}
		return String.join(",", words);
	}

}
