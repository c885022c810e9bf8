package dev.nixl4j.cli;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.kv.KvCacheLayout;
import dev.nixl4j.kv.PagedKvCache;
import dev.nixl4j.kv.RemoteCacheHandle;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nixl4j kv-bench-consumer}: one more decode side of {@code kv-bench}
 * ({@code --consumers}), started by it in a child JVM and driven over its standard
 * streams. It allocates a KV cache of {@code --in-flight} x {@code --blocks} blocks and
 * prints {@code READY <base64 metadata>}; then it answers
 * {@code PRODUCER <base64 metadata> <region bases> <base64 CRC32C per region and block>}
 * with {@code CONNECTED}, {@code RUN <request prefix> <count>} with
 * {@code DONE <verified> <bytes> <base64 latencies in ns>} after pulling {@code count}
 * requests, {@code --in-flight} at a time, and {@code QUIT} with {@code BYE}. While it
 * runs, it asks for each request's lease with {@code LEASE <request>} and reads the
 * producer's {@code LEASED ...} answer back; one lease is asked for at a time.
 */
@Command(name = "kv-bench-consumer", hidden = true,
		description = "A consumer of 'nixl4j kv-bench --consumers', which starts it; not meant to be run by hand.",
		exitCodeList = { "0:ended on QUIT or at the end of its input", "1:a failure", "2:usage error" })
final class KvBenchConsumerCommand extends Subcommand {

	@Option(names = "--name", paramLabel = "NAME", description = "the consumer agent's name")
	private @Nullable String name;

	@Option(names = "--blocks", paramLabel = "N", converter = Counts.AtLeastOne.class, defaultValue = "1",
			description = "blocks per request (default ${DEFAULT-VALUE})")
	private int blocks;

	@Option(names = "--pool", paramLabel = "BLOCKS", converter = Counts.AtLeastOne.class, defaultValue = "2",
			description = "blocks of the producer's cache (default ${DEFAULT-VALUE})")
	private int pool;

	@Option(names = "--in-flight", paramLabel = "K", converter = Counts.AtLeastOne.class, defaultValue = "1",
			description = "requests in flight (default ${DEFAULT-VALUE})")
	private int inFlight;

	// picocli sets it, from defaultValue when the option is not given, before call() runs
	@SuppressWarnings("NullAway.Init")
	@Option(names = "--timeout", paramLabel = "DURATION", converter = DurationOption.class, defaultValue = "60s",
			description = "how long one pull may take (default ${DEFAULT-VALUE})")
	private Duration pullTimeout;

	@Option(names = "--memory", paramLabel = "WHERE", defaultValue = "dram",
			description = "where the cache lies: dram or vram (CUDA device 0) (default ${DEFAULT-VALUE})")
	private BenchMemory.Kind memory = BenchMemory.Kind.DRAM;

	@Mixin
	private AgentOptions agentOptions = new AgentOptions();

	@Override
	public Integer call() throws Exception {
		if (this.blocks > KvBenchCommand.MAX_BLOCKS || this.inFlight > KvBenchCommand.MAX_IN_FLIGHT
				|| this.blocks * this.inFlight > KvBenchCommand.MAX_CONSUMER_BLOCKS) {
			throw usageError("--blocks x --in-flight must be at most " + KvBenchCommand.MAX_CONSUMER_BLOCKS);
		}
		PrintStream out = out();
		String name = (this.name != null) ? this.name : "nixl4j-kv-consumer-" + ProcessHandle.current().pid();
		KvCacheLayout local = KvBenchCommand.LAYOUT.withNumBlocks(this.inFlight * this.blocks);
		KvCacheLayout remote = KvBenchCommand.LAYOUT.withNumBlocks(this.pool);
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		Object leasing = new Object();
		try (NixlAgent agent = NixlAgent.create(this.agentOptions.config(name));
				PagedKvCache cache = KvBenchMemory.allocate(agent, local, this.memory)) {
			out.println("READY " + Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()));
			out.flush();
			KvBenchPuller puller = null;
			String line;
			while ((line = in.readLine()) != null) {
				String[] command = line.strip().split(" ");
				switch (command[0]) {
					case "QUIT" -> {
						out.println("BYE");
						out.flush();
						return Nixl4jCli.EXIT_OK;
					}
					case "PRODUCER" -> {
						String producer = agent
							.loadRemoteMetadata(AgentMetadata.of(Base64.getDecoder().decode(command[1])));
						List<Long> bases = Arrays.stream(command[2].split(",")).map(Long::valueOf).toList();
						ByteBuffer crcs = ByteBuffer.wrap(Base64.getDecoder().decode(command[3]));
						puller = new KvBenchPuller(cache,
								new RemoteCacheHandle(producer, remote, bases, MemoryType.valueOf(command[4]),
										Long.parseLong(command[5])),
								crcs, this.blocks, this.inFlight, this.pullTimeout);
						out.println("CONNECTED");
					}
					case "RUN" -> {
						if (puller == null) {
							out.println("ERROR RUN before PRODUCER");
							break;
						}
						KvBenchPuller.Result result = puller.pull(command[1], Integer.parseInt(command[2]),
								(requestId) -> {
									synchronized (leasing) {
										out.println("LEASE " + requestId);
										out.flush();
										String answer = in.readLine();
										if (answer == null) {
											throw new IllegalStateException(
													"the input ended while waiting for the lease of " + requestId);
										}
										return answer.split(" ");
									}
								});
						out.println(result.toLine());
					}
					default -> out.println("ERROR unknown command '" + command[0] + "'");
				}
				out.flush();
			}
			return Nixl4jCli.EXIT_OK;
		}
	}

}
