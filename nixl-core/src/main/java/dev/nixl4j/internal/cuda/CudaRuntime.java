package dev.nixl4j.internal.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

import dev.nixl4j.NixlStatus;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaException;

/**
 * The calls into the CUDA runtime that nixl4j makes, each turning a {@code cudaError_t}
 * other than {@code cudaSuccess} into a {@link CudaException} that names the function,
 * CUDA's error name and string. Every method loads the runtime first
 * ({@link CudaLibrary#load()}), so each may throw what that throws.
 *
 * <p>
 * The current device is a per-thread setting of the runtime: the methods that work on one
 * device take its ordinal and set it on the calling thread first.
 */
public final class CudaRuntime {

	/** {@code cudaErrorInvalidValue}. */
	static final int ERROR_INVALID_VALUE = 1;

	/** {@code cudaErrorInsufficientDriver}. */
	static final int ERROR_INSUFFICIENT_DRIVER = 35;

	/** {@code cudaErrorNoDevice}. */
	static final int ERROR_NO_DEVICE = 100;

	/** {@code cudaErrorInvalidDevice}. */
	static final int ERROR_INVALID_DEVICE = 101;

	/** {@code cudaDevAttrComputeCapabilityMajor}. */
	private static final int ATTRIBUTE_CC_MAJOR = 75;

	/** {@code cudaDevAttrComputeCapabilityMinor}. */
	private static final int ATTRIBUTE_CC_MINOR = 76;

	/**
	 * {@code cudaDeviceProp} is about 1 KiB in CUDA 12 and 13; room to spare for larger
	 * versions.
	 */
	private static final long DEVICE_PROP_BYTES = 4096;

	/**
	 * Offset of {@code totalGlobalMem} in {@code cudaDeviceProp}: after
	 * {@code char name[256]}, {@code cudaUUID_t uuid} (16), {@code char luid[8]},
	 * {@code unsigned luidDeviceNodeMask} and padding, the same in CUDA 11, 12 and 13.
	 */
	private static final long TOTAL_GLOBAL_MEM_OFFSET = 288;

	private CudaRuntime() {
	}

	/**
	 * Returns the number of CUDA devices.
	 * @return the count, at least 1
	 * @throws CudaException {@link NixlStatus#UNAVAILABLE} when there is no device or no
	 * usable driver
	 */
	public static int deviceCount() {
		CudaLibrary.load();
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment count = arena.allocate(ValueLayout.JAVA_INT);
			check((int) Cudart.GET_DEVICE_COUNT.invokeExact(count), "cudaGetDeviceCount");
			return count.get(ValueLayout.JAVA_INT, 0);
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected("cudaGetDeviceCount", ex);
		}
	}

	/**
	 * Returns the driver's CUDA version, as CUDA encodes it ({@code 1000 * major + 10 *
	 * minor}).
	 * @return the version, or 0 when no driver is installed
	 */
	public static int driverVersion() {
		CudaLibrary.load();
		return version(Cudart.DRIVER_GET_VERSION, "cudaDriverGetVersion");
	}

	/**
	 * Returns the runtime's CUDA version ({@code 1000 * major + 10 * minor}).
	 * @return the version
	 */
	public static int runtimeVersion() {
		CudaLibrary.load();
		return version(Cudart.RUNTIME_GET_VERSION, "cudaRuntimeGetVersion");
	}

	/**
	 * Makes a device current on the calling thread.
	 * @param device the device ordinal
	 */
	public static void setDevice(int device) {
		CudaLibrary.load();
		try {
			check((int) Cudart.SET_DEVICE.invokeExact(device), "cudaSetDevice");
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected("cudaSetDevice", ex);
		}
	}

	/**
	 * Returns the device current on the calling thread.
	 * @return the device ordinal
	 */
	public static int currentDevice() {
		CudaLibrary.load();
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment device = arena.allocate(ValueLayout.JAVA_INT);
			check((int) Cudart.GET_DEVICE.invokeExact(device), "cudaGetDevice");
			return device.get(ValueLayout.JAVA_INT, 0);
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected("cudaGetDevice", ex);
		}
	}

	/**
	 * Allocates device memory on a device.
	 * @param device the device ordinal
	 * @param byteSize the size in bytes, positive
	 * @return the device address
	 */
	public static long malloc(int device, long byteSize) {
		setDevice(device);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment pointer = arena.allocate(ValueLayout.ADDRESS);
			check((int) Cudart.MALLOC.invokeExact(pointer, byteSize), "cudaMalloc");
			return pointer.get(ValueLayout.ADDRESS, 0).address();
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected("cudaMalloc", ex);
		}
	}

	/**
	 * Frees device memory that {@link #malloc} returned.
	 * @param device the device it is on
	 * @param address the device address
	 */
	public static void free(int device, long address) {
		setDevice(device);
		try {
			check((int) Cudart.FREE.invokeExact(MemorySegment.ofAddress(address)), "cudaFree");
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected("cudaFree", ex);
		}
	}

	/**
	 * Copies memory and waits until the copy is done.
	 * @param device the device to make current
	 * @param destination the destination address
	 * @param source the source address
	 * @param byteSize the number of bytes
	 * @param kind the direction
	 */
	public static void memcpy(int device, long destination, long source, long byteSize, Cuda.CopyKind kind) {
		setDevice(device);
		try {
			check((int) Cudart.MEMCPY.invokeExact(MemorySegment.ofAddress(destination), MemorySegment.ofAddress(source),
					byteSize, kind.code()), "cudaMemcpy");
			// device-to-device copies may return before they are done
			check((int) Cudart.DEVICE_SYNCHRONIZE.invokeExact(), "cudaDeviceSynchronize");
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected("cudaMemcpy", ex);
		}
	}

	/**
	 * Sets device memory to a byte value and waits until it is done.
	 * @param device the device it is on
	 * @param address the device address
	 * @param value the byte value
	 * @param byteSize the number of bytes
	 */
	public static void memset(int device, long address, int value, long byteSize) {
		setDevice(device);
		try {
			check((int) Cudart.MEMSET.invokeExact(MemorySegment.ofAddress(address), value, byteSize), "cudaMemset");
			check((int) Cudart.DEVICE_SYNCHRONIZE.invokeExact(), "cudaDeviceSynchronize");
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected("cudaMemset", ex);
		}
	}

	/**
	 * Waits for all work on a device.
	 * @param device the device
	 */
	public static void synchronize(int device) {
		setDevice(device);
		try {
			check((int) Cudart.DEVICE_SYNCHRONIZE.invokeExact(), "cudaDeviceSynchronize");
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected("cudaDeviceSynchronize", ex);
		}
	}

	/**
	 * Describes a device: its name, memory and compute capability.
	 * @param device the device ordinal
	 * @return the description
	 */
	public static DeviceProperties properties(int device) {
		CudaLibrary.load();
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment properties = arena.allocate(DEVICE_PROP_BYTES, 8);
			int rc = Cudart.exports("cudaGetDeviceProperties_v2")
					? (int) Cudart.GET_DEVICE_PROPERTIES_V2.invokeExact(properties, device)
					: (int) Cudart.GET_DEVICE_PROPERTIES.invokeExact(properties, device);
			check(rc, "cudaGetDeviceProperties");
			String name = properties.getString(0, StandardCharsets.UTF_8);
			long totalMemory = properties.get(ValueLayout.JAVA_LONG, TOTAL_GLOBAL_MEM_OFFSET);
			MemorySegment value = arena.allocate(ValueLayout.JAVA_INT);
			check((int) Cudart.DEVICE_GET_ATTRIBUTE.invokeExact(value, ATTRIBUTE_CC_MAJOR, device),
					"cudaDeviceGetAttribute");
			int major = value.get(ValueLayout.JAVA_INT, 0);
			check((int) Cudart.DEVICE_GET_ATTRIBUTE.invokeExact(value, ATTRIBUTE_CC_MINOR, device),
					"cudaDeviceGetAttribute");
			int minor = value.get(ValueLayout.JAVA_INT, 0);
			return new DeviceProperties(device, name, totalMemory, major, minor);
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected("cudaGetDeviceProperties", ex);
		}
	}

	/**
	 * What {@link #properties} reads of a device.
	 *
	 * @param ordinal the device ordinal
	 * @param name the device's name, for example {@code NVIDIA H100 80GB HBM3}
	 * @param totalMemory its global memory in bytes
	 * @param computeMajor compute capability, major
	 * @param computeMinor compute capability, minor
	 */
	public record DeviceProperties(int ordinal, String name, long totalMemory, int computeMajor, int computeMinor) {
	}

	private static int version(MethodHandle handle, String function) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment version = arena.allocate(ValueLayout.JAVA_INT);
			check((int) handle.invokeExact(version), function);
			return version.get(ValueLayout.JAVA_INT, 0);
		}
		catch (CudaException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unexpected(function, ex);
		}
	}

	/**
	 * Turns a {@code cudaError_t} other than {@code cudaSuccess} into a
	 * {@link CudaException}.
	 * @param rc what the function returned
	 * @param function the function
	 */
	static void check(int rc, String function) {
		if (rc == 0) {
			return;
		}
		NixlStatus status = switch (rc) {
			case ERROR_NO_DEVICE, ERROR_INSUFFICIENT_DRIVER -> NixlStatus.UNAVAILABLE;
			case ERROR_INVALID_VALUE, ERROR_INVALID_DEVICE -> NixlStatus.ERROR_INVALID_PARAM;
			default -> NixlStatus.ERROR_BACKEND;
		};
		throw new CudaException(status, function, "CUDA error " + rc + " " + describe(rc), rc, null);
	}

	/**
	 * Says what a {@code cudaError_t} means, in CUDA's words: its name and string.
	 * @param rc the error
	 * @return for example {@code cudaErrorNoDevice (no CUDA-capable device is detected)}
	 */
	static String describe(int rc) {
		try {
			MemorySegment name = (MemorySegment) Cudart.GET_ERROR_NAME.invokeExact(rc);
			MemorySegment text = (MemorySegment) Cudart.GET_ERROR_STRING.invokeExact(rc);
			return cString(name) + " (" + cString(text) + ")";
		}
		catch (Throwable ex) {
			return "(no description: " + ex.getMessage() + ")";
		}
	}

	private static String cString(MemorySegment pointer) {
		if (pointer.equals(MemorySegment.NULL)) {
			return "?";
		}
		return pointer.reinterpret(Integer.MAX_VALUE).getString(0, StandardCharsets.UTF_8);
	}

	private static CudaException unexpected(String function, Throwable ex) {
		return new CudaException(NixlStatus.ERROR_EXCEPTION, function, "the call failed in Java: " + ex,
				CudaException.NO_CUDA_ERROR, ex);
	}

}
