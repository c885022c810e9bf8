package dev.nixl4j.cli;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import dev.nixl4j.MemoryType;
import dev.nixl4j.readiness.ReadinessReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code nixl4j doctor}: the {@link ReadinessReport} of a configuration, with an exit
 * status that scripts and container probes can use.
 */
@Command(name = "doctor", description = { "Readiness report with evidence; exit status 0 only when READY.", "",
		"Checks, in order: native access, every place searched for libnixl_capi.so, the library's load, each backend "
				+ "(plugin installed, loadable, created, memory types), and a 64 KiB loopback WRITE (with a notification) "
				+ "and READ between two agents, verified byte for byte. Prints READY, ENVIRONMENT_NOT_READY or "
				+ "BACKEND_NOT_READY with a summary and the evidence, then what was found of CUDA (devices, driver and "
				+ "runtime versions, where libcudart came from, or why none) and whether UCX's CUDA transports load; "
				+ "with --memory-type VRAM, CUDA must be usable (else ENVIRONMENT_NOT_READY) and UCX's CUDA transports must "
				+ "load (else BACKEND_NOT_READY)." },
		exitCodeList = { "0:READY", "2:usage error", "3:ENVIRONMENT_NOT_READY", "4:BACKEND_NOT_READY" })
final class DoctorCommand extends Subcommand {

	@Option(names = "--memory-type", paramLabel = "TYPE", description = "a memory type the backends must support "
			+ "(repeatable; default DRAM): DRAM, VRAM, BLOCK, OBJECT, FILE")
	private List<MemoryType> memoryTypes = new ArrayList<>();

	@Mixin
	private AgentOptions agentOptions = new AgentOptions();

	@Override
	public Integer call() {
		Set<MemoryType> required = this.memoryTypes.isEmpty() ? EnumSet.of(MemoryType.DRAM)
				: EnumSet.copyOf(this.memoryTypes);
		ReadinessReport report = ReadinessReport.check(this.agentOptions.config("nixl4j"), required);
		out().print(report.format());
		CudaLines.print(out());
		return switch (report.readiness()) {
			case READY -> Nixl4jCli.EXIT_OK;
			case ENVIRONMENT_NOT_READY -> Nixl4jCli.EXIT_ENVIRONMENT_NOT_READY;
			case BACKEND_NOT_READY -> Nixl4jCli.EXIT_BACKEND_NOT_READY;
		};
	}

}
