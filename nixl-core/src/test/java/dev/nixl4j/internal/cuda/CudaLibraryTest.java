package dev.nixl4j.internal.cuda;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import dev.nixl4j.NixlStatus;
import dev.nixl4j.cuda.CudaException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The search for {@code libcudart}, over directory layouts made for each test: the order
 * of the places, and a clean typed failure for every kind of place that does not give the
 * CUDA runtime.
 */
class CudaLibraryTest {

	private static final String ABSENT = "libcudart-nixl4j-test-absent.so.99";

	@TempDir
	Path root;

	@Test
	void placesAreTriedInOrderPropertyPythonToolkitsLoader() {
		Path explicit = this.root.resolve("custom/libcudart.so.12");
		Path venv = this.root.resolve("venv/lib/python3.12/site-packages");
		Path system = this.root.resolve("usr/lib/python3/dist-packages");
		Path cudaHome = this.root.resolve("cuda-13.0");
		CudaLibrary.Search search = new CudaLibrary.Search(explicit, List.of(venv, system),
				List.of(new CudaLibrary.Toolkit("CUDA_HOME", cudaHome)), List.of("libcudart.so.13", "libcudart.so"));
		String arch = System.getProperty("os.arch").equals("aarch64") ? "sbsa" : "x86_64";
		assertThat(search.places())
			.extracting((place) -> place.label() + " " + place.name() + " "
					+ ((place.path() != null) ? this.root.relativize(place.path()) : "-"))
			.containsExactly("system property nixl.cuda.library libcudart.so.12 custom/libcudart.so.12",
					"Python environment " + venv + " (nvidia/cu13) libcudart.so.13 "
							+ "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13",
					"Python environment " + venv + " (nvidia/cuda_runtime) libcudart.so.12 "
							+ "venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12",
					"Python environment " + system + " (nvidia/cu13) libcudart.so.13 "
							+ "usr/lib/python3/dist-packages/nvidia/cu13/lib/libcudart.so.13",
					"Python environment " + system + " (nvidia/cuda_runtime) libcudart.so.12 "
							+ "usr/lib/python3/dist-packages/nvidia/cuda_runtime/lib/libcudart.so.12",
					"CUDA_HOME libcudart.so.13 cuda-13.0/lib64/libcudart.so.13",
					"CUDA_HOME libcudart.so.12 cuda-13.0/lib64/libcudart.so.12",
					"CUDA_HOME libcudart.so.13 cuda-13.0/targets/" + arch + "-linux/lib/libcudart.so.13",
					"CUDA_HOME libcudart.so.12 cuda-13.0/targets/" + arch + "-linux/lib/libcudart.so.12",
					"dynamic loader libcudart.so.13 -", "dynamic loader libcudart.so -");
	}

	@Test
	void aFileNamedLibcudartThatIsNotALibraryGivesATypedFailureNamingIt() throws IOException {
		Path sitePackages = this.root.resolve("venv/lib/python3.12/site-packages");
		Path fake = sitePackages.resolve("nvidia/cuda_runtime/lib/libcudart.so.12");
		Files.createDirectories(fake.getParent());
		Files.writeString(fake, "not an ELF file");
		CudaLibrary.Search search = new CudaLibrary.Search(null, List.of(sitePackages), List.of(), List.of(ABSENT));
		CudaException failure = catchThrowableOfType(CudaException.class, () -> CudaLibrary.load(search));
		assertThat(failure.status()).isEqualTo(NixlStatus.LIBRARY_UNAVAILABLE);
		assertThat(failure.cudaError()).isEqualTo(CudaException.NO_CUDA_ERROR);
		assertThat(failure.getMessage()).contains(fake + ": cannot be loaded")
			.contains(sitePackages.resolve("nvidia/cu13/lib/libcudart.so.13") + ": no such file")
			.contains("dynamic loader " + ABSENT + ": not on the loader's path")
			.contains("pip install nvidia-cuda-runtime");
	}

	@Test
	void aLibraryThatIsNotTheCudaRuntimeIsRefusedAndTheSearchGoesOn() {
		CudaLibrary.Search search = new CudaLibrary.Search(null, List.of(), List.of(), List.of("libm.so.6", ABSENT));
		CudaException failure = catchThrowableOfType(CudaException.class, () -> CudaLibrary.load(search));
		assertThat(failure.status()).isEqualTo(NixlStatus.LIBRARY_UNAVAILABLE);
		assertThat(failure.getMessage())
			.containsPattern(
					"dynamic loader libm\\.so\\.6 \\((ld\\.so\\.cache|system directory)\\) /\\S+/libm\\.so\\.6: "
							+ "not the CUDA runtime \\(no cudaGetDeviceCount\\)")
			.contains("dynamic loader " + ABSENT + ": not on the loader's path");
	}

	@Test
	void aMissingToolkitIsReportedFileByFile() {
		Path cudaHome = this.root.resolve("no-cuda-here");
		CudaLibrary.Search search = new CudaLibrary.Search(null, List.of(),
				List.of(new CudaLibrary.Toolkit("CUDA_HOME", cudaHome)), List.of());
		CudaException failure = catchThrowableOfType(CudaException.class, () -> CudaLibrary.load(search));
		assertThat(failure.getMessage()).contains(
				"CUDA_HOME " + cudaHome.resolve("lib64/libcudart.so.13") + ": no such file",
				"CUDA_HOME " + cudaHome.resolve("lib64/libcudart.so.12") + ": no such file");
	}

}
