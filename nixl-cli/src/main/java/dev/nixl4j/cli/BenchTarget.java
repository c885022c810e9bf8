package dev.nixl4j.cli;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;

/**
 * The passive side of the benchmark: an agent with one registered region, in this JVM or
 * in a child process, that can refill and checksum its memory so that every run is
 * verified.
 */
interface BenchTarget extends AutoCloseable {

	/**
	 * Returns the target agent's name.
	 * @return the name
	 */
	String name();

	/**
	 * Returns the target agent's metadata, for the initiator to load.
	 * @return the metadata
	 */
	AgentMetadata metadata();

	/**
	 * Returns the registered region, in the target's address space.
	 * @return the region
	 */
	MemoryDescriptor region();

	/**
	 * Returns where the region lies.
	 * @return DRAM, or VRAM with {@code --memory vram}
	 */
	MemoryType type();

	/**
	 * Fills the start of the region with a pattern.
	 * @param seed the pattern's seed
	 * @param length bytes to fill
	 */
	void fill(long seed, long length);

	/**
	 * Checksums the start of the region.
	 * @param length bytes to checksum
	 * @return the CRC32C
	 */
	long crc(long length);

	/**
	 * Stops the target and releases its agent.
	 */
	@Override
	void close();

}
