package dev.nixl4j.kv;

import java.util.List;
import java.util.Objects;

import dev.nixl4j.MemoryType;

/**
 * What a peer needs to address another worker's KV cache, learned once per worker (the
 * handshake of vLLM's connector): the agent that owns the cache, its layout and the base
 * address of each region. Block {@code b} of region {@code r} lies at
 * {@code regionBases.get(r) + b * layout.blockLength()}.
 *
 * <p>
 * Plain data, safe to log and to send in any encoding: the handle grants nothing by
 * itself; access needs the owner's NIXL metadata, which travels separately (a
 * {@link dev.nixl4j.metadata.MetadataExchange}).
 *
 * @param agentName the agent that registered the cache
 * @param layout the cache's layout
 * @param regionBases the base address of each region, in region order
 * @param memoryType where the regions live
 * @param deviceId the device of the regions (0 for host memory)
 */
public record RemoteCacheHandle(String agentName, KvCacheLayout layout, List<Long> regionBases, MemoryType memoryType,
		long deviceId) {

	/**
	 * Checks the handle.
	 * @param agentName owner
	 * @param layout layout
	 * @param regionBases base addresses
	 * @param memoryType memory type
	 * @param deviceId device id
	 * @throws IllegalArgumentException when the bases do not match the layout
	 */
	public RemoteCacheHandle {
		Objects.requireNonNull(agentName, "agentName");
		Objects.requireNonNull(layout, "layout");
		Objects.requireNonNull(memoryType, "memoryType");
		if (agentName.isBlank()) {
			throw new IllegalArgumentException("agentName must not be blank");
		}
		regionBases = List.copyOf(regionBases);
		if (regionBases.size() != layout.regionCount()) {
			throw new IllegalArgumentException("the layout has " + layout.regionCount() + " regions but "
					+ regionBases.size() + " base addresses were given");
		}
		for (int i = 0; i < regionBases.size(); i++) {
			long base = regionBases.get(i);
			if (base == 0) {
				throw new IllegalArgumentException("base address of region " + i + " is 0");
			}
			if (Long.compareUnsigned(base + layout.regionLength(), base) < 0) {
				throw new IllegalArgumentException("region " + i + " wraps around the address space");
			}
		}
		if (deviceId < 0) {
			throw new IllegalArgumentException("deviceId must not be negative, was " + deviceId);
		}
	}

	/**
	 * Returns the address of a block of a region.
	 * @param region the region
	 * @param blockId the block
	 * @return its first byte
	 */
	public long blockAddress(int region, int blockId) {
		Objects.checkIndex(blockId, this.layout.numBlocks());
		return this.regionBases.get(region) + blockId * this.layout.blockLength();
	}

}
