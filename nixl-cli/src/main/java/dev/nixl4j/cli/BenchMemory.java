package dev.nixl4j.cli;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.ShareableMemory;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.cuda.GpuMemory;
import dev.nixl4j.readiness.Patterns;
import org.jspecify.annotations.Nullable;

/**
 * The memory one side of {@code bench} moves ({@code --memory}): host memory, or memory
 * of CUDA device 0 ({@code dev.nixl4j.cuda}) with a host copy of the same size through
 * which its pattern is written and its CRC32C read.
 */
final class BenchMemory implements AutoCloseable {

	private final Arena arena = Arena.ofShared();

	/** The memory moved (DRAM), or the host copy of the device memory (VRAM). */
	private final MemorySegment host;

	private final @Nullable GpuMemory device;

	private BenchMemory(Kind kind, long size, boolean shareable) {
		this.host = (shareable && kind == Kind.DRAM) ? ShareableMemory.allocate(this.arena, size)
				: this.arena.allocate(size, 4096);
		Patterns.fill(this.host, 0);
		if (kind == Kind.VRAM) {
			GpuMemory memory = Cuda.allocate(0, size);
			try {
				memory.copyFrom(this.host, 0);
			}
			catch (RuntimeException ex) {
				memory.close();
				this.arena.close();
				throw ex;
			}
			this.device = memory;
		}
		else {
			this.device = null;
		}
	}

	/**
	 * Allocates zeroed memory; to close after the agent it is registered with.
	 * @param kind where the memory lies
	 * @param size its size in bytes
	 * @param shareable whether host memory is allocated as {@link ShareableMemory} (the
	 * embedded engine's same-host path)
	 * @return the memory
	 * @throws dev.nixl4j.cuda.CudaException when device memory cannot be allocated
	 */
	static BenchMemory allocate(Kind kind, long size, boolean shareable) {
		return new BenchMemory(kind, size, shareable);
	}

	/**
	 * Registers the memory with an agent.
	 * @param agent the agent
	 */
	void register(NixlAgent agent) {
		if (this.device != null) {
			agent.register(this.device.descriptors());
		}
		else {
			agent.register(this.host);
		}
	}

	/**
	 * Says why device memory cannot be had here, or nothing when a CUDA device is found.
	 * @return what {@code dev.nixl4j.cuda} found instead of a device, or {@code null}
	 */
	static @Nullable String missingCuda() {
		CudaReport report = Cuda.report();
		return report.usable() ? null : report.summary();
	}

	MemoryType type() {
		return (this.device != null) ? MemoryType.VRAM : MemoryType.DRAM;
	}

	MemoryDescriptor region() {
		return (this.device != null) ? this.device.descriptor() : MemoryDescriptor.of(this.host);
	}

	/** Writes a pattern into the first {@code length} bytes. */
	void fill(long seed, long length) {
		MemorySegment slice = this.host.asSlice(0, length);
		Patterns.fill(slice, seed);
		if (this.device != null) {
			this.device.copyFrom(slice, 0);
		}
	}

	/** Returns the CRC32C of the first {@code length} bytes. */
	long crc(long length) {
		MemorySegment slice = this.host.asSlice(0, length);
		if (this.device != null) {
			this.device.copyTo(0, slice);
		}
		return Patterns.crc(slice);
	}

	@Override
	public void close() {
		if (this.device != null) {
			this.device.close();
		}
		this.arena.close();
	}

	/** Where {@code --memory} puts the memory. */
	enum Kind {

		/** Host memory. */
		DRAM,

		/** Memory of CUDA device 0. */
		VRAM

	}

}
