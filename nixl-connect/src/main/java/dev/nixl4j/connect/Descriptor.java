package dev.nixl4j.connect;

import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.Optional;

import dev.nixl4j.MemoryDescriptor;
import org.jspecify.annotations.Nullable;

/**
 * One contiguous piece of memory an operation moves: either a native
 * {@link MemorySegment} (host memory that Java allocated), or an address, a size and a
 * {@link Device} for memory the caller owns and vouches for (CUDA memory, or host memory
 * from another allocator).
 *
 * <p>
 * Descriptors in {@link RdmaMetadata} describe the peer's memory: they have no segment.
 */
public final class Descriptor {

	private final long address;

	private final long size;

	private final Device device;

	private final @Nullable MemorySegment segment;

	private Descriptor(long address, long size, Device device, @Nullable MemorySegment segment) {
		this.address = address;
		this.size = size;
		this.device = device;
		this.segment = segment;
	}

	/**
	 * Describes a native segment (host memory).
	 * @param segment a native segment of at least one byte
	 * @return the descriptor
	 * @throws IllegalArgumentException for a heap or empty segment
	 */
	public static Descriptor of(MemorySegment segment) {
		if (!segment.isNative()) {
			throw new IllegalArgumentException(
					"only native (off-heap) segments can be transferred, got a heap segment");
		}
		if (segment.byteSize() == 0) {
			throw new IllegalArgumentException("an empty segment cannot be transferred");
		}
		return new Descriptor(segment.address(), segment.byteSize(), Device.HOST, segment);
	}

	/**
	 * Describes memory by address.
	 * @param address the start address, not 0
	 * @param size the size in bytes, at least 1
	 * @param device where the memory lives
	 * @return the descriptor
	 * @throws IllegalArgumentException for address 0, a size below 1, or a range that
	 * wraps
	 */
	public static Descriptor of(long address, long size, Device device) {
		Objects.requireNonNull(device, "device");
		if (address == 0) {
			throw new IllegalArgumentException("descriptor address must not be 0");
		}
		if (size <= 0) {
			throw new IllegalArgumentException("descriptor size must be positive, was " + size);
		}
		if (Long.compareUnsigned(address + size, address) < 0 && address + size != 0) {
			throw new IllegalArgumentException("descriptor [address, address + " + size + ") wraps around");
		}
		return new Descriptor(address, size, device, null);
	}

	/**
	 * Returns the start address.
	 * @return the address
	 */
	public long address() {
		return this.address;
	}

	/**
	 * Returns the size.
	 * @return bytes
	 */
	public long size() {
		return this.size;
	}

	/**
	 * Returns where the memory lives.
	 * @return the device
	 */
	public Device device() {
		return this.device;
	}

	/**
	 * Returns the segment this descriptor was made from.
	 * @return the segment, or empty for a descriptor made from an address
	 */
	public Optional<MemorySegment> segment() {
		return Optional.ofNullable(this.segment);
	}

	/**
	 * Returns the same memory described by address only (what goes on the wire).
	 * @return a descriptor without segment
	 */
	public Descriptor withoutSegment() {
		return (this.segment == null) ? this : new Descriptor(this.address, this.size, this.device, null);
	}

	/**
	 * Returns NIXL's descriptor of this memory.
	 * @return the memory descriptor, with the device id
	 */
	public MemoryDescriptor toMemoryDescriptor() {
		return new MemoryDescriptor(this.address, this.size, this.device.id());
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof Descriptor that && this.address == that.address && this.size == that.size
				&& this.device.equals(that.device);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.address, this.size, this.device);
	}

	@Override
	public String toString() {
		return "Descriptor[0x" + Long.toHexString(this.address) + ", " + this.size + " bytes, " + this.device + "]";
	}

}
