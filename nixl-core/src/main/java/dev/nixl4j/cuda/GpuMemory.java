package dev.nixl4j.cuda;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

/**
 * Memory on a CUDA device, allocated by {@link Cuda#allocate(int, long)} and freed by
 * {@link #close()}. Java cannot read it: it reaches NIXL by address, as
 * {@link MemoryType#VRAM} with the device ordinal as device id ({@link #descriptors()}),
 * and host memory by copies ({@link #copyFrom(MemorySegment, long)},
 * {@link #copyTo(long, MemorySegment)}), which return once done.
 *
 * <p>
 * Deregister the memory from every agent before closing it. Methods called after
 * {@link #close()} throw a {@link NixlException} with {@link NixlStatus#CLOSED}.
 */
public final class GpuMemory implements AutoCloseable {

	private final Cuda.Binding binding;

	private final int device;

	private final long address;

	private final long byteSize;

	private volatile boolean closed;

	GpuMemory(Cuda.Binding binding, int device, long address, long byteSize) {
		this.binding = binding;
		this.device = device;
		this.address = address;
		this.byteSize = byteSize;
	}

	/**
	 * Returns the device the memory is on.
	 * @return the device ordinal
	 */
	public int device() {
		return this.device;
	}

	/**
	 * Returns the memory's device address.
	 * @return the address
	 */
	public long address() {
		return this.address;
	}

	/**
	 * Returns the memory's size.
	 * @return the size in bytes
	 */
	public long byteSize() {
		return this.byteSize;
	}

	/**
	 * Describes the whole memory for NIXL: its address, size and device.
	 * @return the descriptor
	 */
	public MemoryDescriptor descriptor() {
		return new MemoryDescriptor(this.address, this.byteSize, this.device);
	}

	/**
	 * Describes a part of the memory for NIXL.
	 * @param offset the offset of the part
	 * @param length its length
	 * @return the descriptor
	 */
	public MemoryDescriptor descriptor(long offset, long length) {
		checkRange(offset, length);
		return new MemoryDescriptor(this.address + offset, length, this.device);
	}

	/**
	 * Describes the whole memory as a {@link MemoryType#VRAM} list, as
	 * {@link dev.nixl4j.NixlAgent#register(DescriptorList)} takes it.
	 * @return the list
	 */
	public DescriptorList descriptors() {
		return DescriptorList.of(MemoryType.VRAM, descriptor());
	}

	/**
	 * Copies host memory into this memory ({@code cudaMemcpy}, host to device).
	 * @param source native host memory; all of it is copied
	 * @param offset where in this memory the copy goes
	 */
	public void copyFrom(MemorySegment source, long offset) {
		requireNative(source);
		checkRange(offset, source.byteSize());
		requireOpen();
		this.binding.memcpy(this.device, this.address + offset, source.address(), source.byteSize(),
				Cuda.CopyKind.HOST_TO_DEVICE);
	}

	/**
	 * Copies part of this memory into host memory ({@code cudaMemcpy}, device to host).
	 * @param offset where in this memory the copy starts
	 * @param destination native host memory; it is filled
	 */
	public void copyTo(long offset, MemorySegment destination) {
		requireNative(destination);
		checkRange(offset, destination.byteSize());
		requireOpen();
		this.binding.memcpy(this.device, destination.address(), this.address + offset, destination.byteSize(),
				Cuda.CopyKind.DEVICE_TO_HOST);
	}

	/**
	 * Copies from other device memory, on this device or another ({@code cudaMemcpy},
	 * device to device).
	 * @param source the memory to copy from
	 * @param sourceOffset where in it the copy starts
	 * @param offset where in this memory the copy goes
	 * @param length the number of bytes
	 */
	public void copyFrom(GpuMemory source, long sourceOffset, long offset, long length) {
		Objects.requireNonNull(source, "source");
		source.checkRange(sourceOffset, length);
		checkRange(offset, length);
		source.requireOpen();
		requireOpen();
		this.binding.memcpy(this.device, this.address + offset, source.address + sourceOffset, length,
				Cuda.CopyKind.DEVICE_TO_DEVICE);
	}

	/**
	 * Sets every byte of part of this memory to a value ({@code cudaMemset}).
	 * @param offset where the part starts
	 * @param length its length
	 * @param value the byte value
	 */
	public void fill(long offset, long length, byte value) {
		checkRange(offset, length);
		requireOpen();
		this.binding.memset(this.device, this.address + offset, value & 0xff, length);
	}

	/**
	 * Frees the memory ({@code cudaFree}). Closing again does nothing.
	 */
	@Override
	public void close() {
		synchronized (this) {
			if (this.closed) {
				return;
			}
			this.closed = true;
		}
		this.binding.free(this.device, this.address);
	}

	@Override
	public String toString() {
		return "GpuMemory[cuda:" + this.device + ", byteSize=" + this.byteSize + (this.closed ? ", closed" : "") + "]";
	}

	private void checkRange(long offset, long length) {
		if (offset < 0 || length < 0 || offset > this.byteSize - length) {
			throw new IndexOutOfBoundsException("range [" + offset + ", " + offset + " + " + length + ") is not inside "
					+ this.byteSize + " bytes of device memory");
		}
	}

	private void requireOpen() {
		if (this.closed) {
			throw new NixlException(NixlStatus.CLOSED, "gpu_memory", null, null, toString() + " was closed");
		}
	}

	private static void requireNative(MemorySegment segment) {
		if (!segment.isNative()) {
			throw new IllegalArgumentException(
					"host memory must be native (an Arena's segment), not a heap segment: CUDA copies by address");
		}
	}

}
