package dev.nixl4j.cli;

import java.io.PrintStream;
import java.util.Base64;

import dev.nixl4j.NixlAgent;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nixl4j bench-target}: the target agent of {@code bench --processes 2}, started
 * by the benchmark in a child JVM and driven over its standard streams. It registers one
 * region, prints {@code READY <base64 metadata> <address> <length>}, then answers
 * {@code FILL <seed>
 * <length>} with {@code FILLED}, {@code CRC <length>} with {@code CRC <value>} and
 * {@code QUIT} with {@code BYE}. End of input also ends it.
 */
@Command(name = "bench-target", hidden = true, description = {
		"The target agent of 'nixl4j bench --processes 2', which starts it; not meant to be run by hand. "
				+ "Protocol on stdin/stdout: it prints READY <base64 metadata> <address> <length> <memory type> <device>, then answers FILL "
				+ "<seed> <length>, CRC <length> and QUIT." },
		exitCodeList = { "0:ended on QUIT or at the end of its input", "1:a failure", "2:usage error" })
final class BenchTargetCommand extends Subcommand {

	@Option(names = "--name", paramLabel = "NAME", description = "the target agent's name")
	private @Nullable String name;

	@Option(names = "--size", paramLabel = "SIZE", converter = ByteSize.class, defaultValue = "64m",
			description = "bytes it registers (default ${DEFAULT-VALUE})")
	private long size;

	@Option(names = "--memory", paramLabel = "WHERE", defaultValue = "dram",
			description = "dram or vram (CUDA device 0) (default ${DEFAULT-VALUE})")
	private BenchMemory.Kind memory = BenchMemory.Kind.DRAM;

	@Mixin
	private AgentOptions agentOptions = new AgentOptions();

	@Override
	public Integer call() throws Exception {
		PrintStream out = out();
		String name = (this.name != null) ? this.name : "nixl4j-bench-target-" + ProcessHandle.current().pid();
		try (BenchMemory region = BenchMemory.allocate(this.memory, this.size, this.agentOptions.sameHost());
				NixlAgent agent = NixlAgent.create(this.agentOptions.config(name))) {
			region.register(agent);
			out.println("READY " + Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()) + " "
					+ region.region().address() + " " + this.size + " " + region.type() + " "
					+ region.region().deviceId());
			out.flush();
			return serveCommands(out, (command) -> {
				switch (command[0]) {
					case "FILL" -> {
						region.fill(Long.parseLong(command[1]), Long.parseLong(command[2]));
						out.println("FILLED");
					}
					case "CRC" -> out.println("CRC " + region.crc(Long.parseLong(command[1])));
					default -> {
						return false;
					}
				}
				return true;
			});
		}
	}

}
