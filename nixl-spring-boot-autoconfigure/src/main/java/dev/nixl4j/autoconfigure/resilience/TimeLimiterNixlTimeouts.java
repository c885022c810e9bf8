package dev.nixl4j.autoconfigure.resilience;

import java.time.Duration;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.autoconfigure.NixlTimeouts;
import io.github.resilience4j.timelimiter.TimeLimiter;

/**
 * {@link NixlTimeouts} from the
 * {@value NixlResilienceAutoConfiguration#TRANSFER_TIME_LIMITER} time limiter: its
 * {@code timeoutDuration} is the default deadline, and waits made through {@link #await}
 * are reported to it (success, failure, or timeout), so Resilience4j's
 * {@code resilience4j.timelimiter.calls} metric counts them.
 */
final class TimeLimiterNixlTimeouts implements NixlTimeouts {

	private final TimeLimiter timeLimiter;

	TimeLimiterNixlTimeouts(TimeLimiter timeLimiter) {
		this.timeLimiter = timeLimiter;
	}

	@Override
	public Duration transferTimeout() {
		return this.timeLimiter.getTimeLimiterConfig().getTimeoutDuration();
	}

	@Override
	public Transfer await(Transfer transfer) {
		try {
			Transfer done = transfer.await(transferTimeout());
			this.timeLimiter.onSuccess();
			return done;
		}
		catch (NixlException ex) {
			this.timeLimiter.onError((ex.status() == NixlStatus.TIMEOUT)
					? TimeLimiter.createdTimeoutExceptionWithName(this.timeLimiter.getName(), ex) : ex);
			throw ex;
		}
	}

	@Override
	public String toString() {
		return "NixlTimeouts(transfer " + transferTimeout() + " from time limiter '" + this.timeLimiter.getName()
				+ "')";
	}

}
