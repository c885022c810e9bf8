package dev.nixl4j.internal.embedded;

import java.io.InterruptedIOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

import dev.nixl4j.internal.engine.EngineDriver.NotificationSink;
import org.jspecify.annotations.Nullable;

/**
 * The notifications an embedded agent received, from agents of this JVM and from network
 * peers, waiting for its progress loop; and the news that a peer is lost, queued behind
 * the last notification it sent. Notifications from network peers are held back once
 * {@value #MAX_NETWORK_INBOX_BYTES} bytes of them wait.
 */
final class NotificationInbox {

	/** The most bytes of notifications from network peers that wait in {@link #inbox}. */
	static final long MAX_NETWORK_INBOX_BYTES = 16L << 20;

	/**
	 * How long after its connection to a peer dropped the peer's own connections here may
	 * take to end (delivering what they read) for the peer to count as lost. A peer that
	 * keeps them open longer is alive and may still send.
	 */
	private static final long LOSS_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(2);

	private final ConcurrentLinkedQueue<Incoming> inbox = new ConcurrentLinkedQueue<>();

	private final Object networkInboxLock = new Object();

	/**
	 * Bytes of notifications from network peers in {@link #inbox}; guarded by
	 * {@link #networkInboxLock}.
	 */
	private long networkInboxBytes;

	/**
	 * Peers whose connection dropped while their own connections here were still open.
	 */
	private final Map<String, Dropped> dropping = new ConcurrentHashMap<>();

	/** Whether a connection from the named peer is being served now. */
	private final Predicate<String> served;

	private volatile Runnable wakeUp = () -> {
	};

	private volatile boolean closed;

	NotificationInbox(Predicate<String> served) {
		this.served = served;
	}

	/** Sets what wakes the progress loop up. */
	void progressListener(Runnable wakeUp) {
		this.wakeUp = wakeUp;
	}

	void wakeUp() {
		this.wakeUp.run();
	}

	/** Hands a notification from an agent of this JVM to this agent's progress loop. */
	void deliver(String from, byte[] message) {
		this.inbox.add(new Incoming(from, message, null));
		wakeUp();
	}

	/**
	 * Hands a notification that a peer sent over the network to this agent's progress
	 * loop. While notifications of {@value #MAX_NETWORK_INBOX_BYTES} bytes or more wait
	 * for the progress loop (it stops draining while the agent's mailbox is full), the
	 * calling connection thread waits too, and so stops reading from its peer: a peer
	 * that sends faster than this agent takes its notifications is held back instead of
	 * filling the heap.
	 * @param open whether the connection is still open; the wait ends when it closes
	 * @throws InterruptedIOException when the connection closed or the thread was
	 * interrupted while waiting; the notification was not delivered
	 */
	void deliverFromNetwork(String from, byte[] message, BooleanSupplier open) throws InterruptedIOException {
		synchronized (this.networkInboxLock) {
			while (this.networkInboxBytes > 0 && this.networkInboxBytes + message.length > MAX_NETWORK_INBOX_BYTES) {
				if (this.closed || !open.getAsBoolean()) {
					throw new InterruptedIOException("the connection closed while its notification waited for room");
				}
				try {
					this.networkInboxLock.wait(100);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new InterruptedIOException("interrupted while a notification waited for room");
				}
			}
			this.networkInboxBytes += message.length;
		}
		this.inbox.add(new Incoming(from, message, null, true));
		wakeUp();
	}

	/**
	 * Learns that this agent's connection to a peer was dropped by the peer or the
	 * network. Once the peer's own connections here have ended too (at once if there are
	 * none), every notification it sent has been delivered and no more can come: waits
	 * for its notifications fail then, after those notifications, in order.
	 */
	void linkDropped(String peer, String why) {
		if (this.closed) {
			return;
		}
		Dropped dropped = new Dropped(why, System.nanoTime() + LOSS_WINDOW_NANOS);
		this.dropping.put(peer, dropped);
		if (!this.served.test(peer) && this.dropping.remove(peer, dropped)) {
			lost(peer, why);
		}
	}

	/**
	 * Learns that a connection from a peer ended; called after it delivered all it read.
	 */
	void inboundEnded(String peer) {
		Dropped dropped = this.dropping.get(peer);
		if (dropped != null && !this.served.test(peer) && this.dropping.remove(peer, dropped)) {
			lost(peer, dropped.why());
		}
	}

	/** Learns that a peer connected: it is alive, whatever its earlier connection did. */
	void connectionFrom(String peer) {
		this.dropping.remove(peer);
	}

	private void lost(String peer, String why) {
		this.inbox.add(new Incoming(peer, new byte[0], why));
		wakeUp();
	}

	/** Forgets dropped peers that kept their connections here open past the window. */
	void checkDeadlines(long now) {
		this.dropping.values().removeIf(dropped -> now - dropped.until() > 0);
	}

	int drain(NotificationSink sink) {
		int count = 0;
		// Stops when the sink says the pass is over: each message taken frees room in the
		// network inbox, which its readers refill meanwhile, so a flood could keep the
		// drain from ever ending.
		Incoming incoming;
		while (sink.hasRoom() && (incoming = this.inbox.poll()) != null) {
			String lost = incoming.lost();
			if (lost != null) {
				sink.peerLost(incoming.from(), lost);
				continue;
			}
			if (incoming.fromNetwork()) {
				synchronized (this.networkInboxLock) {
					this.networkInboxBytes -= incoming.message().length;
					this.networkInboxLock.notifyAll();
				}
			}
			sink.accept(incoming.from(), incoming.message());
			count++;
		}
		return count;
	}

	/** Stops learning of lost peers and ends waits for room. */
	void close() {
		this.closed = true;
	}

	/**
	 * A notification from a peer, or, with a reason, the news that no more can come from
	 * it.
	 */
	private record Incoming(String from, byte[] message, @Nullable String lost, boolean fromNetwork) {

		Incoming(String from, byte[] message, @Nullable String lost) {
			this(from, message, lost, false);
		}

	}

	private record Dropped(String why, long until) {
	}

}
