package dev.nixl4j.cli;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;

/**
 * A benchmark target in this JVM ({@code --processes 1}).
 */
final class LocalBenchTarget implements BenchTarget {

	private final NixlAgent agent;

	private final BenchMemory region;

	/**
	 * Creates the target agent and registers its region.
	 * @param config the agent configuration
	 * @param size bytes to register
	 * @param memory where they lie
	 */
	LocalBenchTarget(AgentConfig config, long size, BenchMemory.Kind memory) {
		this.region = BenchMemory.allocate(memory, size, false);
		try {
			this.agent = NixlAgent.create(config);
		}
		catch (RuntimeException ex) {
			this.region.close();
			throw ex;
		}
		try {
			this.region.register(this.agent);
		}
		catch (RuntimeException ex) {
			close();
			throw ex;
		}
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
		return this.region.region();
	}

	@Override
	public MemoryType type() {
		return this.region.type();
	}

	@Override
	public void fill(long seed, long length) {
		this.region.fill(seed, length);
	}

	@Override
	public long crc(long length) {
		return this.region.crc(length);
	}

	@Override
	public void close() {
		this.agent.close();
		this.region.close();
	}

}
