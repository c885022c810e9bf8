package dev.nixl4j.cuda;

import java.util.List;
import java.util.ServiceLoader;

import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * The CUDA devices of this host, through the CUDA runtime ({@code libcudart}), which
 * nixl4j finds and loads on first use (see {@link CudaReport#attempts()} for the places
 * tried). Without CUDA, or without a device, every method but {@link #report()} throws a
 * {@link CudaException} whose {@link CudaException#status() status} says which:
 * {@link NixlStatus#LIBRARY_UNAVAILABLE} (no runtime found, every place tried listed) or
 * {@link NixlStatus#UNAVAILABLE} (no device or no driver).
 *
 * <pre class="code">
 * try (GpuMemory kv = Cuda.allocate(0, 64 &lt;&lt; 20)) {
 *     kv.copyFrom(hostSegment, 0);
 *     agent.register(kv.descriptors());
 * }
 * </pre>
 */
public final class Cuda {

	private Cuda() {
	}

	/**
	 * Says what was found of CUDA, never throwing: the report of a host without CUDA says
	 * why in {@link CudaReport#problem()}.
	 * @return the report
	 */
	public static CudaReport report() {
		Binding binding = Holder.BINDING;
		if (binding == null) {
			return new CudaReport(null, null, List.of(), 0, 0, List.of(), NO_BINDING);
		}
		return binding.report();
	}

	/**
	 * Says whether UCX's CUDA transports, as bundled with the NIXL library nixl4j loaded,
	 * load on this host. Never throws.
	 * @return the result; when NIXL's library is not loaded yet, a result that says so
	 */
	public static UcxCudaSupport ucxCudaSupport() {
		Binding binding = Holder.BINDING;
		if (binding == null) {
			return new UcxCudaSupport(List.of(), false, List.of(), NO_BINDING);
		}
		return binding.ucxCudaSupport();
	}

	/**
	 * Returns the number of CUDA devices.
	 * @return the count, at least 1
	 * @throws CudaException when there is no CUDA runtime, driver or device
	 */
	public static int deviceCount() {
		return binding().deviceCount();
	}

	/**
	 * Describes the CUDA devices.
	 * @return the devices, by ordinal
	 * @throws CudaException when there is no CUDA runtime, driver or device
	 */
	public static List<CudaDevice> devices() {
		return binding().devices();
	}

	/**
	 * Allocates memory on a device ({@code cudaMalloc}).
	 * @param device the device ordinal
	 * @param byteSize the size in bytes, positive
	 * @return the memory, to close when done
	 * @throws CudaException when there is no CUDA runtime, driver or device, or the
	 * allocation fails
	 * @throws IllegalArgumentException when the size is not positive or the ordinal
	 * negative
	 */
	public static GpuMemory allocate(int device, long byteSize) {
		if (device < 0) {
			throw new IllegalArgumentException("device ordinal must not be negative, was " + device);
		}
		if (byteSize <= 0) {
			throw new IllegalArgumentException("byteSize must be positive, was " + byteSize);
		}
		Binding binding = binding();
		return new GpuMemory(binding, device, binding.malloc(device, byteSize), byteSize);
	}

	/**
	 * Waits until all work issued to a device is done ({@code cudaDeviceSynchronize} with
	 * the device current on the calling thread): the copies of {@link GpuMemory} already
	 * wait for themselves, so this is for timing work on the device, or before handing
	 * memory to another engine, such as NIXL's, that reads it outside CUDA's streams.
	 * @param device the device ordinal
	 * @throws CudaException when there is no CUDA runtime, driver or device, the ordinal
	 * is beyond the devices ({@link dev.nixl4j.NixlStatus#ERROR_INVALID_PARAM}), or work
	 * on the device failed (its error, for example an illegal address, surfaces here)
	 * @throws IllegalArgumentException when the ordinal is negative
	 */
	public static void synchronize(int device) {
		if (device < 0) {
			throw new IllegalArgumentException("device ordinal must not be negative, was " + device);
		}
		binding().synchronize(device);
	}

	private static final String NO_BINDING = "no CUDA binding is on the class path (nixl-core provides one)";

	private static Binding binding() {
		Binding binding = Holder.BINDING;
		if (binding == null) {
			throw new CudaException(NixlStatus.LIBRARY_UNAVAILABLE, "load_cudart", NO_BINDING,
					CudaException.NO_CUDA_ERROR, null);
		}
		return binding;
	}

	/**
	 * How {@code cudaMemcpy} moves bytes ({@code cudaMemcpyKind}).
	 */
	public enum CopyKind {

		/** {@code cudaMemcpyHostToDevice}. */
		HOST_TO_DEVICE(1),
		/** {@code cudaMemcpyDeviceToHost}. */
		DEVICE_TO_HOST(2),
		/** {@code cudaMemcpyDeviceToDevice}. */
		DEVICE_TO_DEVICE(3);

		private final int code;

		CopyKind(int code) {
			this.code = code;
		}

		/**
		 * Returns the {@code cudaMemcpyKind} value.
		 * @return the value
		 */
		public int code() {
			return this.code;
		}

	}

	/**
	 * Service-provider interface of the CUDA runtime binding behind {@link Cuda}, found
	 * with {@link ServiceLoader}: how the public API reaches the binding without
	 * depending on its package. nixl-core provides it; applications do not implement or
	 * call it. Every method but {@link #report()} throws {@link CudaException} on
	 * failure.
	 */
	public interface Binding {

		/**
		 * Says what was found of CUDA, never throwing.
		 * @return the report
		 */
		CudaReport report();

		/**
		 * Checks UCX's CUDA modules beside the loaded NIXL library, never throwing.
		 * @return the result
		 */
		UcxCudaSupport ucxCudaSupport();

		/**
		 * Returns the number of devices.
		 * @return the count
		 */
		int deviceCount();

		/**
		 * Describes the devices.
		 * @return the devices
		 */
		List<CudaDevice> devices();

		/**
		 * Allocates device memory.
		 * @param device the device ordinal
		 * @param byteSize the size
		 * @return the device address
		 */
		long malloc(int device, long byteSize);

		/**
		 * Frees device memory.
		 * @param device the device ordinal
		 * @param address the device address
		 */
		void free(int device, long address);

		/**
		 * Copies memory and waits until it is done.
		 * @param device the device to make current
		 * @param destination the destination address
		 * @param source the source address
		 * @param byteSize the number of bytes
		 * @param kind the direction
		 */
		void memcpy(int device, long destination, long source, long byteSize, CopyKind kind);

		/**
		 * Sets device memory to a byte value and waits until it is done.
		 * @param device the device
		 * @param address the device address
		 * @param value the byte value
		 * @param byteSize the number of bytes
		 */
		void memset(int device, long address, int value, long byteSize);

		/**
		 * Waits until all work issued to a device is done.
		 * @param device the device
		 */
		void synchronize(int device);

	}

	private static final class Holder {

		static final @Nullable Binding BINDING = ServiceLoader.load(Binding.class, Binding.class.getClassLoader())
			.findFirst()
			.orElse(null);

	}

}
