package dev.nixl4j.internal.engine;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * Delivers each received notification exactly once: to the oldest waiter whose matcher
 * accepts it, or else into a mailbox where a later waiter or poll finds it. A waiter that
 * times out at the same moment a message is handed to it gives the message back to the
 * mailbox, so none is lost.
 */
final class NotificationDispatcher implements EngineDriver.NotificationSink {

	private final String agentName;

	/**
	 * The most bytes of unclaimed messages the mailbox holds before draining pauses,
	 * beside its count: a peer sending large notifications nobody claims cannot fill the
	 * heap.
	 */
	static final long MAX_MAILBOX_BYTES = 64L << 20;

	private final int capacity;

	private final Object lock = new Object();

	private final ArrayDeque<Notification> mailbox = new ArrayDeque<>();

	private final List<Waiter> waiters = new ArrayList<>();

	private volatile int mailboxSize;

	/** Bytes of the messages in the mailbox; guarded by {@link #lock}. */
	private long mailboxBytes;

	/** Whether {@link #mailboxBytes} is below {@link #MAX_MAILBOX_BYTES}. */
	private volatile boolean mailboxBytesBelowCap = true;

	private volatile int waiterCount;

	private long received;

	NotificationDispatcher(String agentName, int capacity) {
		this.agentName = agentName;
		this.capacity = capacity;
	}

	/**
	 * Whether the progress loop may drain more notifications from the engine. While the
	 * mailbox is full, messages wait inside the engine instead of being dropped.
	 */
	@Override
	public boolean hasRoom() {
		return this.mailboxSize < this.capacity && this.mailboxBytesBelowCap;
	}

	boolean hasWaiters() {
		return this.waiterCount > 0;
	}

	@Override
	public void accept(String remoteAgent, byte[] message) {
		deliver(remoteAgent, message);
	}

	/**
	 * Fails at once, with {@link NixlStatus#ERROR_BACKEND} naming the peer, every wait
	 * for a notification from a peer whose connection dropped; waits that accept any
	 * sender go on.
	 */
	@Override
	public void peerLost(String remoteAgent, String detail) {
		List<Waiter> lost = new ArrayList<>();
		synchronized (this.lock) {
			for (Iterator<Waiter> it = this.waiters.iterator(); it.hasNext();) {
				Waiter waiter = it.next();
				if (waiter.matcher.remoteAgent().filter(remoteAgent::equals).isPresent()) {
					it.remove();
					lost.add(waiter);
				}
			}
			updateCounts();
		}
		for (Waiter waiter : lost) {
			waiter.future
				.completeExceptionally(new NixlException(NixlStatus.ERROR_BACKEND, "get_notifs", this.agentName,
						remoteAgent, "no notification matching " + waiter.matcher + " can come: " + detail));
		}
	}

	void deliver(String remoteAgent, byte[] message) {
		Notification notification = new Notification(remoteAgent, message);
		Waiter claimed = null;
		synchronized (this.lock) {
			this.received++;
			for (Iterator<Waiter> it = this.waiters.iterator(); it.hasNext();) {
				Waiter waiter = it.next();
				if (waiter.matcher.matches(remoteAgent, message)) {
					it.remove();
					claimed = waiter;
					break;
				}
			}
			if (claimed == null) {
				this.mailbox.addLast(notification);
				this.mailboxBytes += message.length;
			}
			updateCounts();
		}
		if (claimed != null && !claimed.future.complete(notification)) {
			// The waiter timed out or was cancelled in between: the message goes back.
			synchronized (this.lock) {
				this.mailbox.addFirst(notification);
				this.mailboxBytes += message.length;
				updateCounts();
			}
		}
	}

	CompletableFuture<Notification> expect(NotificationMatcher matcher, Duration timeout) {
		Waiter waiter;
		synchronized (this.lock) {
			Notification waiting = take(matcher);
			if (waiting != null) {
				updateCounts();
				return CompletableFuture.completedFuture(waiting);
			}
			waiter = new Waiter(matcher);
			this.waiters.add(waiter);
			updateCounts();
		}
		CompletableFuture.delayedExecutor(timeout.toNanos(), TimeUnit.NANOSECONDS).execute(() -> {
			if (remove(waiter)) {
				waiter.future.completeExceptionally(new NixlException(NixlStatus.TIMEOUT, "get_notifs", this.agentName,
						null, "no notification matching " + matcher + " within " + timeout));
			}
		});
		waiter.future.whenComplete((notification, failure) -> {
			if (waiter.future.isCancelled()) {
				remove(waiter);
			}
		});
		return waiter.future;
	}

	Optional<Notification> poll(NotificationMatcher matcher) {
		synchronized (this.lock) {
			Notification notification = take(matcher);
			updateCounts();
			return Optional.ofNullable(notification);
		}
	}

	long received() {
		synchronized (this.lock) {
			return this.received;
		}
	}

	int mailboxSize() {
		return this.mailboxSize;
	}

	void close() {
		synchronized (this.lock) {
			this.mailbox.clear();
			this.mailboxBytes = 0;
			updateCounts();
		}
		failWaiters(new NixlException(NixlStatus.CLOSED, "get_notifs", this.agentName, null, "the agent was closed"));
	}

	/** Fails every waiter at once with the given failure; the mailbox stays. */
	void failWaiters(NixlException failure) {
		List<Waiter> pending;
		synchronized (this.lock) {
			pending = new ArrayList<>(this.waiters);
			this.waiters.clear();
			updateCounts();
		}
		for (Waiter waiter : pending) {
			waiter.future.completeExceptionally(failure);
		}
	}

	private @Nullable Notification take(NotificationMatcher matcher) {
		for (Iterator<Notification> it = this.mailbox.iterator(); it.hasNext();) {
			Notification notification = it.next();
			byte[] message = notification.message();
			if (matcher.matches(notification.remoteAgent(), message)) {
				it.remove();
				this.mailboxBytes -= message.length;
				return notification;
			}
		}
		return null;
	}

	private boolean remove(Waiter waiter) {
		synchronized (this.lock) {
			boolean removed = this.waiters.remove(waiter);
			updateCounts();
			return removed;
		}
	}

	private void updateCounts() {
		this.mailboxSize = this.mailbox.size();
		this.mailboxBytesBelowCap = this.mailboxBytes < MAX_MAILBOX_BYTES;
		this.waiterCount = this.waiters.size();
	}

	private static final class Waiter {

		final NotificationMatcher matcher;

		final CompletableFuture<Notification> future = new CompletableFuture<>();

		Waiter(NotificationMatcher matcher) {
			this.matcher = matcher;
		}

	}

}
