package dev.nixl4j.cuda;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * A failed call into the CUDA runtime, or CUDA not being there to call. The
 * {@link #status()} says what kind of failure it is:
 * <ul>
 * <li>{@link NixlStatus#LIBRARY_UNAVAILABLE}: no loadable {@code libcudart} was found;
 * the message lists every place tried and why each was refused;
 * <li>{@link NixlStatus#NATIVE_ACCESS_DENIED}: the JVM denies nixl4j native access;
 * <li>{@link NixlStatus#UNAVAILABLE}: the runtime loaded but there is no usable device
 * (no GPU, or no driver, or a driver older than the runtime);
 * <li>{@link NixlStatus#ERROR_INVALID_PARAM}: CUDA refused an argument (a device ordinal
 * out of range, a bad value);
 * <li>{@link NixlStatus#NOT_SUPPORTED}: the loaded runtime does not export a function
 * nixl4j needs;
 * <li>{@link NixlStatus#ERROR_BACKEND}: any other CUDA error, for example out of device
 * memory.
 * </ul>
 * Where CUDA returned an error code, {@link #cudaError()} is that {@code cudaError_t}.
 */
public class CudaException extends NixlException {

	private static final long serialVersionUID = 1L;

	/** {@link #cudaError()} of a failure that no CUDA call returned. */
	public static final int NO_CUDA_ERROR = -1;

	private final int cudaError;

	/**
	 * Creates an exception.
	 * @param status the kind of failure
	 * @param operation the CUDA function, or what nixl4j was doing (for example
	 * {@code load_cudart})
	 * @param detail what went wrong, in words
	 * @param cudaError the {@code cudaError_t} returned, or {@link #NO_CUDA_ERROR}
	 * @param cause the underlying cause
	 */
	public CudaException(NixlStatus status, String operation, String detail, int cudaError, @Nullable Throwable cause) {
		super(status, operation, null, null, detail, cause);
		this.cudaError = cudaError;
	}

	/**
	 * Returns the {@code cudaError_t} the failed call returned.
	 * @return the error code, or {@link #NO_CUDA_ERROR} when no CUDA call failed
	 */
	public int cudaError() {
		return this.cudaError;
	}

}
