package dev.nixl4j.cli;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashSet;
import java.util.Set;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.readiness.Patterns;

/**
 * {@code nixl4j bench-target}: the target agent of {@code bench --processes 2}, started by the
 * benchmark in a child JVM and driven over its standard streams. It registers one region,
 * prints {@code READY <base64 metadata> <address> <length>}, then answers {@code FILL <seed>
 * <length>} with {@code FILLED}, {@code CRC <length>} with {@code CRC <value>} and {@code QUIT}
 * with {@code BYE}. End of input also ends it.
 */
final class BenchTargetCommand implements Command {

	static final String SIZE = "--size";

	static final String NAME = "--name";

	@Override
	public String name() {
		return "bench-target";
	}

	@Override
	public String summary() {
		return "the target side of bench --processes 2 (started by bench)";
	}

	@Override
	public String help() {
		return """
				Usage: nixl4j bench-target --name NAME --size BYTES [agent options]

				The target agent of 'nixl4j bench --processes 2', which starts it; not meant to be
				run by hand. Protocol on stdin/stdout: it prints READY <base64 metadata> <address>
				<length>, then answers FILL <seed> <length>, CRC <length> and QUIT.

				""" + AgentOptions.HELP;
	}

	@Override
	public Set<String> valuedOptions() {
		Set<String> options = new HashSet<>(AgentOptions.NAMES);
		options.add(SIZE);
		options.add(NAME);
		return options;
	}

	@Override
	public Set<String> flagOptions() {
		return Set.of();
	}

	@Override
	public int run(Arguments arguments, PrintStream out) throws Exception {
		long size = arguments.bytes(SIZE, 64 << 20);
		String name = arguments.value(NAME, "nixl4j-bench-target-" + ProcessHandle.current().pid());
		try (Arena arena = Arena.ofShared(); NixlAgent agent = NixlAgent.create(AgentOptions.config(arguments, name))) {
			MemorySegment region = arena.allocate(size, 4096);
			Patterns.fill(region, 0);
			agent.register(region);
			out.println("READY " + Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()) + " "
					+ region.address() + " " + size);
			out.flush();
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null) {
				String[] command = line.strip().split(" ");
				switch (command[0]) {
					case "FILL" -> {
						Patterns.fill(region.asSlice(0, Long.parseLong(command[2])), Long.parseLong(command[1]));
						out.println("FILLED");
					}
					case "CRC" -> out.println("CRC " + Patterns.crc(region.asSlice(0, Long.parseLong(command[1]))));
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

}
