package dev.nixl4j.cuda;

import java.util.EnumSet;

import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link Cuda} where this host has it and where it does not: a report that never throws,
 * and one typed answer instead of a crash without CUDA.
 */
class CudaTest {

	@Test
	void theReportNeverThrowsAndSaysWhyCudaIsNotUsable() {
		CudaReport report = Cuda.report();
		assertThat(report.summary()).doesNotContain("\n");
		if (report.usable()) {
			assertThat(report.devices()).isNotEmpty();
			assertThat(report.library()).isNotNull();
			assertThat(report.runtimeVersion()).isPositive();
		}
		else {
			assertThat(report.problem()).isNotBlank();
			if (report.library() == null) {
				assertThat(report.attempts()).isNotEmpty();
				assertThat(report.summary()).startsWith("none: no CUDA runtime (libcudart) found");
			}
		}
	}

	@Test
	void withoutCudaEveryCallGivesOneTypedAnswer() {
		CudaReport report = Cuda.report();
		Assumptions.assumeFalse(report.usable(), "this host has a CUDA device: " + report.summary());
		CudaException failure = catchThrowableOfType(CudaException.class, () -> Cuda.allocate(0, 4096));
		assertThat(failure.status()).isIn(EnumSet.of(NixlStatus.LIBRARY_UNAVAILABLE, NixlStatus.UNAVAILABLE));
		assertThat(catchThrowableOfType(CudaException.class, Cuda::deviceCount).status()).isEqualTo(failure.status());
	}

	@Test
	void allocationArgumentsAreCheckedBeforeCuda() {
		assertThatIllegalArgumentException().isThrownBy(() -> Cuda.allocate(-1, 4096)).withMessageContaining("-1");
		assertThatIllegalArgumentException().isThrownBy(() -> Cuda.allocate(0, 0)).withMessageContaining("positive");
	}

	@Test
	void versionsAreFormattedAsCudaNamesThem() {
		assertThat(CudaReport.formatVersion(13000)).isEqualTo("13.0");
		assertThat(CudaReport.formatVersion(12080)).isEqualTo("12.8");
		assertThat(CudaReport.formatVersion(0)).isEqualTo("none");
	}

}
