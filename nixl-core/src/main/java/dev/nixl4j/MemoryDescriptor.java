package dev.nixl4j;

import java.lang.foreign.MemorySegment;

/**
 * One contiguous piece of memory: an address, a length and a device id, as in NIXL's
 * {@code nixlBasicDesc}. For DRAM the device id is 0; for VRAM it is the CUDA device.
 *
 * @param address start address
 * @param length length in bytes, at least 1
 * @param deviceId device id (0 for host memory)
 */
public record MemoryDescriptor(long address, long length, long deviceId) {

	/**
	 * Validates the descriptor.
	 * @param address start address
	 * @param length length in bytes
	 * @param deviceId device id
	 */
	public MemoryDescriptor {
		if (address == 0) {
			throw new IllegalArgumentException("descriptor address must not be 0");
		}
		if (length <= 0) {
			throw new IllegalArgumentException("descriptor length must be positive, was " + length);
		}
		if (deviceId < 0) {
			throw new IllegalArgumentException("descriptor device id must not be negative, was " + deviceId);
		}
		if (address + length < address && address + length != 0) {
			throw new IllegalArgumentException("descriptor [address, address + " + length + ") wraps around");
		}
	}

	/**
	 * Describes a native memory segment (host memory, device 0).
	 * @param segment a native segment
	 * @return its descriptor
	 */
	public static MemoryDescriptor of(MemorySegment segment) {
		if (!segment.isNative()) {
			throw new IllegalArgumentException(
					"only native (off-heap) segments can be transferred, got a heap segment");
		}
		return new MemoryDescriptor(segment.address(), segment.byteSize(), 0);
	}

	/**
	 * Returns the first address past the end.
	 * @return {@code address + length}
	 */
	public long end() {
		return this.address + this.length;
	}

	/**
	 * Whether this descriptor lies entirely inside another one on the same device.
	 * @param outer the enclosing candidate
	 * @return {@code true} if {@code outer} contains this descriptor
	 */
	public boolean isInside(MemoryDescriptor outer) {
		return this.deviceId == outer.deviceId && Long.compareUnsigned(this.address, outer.address) >= 0
				&& Long.compareUnsigned(this.end(), outer.end()) <= 0
				&& Long.compareUnsigned(this.address, this.end()) < 0;
	}

	@Override
	public String toString() {
		return "MemoryDescriptor[0x" + Long.toHexString(this.address) + ", " + this.length + " bytes, device "
				+ this.deviceId + "]";
	}

}
