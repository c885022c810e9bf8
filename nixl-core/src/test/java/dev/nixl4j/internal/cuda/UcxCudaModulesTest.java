package dev.nixl4j.internal.cuda;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import dev.nixl4j.cuda.UcxCudaSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The check of UCX's CUDA modules beside a NIXL library, over layouts made for each test
 * in the shape of NIXL's wheels.
 */
class UcxCudaModulesTest {

	@TempDir
	Path root;

	@Test
	void noModulesIsSaidInOneLine() throws IOException {
		Path capi = capi();
		UcxCudaSupport support = UcxCudaModules.check(capi);
		assertThat(support.loadable()).isFalse();
		assertThat(support.modules()).isEmpty();
		assertThat(support.summary()).startsWith("not loadable (no UCX CUDA modules").doesNotContain("\n");
	}

	@Test
	void modulesThatDoNotLoadAreReportedWithWhatIsMissing() throws IOException {
		Path capi = capi();
		Path ucx = Files.createDirectories(this.root.resolve("nixl_cu12.libs/ucx"));
		Files.writeString(ucx.resolve("libuct_cuda.so.0.0.0"), "not an ELF file");
		Files.writeString(ucx.resolve("libucm_cuda.so.0.0.0"), "not an ELF file");
		Files.writeString(ucx.resolve("libuct_ib.so.0.0.0"), "not a CUDA module");
		UcxCudaSupport support = UcxCudaModules.check(capi);
		assertThat(support.modules()).extracting((module) -> module.getFileName().toString())
			.containsExactly("libucm_cuda.so.0.0.0", "libuct_cuda.so.0.0.0");
		assertThat(support.loadable()).isFalse();
		assertThat(support.problem()).contains("libuct_cuda.so.0.0.0", "libucm_cuda.so.0.0.0");
		if (!support.missing().isEmpty()) {
			assertThat(support.summary()).startsWith("not loadable (").endsWith(" missing)");
		}
	}

	private Path capi() throws IOException {
		Path lib = Files.createDirectories(this.root.resolve("lib"));
		return Files.writeString(lib.resolve("libnixl_capi.so"), "");
	}

}
