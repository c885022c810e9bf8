package dev.nixl4j.internal.cuda;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Objects;

import dev.nixl4j.NixlStatus;
import dev.nixl4j.cuda.CudaException;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Downcall handles for the functions of the CUDA runtime API that nixl4j uses, one per
 * function. They return a {@code cudaError_t} ({@code int}) unless noted.
 *
 * <p>
 * Initialised on first use, which {@link CudaRuntime} makes only after
 * {@link CudaLibrary#load()} succeeded. A function the loaded runtime does not export
 * breaks only the calls that need it: each call of its handle throws a new
 * {@link CudaException} with {@link NixlStatus#NOT_SUPPORTED} naming the function.
 */
final class Cudart {

	private static final Linker LINKER = Linker.nativeLinker();

	private static final CudaLibrary LIBRARY = Objects.requireNonNull(CudaLibrary.loadedLibrary(),
			"CudaLibrary.load must succeed first");

	private static final SymbolLookup LOOKUP = LIBRARY.lookup();

	private static final MethodHandle MISSING;

	static {
		try {
			MISSING = MethodHandles.lookup()
				.findStatic(Cudart.class, "missing",
						MethodType.methodType(CudaException.class, String.class, String.class));
		}
		catch (ReflectiveOperationException ex) {
			throw new ExceptionInInitializerError(ex);
		}
	}

	/** {@code cudaGetDeviceCount(int* count)}. */
	static final MethodHandle GET_DEVICE_COUNT = fn("cudaGetDeviceCount", ADDRESS);

	/** {@code cudaSetDevice(int device)}. */
	static final MethodHandle SET_DEVICE = fn("cudaSetDevice", JAVA_INT);

	/** {@code cudaGetDevice(int* device)}. */
	static final MethodHandle GET_DEVICE = fn("cudaGetDevice", ADDRESS);

	/** {@code cudaMalloc(void** pointer, size_t size)}. */
	static final MethodHandle MALLOC = fn("cudaMalloc", ADDRESS, JAVA_LONG);

	/** {@code cudaFree(void* pointer)}. */
	static final MethodHandle FREE = fn("cudaFree", ADDRESS);

	/**
	 * {@code cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind)}.
	 */
	static final MethodHandle MEMCPY = fn("cudaMemcpy", ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT);

	/** {@code cudaMemset(void* pointer, int value, size_t count)}. */
	static final MethodHandle MEMSET = fn("cudaMemset", ADDRESS, JAVA_INT, JAVA_LONG);

	/** {@code cudaDeviceSynchronize()}. */
	static final MethodHandle DEVICE_SYNCHRONIZE = fn("cudaDeviceSynchronize");

	/** {@code cudaDriverGetVersion(int* version)}. */
	static final MethodHandle DRIVER_GET_VERSION = fn("cudaDriverGetVersion", ADDRESS);

	/** {@code cudaRuntimeGetVersion(int* version)}. */
	static final MethodHandle RUNTIME_GET_VERSION = fn("cudaRuntimeGetVersion", ADDRESS);

	/**
	 * {@code cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device)}.
	 */
	static final MethodHandle DEVICE_GET_ATTRIBUTE = fn("cudaDeviceGetAttribute", ADDRESS, JAVA_INT, JAVA_INT);

	/**
	 * {@code cudaGetDeviceProperties_v2(cudaDeviceProp* properties, int device)}: the
	 * name CUDA 12's header maps {@code cudaGetDeviceProperties} to, and the one CUDA 13
	 * exports; CUDA 11's runtime has only the plain name
	 * ({@link #GET_DEVICE_PROPERTIES}).
	 */
	static final MethodHandle GET_DEVICE_PROPERTIES_V2 = fn("cudaGetDeviceProperties_v2", ADDRESS, JAVA_INT);

	/** {@code cudaGetDeviceProperties(cudaDeviceProp* properties, int device)}. */
	static final MethodHandle GET_DEVICE_PROPERTIES = fn("cudaGetDeviceProperties", ADDRESS, JAVA_INT);

	/** {@code const char* cudaGetErrorString(cudaError_t error)}. */
	static final MethodHandle GET_ERROR_STRING = bind("cudaGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));

	/** {@code const char* cudaGetErrorName(cudaError_t error)}. */
	static final MethodHandle GET_ERROR_NAME = bind("cudaGetErrorName", FunctionDescriptor.of(ADDRESS, JAVA_INT));

	private Cudart() {
	}

	/**
	 * Says whether the loaded runtime exports a function.
	 * @param name the function
	 * @return whether it does
	 */
	static boolean exports(String name) {
		return LOOKUP.find(name).isPresent();
	}

	private static MethodHandle fn(String name, MemoryLayout... arguments) {
		return bind(name, FunctionDescriptor.of(JAVA_INT, arguments));
	}

	private static MethodHandle bind(String name, FunctionDescriptor descriptor) {
		MemorySegment symbol = LOOKUP.find(name).orElse(null);
		if (symbol != null) {
			return LINKER.downcallHandle(symbol, descriptor);
		}
		MethodType type = descriptor.toMethodType();
		MethodHandle make = MethodHandles.insertArguments(MISSING, 0, name, LIBRARY.file());
		MethodHandle thrower = MethodHandles
			.foldArguments(MethodHandles.throwException(type.returnType(), CudaException.class), make);
		return MethodHandles.dropArguments(thrower, 0, type.parameterList());
	}

	private static CudaException missing(String function, String library) {
		return new CudaException(NixlStatus.NOT_SUPPORTED, function, library + " does not export " + function,
				CudaException.NO_CUDA_ERROR, null);
	}

}
