package dev.nixl4j;

/**
 * A standing claim on the notifications one {@link NotificationMatcher} accepts, made
 * with {@link NixlAgent#subscribeNotifications}. While it is open, every received
 * notification that its matcher accepts goes to its handler, before any waiter and before
 * the mailbox, so it never waits behind unclaimed messages. Closing it stops the
 * deliveries; closing twice is harmless.
 */
public interface NotificationSubscription extends AutoCloseable {

	/**
	 * Returns which notifications this subscription takes.
	 * @return the matcher
	 */
	NotificationMatcher matcher();

	/**
	 * Returns whether the subscription still takes notifications: {@code false} once it
	 * or its agent was closed.
	 * @return whether it is open
	 */
	boolean isOpen();

	/**
	 * Stops the deliveries. A notification the handler was given before is not taken
	 * back; one taken for it and not yet handed over goes back to the mailbox.
	 */
	@Override
	void close();

}
