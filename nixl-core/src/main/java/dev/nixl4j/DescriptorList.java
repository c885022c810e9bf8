package dev.nixl4j;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * An ordered list of {@link MemoryDescriptor}s of one memory type, as in NIXL's
 * {@code nixl_xfer_dlist_t}. A transfer pairs the i-th local descriptor with the i-th
 * remote one, so both lists of a transfer must have the same count and matching lengths.
 *
 * @param memoryType the memory type of every descriptor
 * @param descriptors the descriptors, in order
 */
public record DescriptorList(MemoryType memoryType, List<MemoryDescriptor> descriptors) {

	/**
	 * Validates and copies the list.
	 * @param memoryType the memory type
	 * @param descriptors the descriptors
	 */
	public DescriptorList {
		descriptors = List.copyOf(descriptors);
		if (descriptors.isEmpty()) {
			throw new IllegalArgumentException("a descriptor list needs at least one descriptor");
		}
	}

	/**
	 * Describes native host-memory segments.
	 * @param segments native segments
	 * @return a DRAM descriptor list
	 */
	public static DescriptorList of(MemorySegment... segments) {
		return new DescriptorList(MemoryType.DRAM, Arrays.stream(segments).map(MemoryDescriptor::of).toList());
	}

	/**
	 * Builds a list from descriptors.
	 * @param memoryType the memory type
	 * @param descriptors the descriptors
	 * @return the list
	 */
	public static DescriptorList of(MemoryType memoryType, MemoryDescriptor... descriptors) {
		return new DescriptorList(memoryType, List.of(descriptors));
	}

	/**
	 * Returns the number of descriptors.
	 * @return the count
	 */
	public int size() {
		return this.descriptors.size();
	}

	/**
	 * Returns the descriptor at an index.
	 * @param index the index
	 * @return the descriptor
	 */
	public MemoryDescriptor get(int index) {
		return this.descriptors.get(index);
	}

	/**
	 * Returns the sum of all descriptor lengths.
	 * @return total bytes
	 */
	public long totalBytes() {
		long total = 0;
		for (MemoryDescriptor descriptor : this.descriptors) {
			total += descriptor.length();
		}
		return total;
	}

}
