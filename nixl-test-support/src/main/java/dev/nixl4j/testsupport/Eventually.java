package dev.nixl4j.testsupport;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition that no event announces (for example NIXL forgetting a peer on
 * its own thread), checking it with a short backoff until a deadline.
 */
public final class Eventually {

	private Eventually() {
	}

	/**
	 * Returns once the condition holds; fails at the deadline.
	 * @param timeout the deadline
	 * @param what the condition, for the failure
	 * @param condition the condition
	 */
	public static void until(Duration timeout, String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		long pause = TimeUnit.MILLISECONDS.toNanos(5);
		while (!condition.getAsBoolean()) {
			long remaining = deadline - System.nanoTime();
			if (remaining <= 0) {
				throw new AssertionError("not true within " + timeout + ": " + what);
			}
			LockSupport.parkNanos(Math.min(pause, remaining));
			pause = Math.min(pause * 2, TimeUnit.MILLISECONDS.toNanos(100));
		}
	}

}
