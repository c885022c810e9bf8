package dev.nixl4j.cuda;

import java.nio.file.Path;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * Whether UCX, as bundled with the NIXL library nixl4j loaded, can move GPU memory: its
 * CUDA modules ({@code libuct_cuda*.so}, {@code libucm_cuda.so}) are there and load. They
 * need the GPU driver's {@code libcuda.so.1} and {@code libnvidia-ml.so.1} and the CUDA
 * runtime of NIXL's CUDA major version; without them UCX moves host memory only.
 *
 * @param modules the CUDA modules found beside NIXL's UCX, empty when none
 * @param loadable whether every module loaded
 * @param missing the libraries the modules need that the loader cannot find, for example
 * {@code libcuda.so.1}
 * @param problem why the modules were not checked or do not load, in one line, or
 * {@code null} when they load
 */
public record UcxCudaSupport(List<Path> modules, boolean loadable, List<String> missing, @Nullable String problem) {

	/**
	 * Creates the result of a check.
	 * @param modules the modules found
	 * @param loadable whether they all loaded
	 * @param missing the libraries missing
	 * @param problem why not, or {@code null}
	 */
	public UcxCudaSupport {
		modules = List.copyOf(modules);
		missing = List.copyOf(missing);
	}

	/**
	 * Says in one line whether UCX's CUDA transports load, for example
	 * {@code "not loadable (libcuda.so.1 missing)"}.
	 * @return the line
	 */
	public String summary() {
		if (this.loadable) {
			return "loadable (" + names() + ")";
		}
		if (!this.missing.isEmpty()) {
			return "not loadable (" + String.join(", ", this.missing) + " missing)";
		}
		return "not loadable (" + this.problem + ")";
	}

	private String names() {
		return String.join(", ", this.modules.stream().map((module) -> module.getFileName().toString()).toList());
	}

}
