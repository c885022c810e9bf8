package dev.nixl4j.resilience4j;

import java.time.Duration;
import java.util.Objects;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.SettingChecks;
import dev.nixl4j.Transfer;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.github.resilience4j.timelimiter.TimeLimiterConfig;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The default deadline of waits on transfers from the {@value #NAME} time limiter of the
 * {@link TimeLimiterRegistry}: its {@code timeoutDuration} is the deadline, and waits
 * made through {@link #await} are reported to it (success, failure, or timeout), so
 * Resilience4j's {@code resilience4j.timelimiter.calls} metric counts them.
 *
 * <p>
 * The time limiter is the registry's {@value #NAME} instance when it has one (with Spring
 * Boot: {@code resilience4j.timelimiter.instances.nixl-transfer}); otherwise it is
 * created from the registry's default configuration with {@code timeoutDuration} set to
 * the default the caller gives ({@link Builder#defaultTimeout}; the starter gives
 * {@code nixl.transfer.timeout}, so that adding Resilience4j does not change the
 * deadline). It is registered in the registry, where Resilience4j's metrics and endpoint
 * see it. Built with {@link #builder}.
 */
public final class TransferTimeLimiter {

	/** Name of the time limiter giving the default deadline of waits on transfers. */
	public static final String NAME = "nixl-transfer";

	private final TimeLimiter timeLimiter;

	private TransferTimeLimiter(TimeLimiter timeLimiter) {
		this.timeLimiter = timeLimiter;
	}

	/**
	 * Starts a transfer time limiter taken from a registry.
	 * @param registry the registry that holds (or will hold) the {@value #NAME} time
	 * limiter
	 * @return the builder
	 */
	public static Builder builder(TimeLimiterRegistry registry) {
		return new Builder(registry);
	}

	/**
	 * Returns the time limiter.
	 * @return the registered time limiter
	 */
	public TimeLimiter timeLimiter() {
		return this.timeLimiter;
	}

	/**
	 * Returns the default deadline of a wait on a transfer.
	 * @return the time limiter's {@code timeoutDuration}
	 */
	public Duration timeout() {
		return this.timeLimiter.getTimeLimiterConfig().getTimeoutDuration();
	}

	/**
	 * Waits for a posted transfer with the {@link #timeout() default deadline} and
	 * reports the wait to the time limiter.
	 * @param transfer the transfer
	 * @return the transfer
	 * @throws NixlException {@link NixlStatus#TIMEOUT} when the deadline passes (the
	 * transfer keeps running), or the failure of the transfer
	 */
	public Transfer await(Transfer transfer) {
		try {
			Transfer done = transfer.await(timeout());
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
		return "TransferTimeLimiter(" + this.timeLimiter.getName() + ")";
	}

	/**
	 * Builds a {@link TransferTimeLimiter}.
	 */
	public static final class Builder {

		private final TimeLimiterRegistry registry;

		private @Nullable Duration defaultTimeout;

		private Builder(TimeLimiterRegistry registry) {
			this.registry = Objects.requireNonNull(registry, "registry");
		}

		/**
		 * Sets {@code timeoutDuration} of a time limiter that the registry does not
		 * configure (default: that of the registry's default configuration).
		 * @param defaultTimeout the deadline, positive
		 * @return this builder
		 */
		public Builder defaultTimeout(Duration defaultTimeout) {
			this.defaultTimeout = SettingChecks.requirePositive(defaultTimeout, "defaultTimeout");
			return this;
		}

		/**
		 * Takes the {@value TransferTimeLimiter#NAME} time limiter from the registry,
		 * registering it if it is not configured.
		 * @return the time limiter
		 */
		public TransferTimeLimiter build() {
			Duration timeout = this.defaultTimeout;
			TimeLimiterConfig defaults = this.registry.getDefaultConfig();
			return new TransferTimeLimiter(this.registry.find(NAME)
				.orElseGet(() -> this.registry.timeLimiter(NAME, (timeout != null)
						? TimeLimiterConfig.from(defaults).timeoutDuration(timeout).build() : defaults)));
		}

	}

}
