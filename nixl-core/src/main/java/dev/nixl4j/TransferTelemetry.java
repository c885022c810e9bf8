package dev.nixl4j;

import java.time.Duration;

/**
 * NIXL's per-transfer telemetry (captured only when {@link AgentConfig#telemetry()} is
 * on).
 *
 * @param startTimeMicros start time in microseconds of a steady clock; compare across
 * transfers only
 * @param postDuration time spent posting
 * @param transferDuration time from post to completion
 * @param totalBytes bytes moved
 * @param descriptorCount descriptors in the request
 */
public record TransferTelemetry(long startTimeMicros, Duration postDuration, Duration transferDuration, long totalBytes,
		long descriptorCount) {
}
