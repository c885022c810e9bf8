package dev.nixl4j.cli;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;

/**
 * A benchmark target in a child JVM ({@code --processes 2}), which runs
 * {@link BenchTargetCommand}; the target's metadata comes back over the child's standard
 * output.
 */
final class ChildBenchTarget implements BenchTarget {

	private static final int START_SECONDS = 120;

	private static final int ANSWER_SECONDS = 60;

	private final ChildJvm child;

	private final String name;

	private final AgentMetadata metadata;

	private final MemoryDescriptor region;

	private final MemoryType type;

	/**
	 * Starts the child and waits until its agent is ready.
	 * @param name the target agent's name
	 * @param size bytes it registers
	 * @param memory where they lie
	 * @param agentOptions the agent options, as command line tokens
	 * @throws IOException when the child cannot start
	 */
	ChildBenchTarget(String name, long size, BenchMemory.Kind memory, List<String> agentOptions) throws IOException {
		List<String> arguments = new ArrayList<>(List.of("bench-target", "--name", name, "--size", Long.toString(size),
				"--memory", memory.name().toLowerCase(java.util.Locale.ROOT)));
		arguments.addAll(agentOptions);
		this.child = new ChildJvm(name, arguments);
		this.name = name;
		try {
			String[] ready = this.child.expect("READY", START_SECONDS);
			this.metadata = AgentMetadata.of(Base64.getDecoder().decode(ready[1]));
			this.region = new MemoryDescriptor(Long.parseLong(ready[2]), Long.parseLong(ready[3]),
					Long.parseLong(ready[5]));
			this.type = MemoryType.valueOf(ready[4]);
		}
		catch (RuntimeException ex) {
			this.child.kill();
			throw ex;
		}
	}

	@Override
	public String name() {
		return this.name;
	}

	@Override
	public AgentMetadata metadata() {
		return this.metadata;
	}

	@Override
	public MemoryDescriptor region() {
		return this.region;
	}

	@Override
	public MemoryType type() {
		return this.type;
	}

	@Override
	public void fill(long seed, long length) {
		this.child.send("FILL " + seed + " " + length);
		this.child.expect("FILLED", ANSWER_SECONDS);
	}

	@Override
	public long crc(long length) {
		this.child.send("CRC " + length);
		return Long.parseLong(this.child.expect("CRC", ANSWER_SECONDS)[1]);
	}

	@Override
	public void close() {
		this.child.close();
	}

}
