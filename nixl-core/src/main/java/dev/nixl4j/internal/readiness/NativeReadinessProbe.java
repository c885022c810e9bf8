package dev.nixl4j.internal.readiness;

import java.util.Set;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.MemoryType;
import dev.nixl4j.readiness.ReadinessProbe;
import dev.nixl4j.readiness.ReadinessReport;

/**
 * The readiness check of native NIXL, as {@link ReadinessReport#check} runs it.
 * Registered in {@code META-INF/services/dev.nixl4j.readiness.ReadinessProbe}.
 */
public final class NativeReadinessProbe implements ReadinessProbe {

	/** Creates the probe; {@link java.util.ServiceLoader} calls it. */
	public NativeReadinessProbe() {
	}

	@Override
	public ReadinessReport check(AgentConfig config, Set<MemoryType> memoryTypes) {
		return new ReadinessCheck(config, memoryTypes).run();
	}

}
