package dev.nixl4j.readiness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.MemoryType;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * The readiness report against native NIXL in this JVM: ready with UCX, and each way a
 * backend can fail to be ready.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReadinessReportTest {

	@BeforeAll
	static void requireNative() {
		NativeNixl.require();
	}

	@Test
	void ucxIsReadyAndTheLoopbackTransferIsVerified() {
		ReadinessReport report = ReadinessReport.check(AgentConfig.builder("doctor-ready").build());

		assertThat(report.readiness()).as(report.format()).isEqualTo(Readiness.READY);
		assertThat(report.isReady()).isTrue();
		assertThat(report.summary()).contains("[UCX]", "verified byte for byte");
		assertThat(report.evidence()).anySatisfy(line -> assertThat(line).startsWith("native access: enabled"))
			.anySatisfy(line -> assertThat(line).startsWith("library: ").contains("libnixl_capi.so", "(NIXL "))
			.anySatisfy(line -> assertThat(line).startsWith("plugins: ").contains("UCX"))
			.anySatisfy(line -> assertThat(line).startsWith("plugin UCX: default parameters").contains("DRAM"))
			.anySatisfy(line -> assertThat(line).startsWith("backend UCX created"))
			.anySatisfy(line -> assertThat(line).startsWith("loopback: WRITE of 65536 bytes")
				.contains("verified byte for byte", "notification delivered"))
			.anySatisfy(line -> assertThat(line).startsWith("loopback: READ of 65536 bytes")
				.contains("verified byte for byte"));
		assertThat(report.format()).startsWith("NIXL readiness: READY\n");
	}

	@Test
	void aPluginThatIsNotInstalledIsBackendNotReady() {
		ReadinessReport report = ReadinessReport
			.check(AgentConfig.builder("doctor-missing").backends(BackendConfig.of("NO_SUCH_PLUGIN")).build());

		assertThat(report.readiness()).as(report.format()).isEqualTo(Readiness.BACKEND_NOT_READY);
		assertThat(report.summary()).contains("'NO_SUCH_PLUGIN' is not installed", "libplugin_NO_SUCH_PLUGIN.so",
				"available: [", "UCX");
	}

	@Test
	void aPluginThatIsInstalledButNeedsCudaIsBackendNotReadyWithTheLoadersReason() {
		assumeFalse(Files.exists(Path.of("/dev/nvidiactl")), "a CUDA host may load GDS");

		ReadinessReport report = ReadinessReport
			.check(AgentConfig.builder("doctor-gds").backends(BackendConfig.of("GDS")).build());

		assertThat(report.readiness()).as(report.format()).isEqualTo(Readiness.BACKEND_NOT_READY);
		assertThat(report.summary()).contains("'GDS' is installed but cannot be loaded here",
				"cannot open shared object");
		assertThat(report.evidence()).anySatisfy(line -> assertThat(line).startsWith("plugins: ").contains("GDS"));
	}

	@Test
	void aMemoryTypeThatNoBackendSupportsIsBackendNotReady() {
		ReadinessReport report = ReadinessReport.check(AgentConfig.builder("doctor-block").build(),
				Set.of(MemoryType.DRAM, MemoryType.BLOCK));

		assertThat(report.readiness()).as(report.format()).isEqualTo(Readiness.BACKEND_NOT_READY);
		assertThat(report.summary()).contains("no configured backend supports BLOCK memory");
	}

	@Test
	void vramWithoutCudaIsEnvironmentNotReadySayingWhy() {
		CudaReport cuda = Cuda.report();
		assumeFalse(cuda.usable(), () -> "this host has a CUDA device: " + cuda.summary());
		ReadinessReport report = ReadinessReport.check(AgentConfig.builder("doctor-vram").build(),
				Set.of(MemoryType.DRAM, MemoryType.VRAM));

		assertThat(report.readiness()).as(report.format()).isEqualTo(Readiness.ENVIRONMENT_NOT_READY);
		assertThat(report.summary()).startsWith("VRAM was asked for, but CUDA is not usable here: ");
		assertThat(report.evidence()).anySatisfy(line -> assertThat(line).isEqualTo("cuda: " + cuda.summary()));
	}

}
