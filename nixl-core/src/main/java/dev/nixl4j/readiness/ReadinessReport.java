package dev.nixl4j.readiness;

import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.MemoryType;

/**
 * The answer of the "doctor": whether NIXL can move data here for a given configuration,
 * a one-line summary, and the evidence behind it (library path and version, every place
 * searched, plugins with their parameters and memory types, the backends created, and a
 * loopback transfer between two agents verified byte for byte).
 *
 * <p>
 * The check works on real resources: it loads the native library, creates two short-lived
 * agents named after the configuration, registers 64 KiB of memory on each, and moves it
 * with a WRITE (carrying a notification) and a READ. It takes from milliseconds to a few
 * seconds; callers that poll (a health endpoint) should cache the result.
 *
 * @param readiness the classification
 * @param summary one line: what is ready, or what is wrong and how to fix it
 * @param evidence what was looked at, one finding per line, in the order checked
 */
public record ReadinessReport(Readiness readiness, String summary, List<String> evidence) {

	/**
	 * Copies the evidence.
	 * @param readiness the classification
	 * @param summary the summary
	 * @param evidence the evidence lines
	 */
	public ReadinessReport {
		evidence = List.copyOf(evidence);
	}

	/**
	 * Checks whether the backends of a configuration can move host memory (DRAM). The
	 * native library is searched and loaded as {@link dev.nixl4j.NixlAgent#create} would,
	 * with the configuration's library directory and native environment.
	 * @param config the configuration to check: its backends, their parameters, its
	 * progress settings and native environment
	 * @return the report; never throws for a failed check
	 */
	public static ReadinessReport check(AgentConfig config) {
		return check(config, Set.of(MemoryType.DRAM));
	}

	/**
	 * Checks a configuration and requires that its backends, together, register the given
	 * memory types. The loopback transfer always uses DRAM; other types are checked
	 * against what the backends declare.
	 * @param config the configuration to check
	 * @param memoryTypes memory types that must be supported
	 * @return the report; never throws for a failed check
	 */
	public static ReadinessReport check(AgentConfig config, Set<MemoryType> memoryTypes) {
		return Probe.INSTANCE.check(config, memoryTypes);
	}

	/** The check nixl-core provides, found once. */
	private static final class Probe {

		static final ReadinessProbe INSTANCE = ServiceLoader
			.load(ReadinessProbe.class, ReadinessProbe.class.getClassLoader())
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("no " + ReadinessProbe.class.getName() + " on the class path "
					+ "(META-INF/services of nixl-core is missing: a jar merged without its service files?)"));

	}

	/**
	 * Whether NIXL is ready.
	 * @return {@code true} for {@link Readiness#READY}
	 */
	public boolean isReady() {
		return this.readiness == Readiness.READY;
	}

	/**
	 * Formats the report for people: the classification and summary, then one evidence
	 * line per line.
	 * @return the text, ending with a line break
	 */
	public String format() {
		StringBuilder text = new StringBuilder("NIXL readiness: ").append(this.readiness).append('\n');
		text.append("  ").append(this.summary).append('\n');
		text.append("evidence:\n");
		for (String line : this.evidence) {
			text.append("  - ").append(line).append('\n');
		}
		return text.toString();
	}

}
