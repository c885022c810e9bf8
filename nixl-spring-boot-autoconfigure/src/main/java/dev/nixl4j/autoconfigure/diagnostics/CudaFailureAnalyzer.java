package dev.nixl4j.autoconfigure.diagnostics;

import dev.nixl4j.NixlStatus;
import dev.nixl4j.cuda.CudaException;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@link CudaException} that stopped the application (a KV cache on a CUDA
 * device, {@code nixl.kv.device=cuda:<n>}), by its status: no CUDA runtime found, or no
 * usable device or driver, or another CUDA error.
 */
class CudaFailureAnalyzer extends AbstractFailureAnalyzer<CudaException> {

	private static final String HOST_MEMORY = "Or keep the KV cache in host memory: nixl.kv.device=cpu.";

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, CudaException cause) {
		if (cause.status() == NixlStatus.LIBRARY_UNAVAILABLE) {
			return new FailureAnalysis(
					"GPU memory was asked for, but the CUDA runtime (libcudart) is not available: "
							+ cause.getMessage(),
					"Install the CUDA runtime where nixl4j looks for it: pip install nvidia-cuda-runtime (CUDA 13) or "
							+ "nvidia-cuda-runtime-cu12 into the active Python environment, set CUDA_HOME to a CUDA "
							+ "toolkit, or name the file with -Dnixl.cuda.library. " + HOST_MEMORY,
					cause);
		}
		if (cause.status() == NixlStatus.UNAVAILABLE) {
			return new FailureAnalysis(
					"GPU memory was asked for, but CUDA has no usable device here: " + cause.getMessage(),
					"Run on a host with an NVIDIA GPU and its driver (in a container, with the GPU and the driver's "
							+ "libraries made visible, for example by the NVIDIA container toolkit). " + HOST_MEMORY,
					cause);
		}
		return new FailureAnalysis("A CUDA call failed: " + cause.getMessage(),
				"Check nixl.kv.device names a device of this host (nixl4j doctor lists them) and that it has the "
						+ "memory the KV cache needs. " + HOST_MEMORY,
				cause);
	}

}
