package dev.nixl4j.internal.engine;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.NotificationSubscription;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

/**
 * Delivers each received notification exactly once: to the oldest open subscription whose
 * matcher accepts it, else to the oldest waiter whose matcher accepts it, or else into a
 * mailbox where a later waiter or poll finds it. A waiter that times out at the same
 * moment a message is handed to it gives the message back to the mailbox.
 *
 * <p>
 * The mailbox is bounded per sender and in total, in messages and in bytes, and never
 * stops the drain: a message over a bound is dropped and counted instead. Over a sender's
 * bound, that sender's oldest message goes; over the total bound, the oldest message of
 * the sender holding the most (messages for the count cap, bytes for the byte cap), so a
 * flooding peer never evicts a quieter peer's message while it holds more itself. A
 * sender's byte bound is the same share of {@link #MAX_MAILBOX_BYTES} as its message
 * bound is of the capacity. Drops are counted and logged by {@link NotificationDrops}.
 *
 * <p>
 * Each drain pass takes at most {@link #DRAIN_PASS_LIMIT} messages from an engine that
 * can hold messages back, so a flood cannot keep the progress loop from polling
 * transfers; subscriptions' and waiters' messages are handed over in the order they were
 * received, each behind at most the messages drained before it in the same pass.
 */
final class NotificationDispatcher implements EngineDriver.NotificationSink {

	private static final System.Logger logger = System.getLogger(NotificationDispatcher.class.getName());

	/**
	 * The most bytes of unclaimed messages the mailbox holds, beside its count: a peer
	 * sending large notifications nobody claims cannot fill the heap.
	 */
	static final long MAX_MAILBOX_BYTES = 64L << 20;

	/** The most messages one drain pass takes from an engine that can hold them back. */
	static final int DRAIN_PASS_LIMIT = 256;

	private final String agentName;

	private final int capacity;

	private final int perSender;

	private final long perSenderBytes;

	private final Object lock = new Object();

	/** Unclaimed messages by sender, each sender's oldest first; guarded by the lock. */
	private final Map<String, Sender> mailbox = new HashMap<>();

	private final List<Waiter> waiters = new ArrayList<>();

	private final List<Subscription> subscriptions = new CopyOnWriteArrayList<>();

	/** The order of arrival of mailbox messages; guarded by the lock. */
	private long sequence;

	/** Messages in the mailbox; guarded by the lock. */
	private int mailboxCount;

	/** Bytes of the messages in the mailbox; guarded by the lock. */
	private long mailboxBytes;

	private volatile int mailboxSize;

	private volatile int waiterCount;

	private final AtomicLong received = new AtomicLong();

	private final NotificationDrops drops;

	/** Messages the current drain pass may still take; progress loop only. */
	private int passBudget = DRAIN_PASS_LIMIT;

	NotificationDispatcher(String agentName, int capacity, int perSender) {
		if (capacity < 1 || perSender < 1) {
			throw new IllegalArgumentException(
					"mailbox capacity and per-sender bound must be at least 1, were " + capacity + " and " + perSender);
		}
		this.agentName = agentName;
		this.capacity = capacity;
		this.perSender = Math.min(perSender, capacity);
		this.perSenderBytes = Math.max(1, MAX_MAILBOX_BYTES / capacity * this.perSender);
		this.drops = new NotificationDrops(agentName, this.lock,
				"over the mailbox's bound per sender (" + this.perSender + " messages, " + this.perSenderBytes
						+ " bytes) or in total (" + capacity + " messages, " + MAX_MAILBOX_BYTES + " bytes)");
	}

	/**
	 * Starts a drain pass: the engine may hand over up to {@link #DRAIN_PASS_LIMIT}
	 * messages before {@link #hasRoom()} turns {@code false}. Also hands over what new
	 * subscriptions took from the mailbox, and logs drops that are due.
	 */
	void startPass() {
		this.passBudget = DRAIN_PASS_LIMIT;
		for (Subscription subscription : this.subscriptions) {
			subscription.run();
		}
		this.drops.logDue(System.nanoTime());
	}

	/**
	 * Whether the current drain pass may take more messages. Unclaimed messages never
	 * make this {@code false}: over the mailbox's bounds they are dropped.
	 */
	@Override
	public boolean hasRoom() {
		return this.passBudget > 0;
	}

	/**
	 * Whether someone waits for notifications: a waiter or an open subscription, for
	 * which the progress loop drains at its short pace rather than its idle one.
	 */
	boolean hasWaiters() {
		return this.waiterCount > 0 || !this.subscriptions.isEmpty();
	}

	@Override
	public void accept(String remoteAgent, byte[] message) {
		this.passBudget--;
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
		this.received.incrementAndGet();
		for (Subscription subscription : this.subscriptions) {
			if (subscription.offer(remoteAgent, message)) {
				subscription.run();
				return;
			}
		}
		Notification notification = new Notification(remoteAgent, message);
		Waiter claimed = null;
		synchronized (this.lock) {
			for (Iterator<Waiter> it = this.waiters.iterator(); it.hasNext();) {
				Waiter waiter = it.next();
				if (waiter.matcher.matches(remoteAgent, message)) {
					it.remove();
					claimed = waiter;
					break;
				}
			}
			if (claimed == null) {
				store(new Entry(remoteAgent, message, this.sequence++), false);
			}
			updateCounts();
		}
		if (claimed != null && !claimed.future.complete(notification)) {
			// The waiter timed out or was cancelled in between: the message goes back.
			synchronized (this.lock) {
				store(new Entry(remoteAgent, message, this.sequence++), false);
				updateCounts();
			}
		}
	}

	NotificationSubscription subscribe(NotificationMatcher matcher, Consumer<Notification> handler) {
		Subscription subscription = new Subscription(Objects.requireNonNull(matcher, "matcher"),
				Objects.requireNonNull(handler, "handler"));
		synchronized (this.lock) {
			// what waits in the mailbox is the subscription's too, handed over by the
			// progress loop
			Entry entry;
			while ((entry = take(matcher)) != null) {
				subscription.queue.addLast(entry);
			}
			this.subscriptions.add(subscription);
			updateCounts();
		}
		return subscription;
	}

	CompletableFuture<Notification> expect(NotificationMatcher matcher, Duration timeout) {
		Waiter waiter;
		synchronized (this.lock) {
			Entry waiting = take(matcher);
			if (waiting != null) {
				updateCounts();
				return CompletableFuture.completedFuture(waiting.notification());
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
			Entry entry = take(matcher);
			updateCounts();
			return Optional.ofNullable(entry).map(Entry::notification);
		}
	}

	long received() {
		return this.received.get();
	}

	long dropped() {
		return this.drops.total();
	}

	long dropped(String remoteAgent) {
		return this.drops.of(remoteAgent);
	}

	Map<String, Long> droppedBySender() {
		return this.drops.bySender();
	}

	int mailboxSize() {
		return this.mailboxSize;
	}

	void close() {
		List<Subscription> open = List.copyOf(this.subscriptions);
		synchronized (this.lock) {
			for (Subscription subscription : open) {
				subscription.closed = true;
				subscription.queue.clear();
			}
			this.subscriptions.clear();
			this.mailbox.clear();
			this.mailboxCount = 0;
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

	/**
	 * Puts a message into the mailbox, dropping what is over the bounds; under the lock.
	 * @param first whether the message goes before the sender's others (it was taken and
	 * given back)
	 */
	private void store(Entry entry, boolean first) {
		int length = entry.message.length;
		if (length > this.perSenderBytes) {
			this.drops.count(entry.sender);
			return;
		}
		Sender sender = this.mailbox.computeIfAbsent(entry.sender, Sender::new);
		while (!sender.entries.isEmpty()
				&& (sender.entries.size() >= this.perSender || sender.bytes + length > this.perSenderBytes)) {
			evictOldest(sender);
		}
		if (first) {
			sender.entries.addFirst(entry);
		}
		else {
			sender.entries.addLast(entry);
		}
		sender.bytes += length;
		this.mailboxCount++;
		this.mailboxBytes += length;
		if (this.mailbox.get(entry.sender) == null) {
			this.mailbox.put(entry.sender, sender);
		}
		while (this.mailboxCount > this.capacity) {
			evictOldest(largest(sender, false));
		}
		while (this.mailboxBytes > MAX_MAILBOX_BYTES) {
			evictOldest(largest(sender, true));
		}
	}

	/**
	 * Returns the sender holding the most messages (or bytes); the arriving sender when
	 * it is among the largest, so that it never evicts an equal peer.
	 */
	private Sender largest(Sender arriving, boolean bytes) {
		Sender largest = arriving;
		for (Sender sender : this.mailbox.values()) {
			long size = bytes ? sender.bytes : sender.entries.size();
			long most = bytes ? largest.bytes : largest.entries.size();
			if (size > most) {
				largest = sender;
			}
		}
		return largest;
	}

	private void evictOldest(Sender sender) {
		Entry oldest = sender.entries.removeFirst();
		removed(sender, oldest);
		this.drops.count(sender.name);
	}

	private void removed(Sender sender, Entry entry) {
		sender.bytes -= entry.message.length;
		this.mailboxCount--;
		this.mailboxBytes -= entry.message.length;
		if (sender.entries.isEmpty()) {
			this.mailbox.remove(sender.name);
		}
	}

	/**
	 * Takes the oldest mailbox message the matcher accepts; under the lock.
	 */
	private @Nullable Entry take(NotificationMatcher matcher) {
		Optional<String> from = matcher.remoteAgent();
		Sender found = null;
		Entry oldest = null;
		if (from.isPresent()) {
			Sender sender = this.mailbox.get(from.get());
			if (sender != null) {
				oldest = sender.first(matcher);
				found = sender;
			}
		}
		else {
			for (Sender sender : this.mailbox.values()) {
				Entry first = sender.first(matcher);
				if (first != null && (oldest == null || first.sequence < oldest.sequence)) {
					oldest = first;
					found = sender;
				}
			}
		}
		if (oldest == null || found == null) {
			return null;
		}
		found.entries.remove(oldest);
		removed(found, oldest);
		return oldest;
	}

	private boolean remove(Waiter waiter) {
		synchronized (this.lock) {
			boolean removed = this.waiters.remove(waiter);
			updateCounts();
			return removed;
		}
	}

	private void updateCounts() {
		this.mailboxSize = this.mailboxCount;
		this.waiterCount = this.waiters.size();
	}

	/** A mailbox message. */
	private record Entry(String sender, byte[] message, long sequence) {

		Notification notification() {
			return new Notification(this.sender, this.message);
		}

	}

	/** One sender's unclaimed messages; guarded by the dispatcher's lock. */
	private static final class Sender {

		final String name;

		final ArrayDeque<Entry> entries = new ArrayDeque<>();

		long bytes;

		Sender(String name) {
			this.name = name;
		}

		@Nullable Entry first(NotificationMatcher matcher) {
			for (Entry entry : this.entries) {
				if (matcher.matches(entry.sender, entry.message)) {
					return entry;
				}
			}
			return null;
		}

	}

	private static final class Waiter {

		final NotificationMatcher matcher;

		final CompletableFuture<Notification> future = new CompletableFuture<>();

		Waiter(NotificationMatcher matcher) {
			this.matcher = matcher;
		}

	}

	/**
	 * A standing claim. Its handler is called on one thread at a time: the progress
	 * loop's, which is the only one that delivers.
	 */
	private final class Subscription implements NotificationSubscription {

		private final NotificationMatcher matcher;

		private final Consumer<Notification> handler;

		/** Messages taken for the handler and not yet handed over; the lock. */
		final ArrayDeque<Entry> queue = new ArrayDeque<>();

		volatile boolean closed;

		Subscription(NotificationMatcher matcher, Consumer<Notification> handler) {
			this.matcher = matcher;
			this.handler = handler;
		}

		/** Takes a message the matcher accepts, for {@link #run()} to hand over. */
		boolean offer(String remoteAgent, byte[] message) {
			if (this.closed || !this.matcher.matches(remoteAgent, message)) {
				return false;
			}
			synchronized (NotificationDispatcher.this.lock) {
				if (this.closed) {
					return false;
				}
				this.queue.addLast(new Entry(remoteAgent, message, 0));
				return true;
			}
		}

		/** Hands over what was taken, in order. */
		void run() {
			while (true) {
				Entry entry;
				synchronized (NotificationDispatcher.this.lock) {
					entry = this.queue.pollFirst();
				}
				if (entry == null) {
					return;
				}
				try {
					this.handler.accept(entry.notification());
				}
				catch (RuntimeException | Error ex) {
					logger.log(Level.WARNING,
							"Agent '" + NotificationDispatcher.this.agentName + "': the handler of the subscription to "
									+ this.matcher + " threw on a notification from '" + entry.sender
									+ "'; the notification counts as handled",
							ex);
				}
			}
		}

		@Override
		public NotificationMatcher matcher() {
			return this.matcher;
		}

		@Override
		public boolean isOpen() {
			return !this.closed;
		}

		@Override
		public void close() {
			synchronized (NotificationDispatcher.this.lock) {
				if (this.closed) {
					return;
				}
				this.closed = true;
				NotificationDispatcher.this.subscriptions.remove(this);
				Entry entry;
				while ((entry = this.queue.pollLast()) != null) {
					store(new Entry(entry.sender, entry.message, -1), true);
				}
				updateCounts();
			}
		}

		@Override
		public String toString() {
			return "NotificationSubscription[" + this.matcher + (this.closed ? ", closed]" : "]");
		}

	}

}
