package dev.nixl4j.internal.cuda;

import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.NixlStatus;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaDevice;
import dev.nixl4j.cuda.CudaException;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.cuda.UcxCudaSupport;
import org.jspecify.annotations.Nullable;

/**
 * The CUDA runtime binding behind {@link Cuda}: {@link CudaLibrary} and
 * {@link CudaRuntime}. Registered in {@code module-info.java} and
 * {@code META-INF/services}.
 */
public final class CudaBinding implements Cuda.Binding {

	/** Creates the binding; {@link java.util.ServiceLoader} calls it. */
	public CudaBinding() {
	}

	@Override
	public CudaReport report() {
		CudaLibrary library;
		try {
			library = CudaLibrary.load();
		}
		catch (CudaException ex) {
			List<String> attempts = CudaLibrary.failedAttempts();
			return new CudaReport(null, null, attempts, 0, 0, List.of(), (ex.status() == NixlStatus.LIBRARY_UNAVAILABLE)
					? "no CUDA runtime (libcudart) found (" + attempts.size() + " places tried)" : ex.getMessage());
		}
		int driver = 0;
		int runtime = 0;
		List<CudaDevice> devices = List.of();
		@Nullable String problem = null;
		try {
			driver = CudaRuntime.driverVersion();
			runtime = CudaRuntime.runtimeVersion();
			devices = devices();
		}
		catch (CudaException ex) {
			problem = ex.getMessage();
		}
		return new CudaReport(library.file(), library.source(), library.attempts(), driver, runtime, devices, problem);
	}

	@Override
	public UcxCudaSupport ucxCudaSupport() {
		return UcxCudaModules.check();
	}

	@Override
	public int deviceCount() {
		return CudaRuntime.deviceCount();
	}

	@Override
	public List<CudaDevice> devices() {
		int count = CudaRuntime.deviceCount();
		List<CudaDevice> devices = new ArrayList<>(count);
		for (int ordinal = 0; ordinal < count; ordinal++) {
			CudaRuntime.DeviceProperties properties = CudaRuntime.properties(ordinal);
			devices.add(new CudaDevice(ordinal, properties.name(), properties.totalMemory(),
					properties.computeMajor() + "." + properties.computeMinor()));
		}
		return devices;
	}

	@Override
	public long malloc(int device, long byteSize) {
		return CudaRuntime.malloc(device, byteSize);
	}

	@Override
	public void free(int device, long address) {
		CudaRuntime.free(device, address);
	}

	@Override
	public void memcpy(int device, long destination, long source, long byteSize, Cuda.CopyKind kind) {
		CudaRuntime.memcpy(device, destination, source, byteSize, kind);
	}

	@Override
	public void memset(int device, long address, int value, long byteSize) {
		CudaRuntime.memset(device, address, value, byteSize);
	}

	@Override
	public void synchronize(int device) {
		CudaRuntime.synchronize(device);
	}

}
