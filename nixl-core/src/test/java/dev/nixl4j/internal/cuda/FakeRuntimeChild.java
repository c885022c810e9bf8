package dev.nixl4j.internal.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import dev.nixl4j.NixlException;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaException;
import dev.nixl4j.cuda.GpuMemory;

/**
 * Runs the public CUDA API in a fresh JVM (the runtime loads once per JVM) against
 * whatever {@code -Dnixl.cuda.library} names, and prints what happened, one fact a line.
 */
public final class FakeRuntimeChild {

	private FakeRuntimeChild() {
	}

	/**
	 * Runs the calls.
	 * @param args none
	 */
	public static void main(String[] args) {
		System.out.println("REPORT " + Cuda.report().summary());
		try {
			System.out.println("COUNT " + Cuda.deviceCount());
			System.out.println("DEVICES " + Cuda.devices());
		}
		catch (CudaException ex) {
			System.out.println("COUNT FAILED " + ex.status() + " " + ex.cudaError() + " " + ex.getMessage());
		}
		try (Arena arena = Arena.ofConfined(); GpuMemory memory = Cuda.allocate(0, 8192)) {
			MemorySegment source = arena.allocate(4096);
			for (int i = 0; i < 4096; i++) {
				source.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
			}
			memory.fill(0, 8192, (byte) 0x5A);
			memory.copyFrom(source, 4096);
			MemorySegment back = arena.allocate(8192);
			memory.copyTo(0, back);
			boolean filled = back.asSlice(0, 4096)
				.elements(ValueLayout.JAVA_BYTE)
				.allMatch((b) -> b.get(ValueLayout.JAVA_BYTE, 0) == 0x5A);
			System.out.println("ROUND TRIP " + filled + " " + (back.asSlice(4096).mismatch(source) == -1));
			System.out
				.println("DESCRIPTOR " + memory.descriptors().memoryType() + " " + memory.descriptor().deviceId());
		}
		catch (NixlException ex) {
			System.out.println("ALLOCATE FAILED " + ex.status() + " " + ex.getMessage());
		}
		for (int device : new int[] { 0, 1, 7 }) {
			try {
				Cuda.synchronize(device);
				System.out.println("SYNCHRONIZE " + device + " done");
			}
			catch (CudaException ex) {
				System.out.println("SYNCHRONIZE " + device + " FAILED " + ex.status() + " " + ex.cudaError() + " "
						+ ex.getMessage());
			}
		}
		try {
			Cuda.allocate(7, 4096).close();
		}
		catch (CudaException ex) {
			System.out.println("ORDINAL FAILED " + ex.status() + " " + ex.cudaError());
		}
	}

}
