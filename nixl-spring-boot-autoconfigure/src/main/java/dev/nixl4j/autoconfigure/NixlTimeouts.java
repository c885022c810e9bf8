package dev.nixl4j.autoconfigure;

import java.time.Duration;

import dev.nixl4j.Transfer;

/**
 * The default deadline of waits on transfers, for calls that take one
 * ({@link Transfer#await}, {@code KvConsumer.pull}, {@code KvProducer.push},
 * {@code Operation.await}) where the application has no better value.
 *
 * <p>
 * The auto-configured bean reads {@code nixl.transfer.timeout}. Where Resilience4j's time
 * limiter registry is present, the bean comes from the {@code nixl-transfer} time limiter
 * instead (see {@code dev.nixl4j.autoconfigure.resilience}).
 */
public interface NixlTimeouts {

	/**
	 * Returns the default deadline of a wait on a transfer.
	 * @return a positive duration
	 */
	Duration transferTimeout();

	/**
	 * Waits for a posted transfer with the {@link #transferTimeout() default deadline}.
	 * @param transfer the transfer
	 * @return the transfer
	 * @throws dev.nixl4j.NixlException {@link dev.nixl4j.NixlStatus#TIMEOUT} when the
	 * deadline passes (the transfer keeps running), or the failure of the transfer
	 */
	default Transfer await(Transfer transfer) {
		return transfer.await(transferTimeout());
	}

}
