package dev.nixl4j.cli;

import java.io.PrintStream;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;

import dev.nixl4j.MemoryType;
import dev.nixl4j.readiness.ReadinessReport;

/**
 * {@code nixl4j doctor}: the {@link ReadinessReport} of a configuration, with an exit status
 * that scripts and container probes can use.
 */
final class DoctorCommand implements Command {

	private static final String MEMORY_TYPE = "--memory-type";

	@Override
	public String name() {
		return "doctor";
	}

	@Override
	public String summary() {
		return "readiness report with evidence; exit status 0 only when READY";
	}

	@Override
	public String help() {
		return """
				Usage: nixl4j doctor [agent options] [--memory-type TYPE]...

				Checks, in order: native access, every place searched for libnixl_capi.so, the
				library's load, each backend (plugin installed, loadable, created, memory types),
				and a 64 KiB loopback WRITE (with a notification) and READ between two agents,
				verified byte for byte. Prints READY, ENVIRONMENT_NOT_READY or BACKEND_NOT_READY
				with a summary and the evidence.

				  --memory-type TYPE  a memory type the backends must support (repeatable;
				                      default DRAM): DRAM, VRAM, BLOCK, OBJECT, FILE

				Exit status: 0 READY, 3 ENVIRONMENT_NOT_READY, 4 BACKEND_NOT_READY, 2 usage error.

				""" + AgentOptions.HELP;
	}

	@Override
	public Set<String> valuedOptions() {
		Set<String> options = new HashSet<>(AgentOptions.NAMES);
		options.add(MEMORY_TYPE);
		return options;
	}

	@Override
	public Set<String> flagOptions() {
		return Set.of();
	}

	@Override
	public int run(Arguments arguments, PrintStream out) {
		Set<MemoryType> memoryTypes = EnumSet.noneOf(MemoryType.class);
		for (String type : arguments.values(MEMORY_TYPE)) {
			try {
				memoryTypes.add(MemoryType.valueOf(type.toUpperCase(Locale.ROOT)));
			}
			catch (IllegalArgumentException ex) {
				throw new UsageException("unknown memory type '" + type + "'");
			}
		}
		if (memoryTypes.isEmpty()) {
			memoryTypes.add(MemoryType.DRAM);
		}
		ReadinessReport report = ReadinessReport.check(AgentOptions.config(arguments, "nixl4j"), memoryTypes);
		out.print(report.format());
		return switch (report.readiness()) {
			case READY -> Nixl4jCli.EXIT_OK;
			case ENVIRONMENT_NOT_READY -> Nixl4jCli.EXIT_ENVIRONMENT_NOT_READY;
			case BACKEND_NOT_READY -> Nixl4jCli.EXIT_BACKEND_NOT_READY;
		};
	}

}
