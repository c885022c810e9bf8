package dev.nixl4j.autoconfigure.resilience;

import java.time.Duration;

import dev.nixl4j.Transfer;
import dev.nixl4j.autoconfigure.NixlTimeouts;
import dev.nixl4j.resilience4j.TransferTimeLimiter;

/**
 * {@link NixlTimeouts} from nixl-resilience4j's {@link TransferTimeLimiter}: its
 * {@code timeoutDuration} is the default deadline, and waits made through {@link #await}
 * are reported to it.
 */
final class TimeLimiterNixlTimeouts implements NixlTimeouts {

	private final TransferTimeLimiter timeLimiter;

	TimeLimiterNixlTimeouts(TransferTimeLimiter timeLimiter) {
		this.timeLimiter = timeLimiter;
	}

	@Override
	public Duration transferTimeout() {
		return this.timeLimiter.timeout();
	}

	@Override
	public Transfer await(Transfer transfer) {
		return this.timeLimiter.await(transfer);
	}

	@Override
	public String toString() {
		return "NixlTimeouts(transfer " + transferTimeout() + " from time limiter '"
				+ this.timeLimiter.timeLimiter().getName() + "')";
	}

}
