package dev.nixl4j.cuda;

/**
 * A CUDA device of this host.
 *
 * @param ordinal the device ordinal, as {@code cuda:<ordinal>} names it and as NIXL's
 * descriptors carry it in their device id
 * @param name the device's name, for example {@code NVIDIA H100 80GB HBM3}
 * @param totalMemory its global memory in bytes
 * @param computeCapability its compute capability, for example {@code 9.0}
 */
public record CudaDevice(int ordinal, String name, long totalMemory, String computeCapability) {

	@Override
	public String toString() {
		return "cuda:" + this.ordinal + " " + this.name + " (" + gib(this.totalMemory) + " GiB, compute capability "
				+ this.computeCapability + ")";
	}

	private static String gib(long bytes) {
		return String.format(java.util.Locale.ROOT, "%.1f", bytes / (1024.0 * 1024 * 1024));
	}

}
