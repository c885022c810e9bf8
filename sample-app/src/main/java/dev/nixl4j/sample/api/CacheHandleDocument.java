package dev.nixl4j.sample.api;

import java.util.List;

import dev.nixl4j.MemoryType;
import dev.nixl4j.kv.RemoteCacheHandle;

/**
 * A producer's {@link RemoteCacheHandle} as JSON ({@code GET /kv/handle}): plain data
 * that grants nothing without the producer's NIXL metadata.
 *
 * @param agentName the producer's agent
 * @param layout its cache's layout
 * @param regionBases the base address of each region
 * @param memoryType where the regions live
 * @param deviceId their device
 */
public record CacheHandleDocument(String agentName, LayoutDocument layout, List<Long> regionBases,
		MemoryType memoryType, long deviceId) {

	/**
	 * Describes a handle.
	 * @param handle the handle
	 * @return its document
	 */
	public static CacheHandleDocument of(RemoteCacheHandle handle) {
		return new CacheHandleDocument(handle.agentName(), LayoutDocument.of(handle.layout()), handle.regionBases(),
				handle.memoryType(), handle.deviceId());
	}

	/**
	 * Builds the handle this document describes.
	 * @return the handle
	 * @throws IllegalArgumentException when the values do not make a handle
	 */
	public RemoteCacheHandle toHandle() {
		return new RemoteCacheHandle(this.agentName, this.layout.toLayout(), this.regionBases, this.memoryType,
				this.deviceId);
	}

}
