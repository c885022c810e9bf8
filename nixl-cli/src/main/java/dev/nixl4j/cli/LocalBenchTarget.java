package dev.nixl4j.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.readiness.Patterns;

/**
 * A benchmark target in this JVM ({@code --processes 1}).
 */
final class LocalBenchTarget implements BenchTarget {

	private final Arena arena = Arena.ofShared();

	private final NixlAgent agent;

	private final MemorySegment region;

	/**
	 * Creates the target agent and registers its region.
	 * @param config the agent configuration
	 * @param size bytes to register
	 */
	LocalBenchTarget(AgentConfig config, long size) {
		this.agent = NixlAgent.create(config);
		this.region = this.arena.allocate(size, 4096);
		Patterns.fill(this.region, 0);
		this.agent.register(this.region);
	}

	@Override
	public String name() {
		return this.agent.name();
	}

	@Override
	public AgentMetadata metadata() {
		return this.agent.localMetadata();
	}

	@Override
	public MemoryDescriptor region() {
		return MemoryDescriptor.of(this.region);
	}

	@Override
	public void fill(long seed, long length) {
		Patterns.fill(this.region.asSlice(0, length), seed);
	}

	@Override
	public long crc(long length) {
		return Patterns.crc(this.region.asSlice(0, length));
	}

	@Override
	public void close() {
		this.agent.close();
		this.arena.close();
	}

}
