package dev.nixl4j.internal.engine;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The unclaimed notifications a {@link NotificationDispatcher}'s mailbox dropped: counted
 * in total and per sender (one by one for the first {@link #MAX_TRACKED_SENDERS}
 * senders), and logged at most once per sender per {@link #DROP_LOG_INTERVAL}, naming the
 * sender and the count, never the bytes. Guarded by the dispatcher's lock.
 */
final class NotificationDrops {

	/**
	 * The dispatcher's logger: the drop lines have always been logged under its name,
	 * which users may have configured.
	 */
	private static final System.Logger logger = System.getLogger(NotificationDispatcher.class.getName());

	/** The shortest time between two log lines about one sender's dropped messages. */
	static final Duration DROP_LOG_INTERVAL = Duration.ofSeconds(10);

	/**
	 * How many senders' drops are counted one by one; drops from further senders count in
	 * the total and are logged together.
	 */
	static final int MAX_TRACKED_SENDERS = 1024;

	/** How often the drop log is looked at when no sender dropped for the first time. */
	private static final long DROP_LOG_SCAN_NANOS = TimeUnit.SECONDS.toNanos(1);

	/** Key of {@link #dropLogs} for senders beyond {@link #MAX_TRACKED_SENDERS}. */
	private static final String OTHER_SENDERS = "\0other senders";

	private final String agentName;

	/** The dispatcher's lock. */
	private final Object lock;

	/** What the log lines say of the mailbox's bounds. */
	private final String bounds;

	private final AtomicLong dropped = new AtomicLong();

	/** Drops per sender since the agent started, for the first senders; the lock. */
	private final Map<String, Long> droppedBySender = new LinkedHashMap<>();

	/** Drops not yet logged, and when each sender was last logged; the lock. */
	private final Map<String, DropLog> dropLogs = new HashMap<>();

	/** Whether a sender dropped a message for the first time since it was logged. */
	private volatile boolean freshDrop;

	/** When the drop log was last looked at; progress loop only. */
	private long dropLogScanned = System.nanoTime();

	NotificationDrops(String agentName, Object lock, String bounds) {
		this.agentName = agentName;
		this.lock = lock;
		this.bounds = bounds;
	}

	/** Counts a message of the sender dropped; under the lock. */
	void count(String sender) {
		this.dropped.incrementAndGet();
		String key = sender;
		Long count = this.droppedBySender.get(sender);
		if (count != null || this.droppedBySender.size() < MAX_TRACKED_SENDERS) {
			this.droppedBySender.put(sender, (count != null) ? count + 1 : 1);
		}
		else {
			key = OTHER_SENDERS;
		}
		DropLog log = this.dropLogs.get(key);
		if (log == null) {
			log = new DropLog();
			this.dropLogs.put(key, log);
			this.freshDrop = true;
		}
		log.sinceLogged++;
	}

	long total() {
		return this.dropped.get();
	}

	long of(String remoteAgent) {
		synchronized (this.lock) {
			return this.droppedBySender.getOrDefault(remoteAgent, 0L);
		}
	}

	Map<String, Long> bySender() {
		synchronized (this.lock) {
			return new LinkedHashMap<>(this.droppedBySender);
		}
	}

	/**
	 * Logs the drops of each sender not logged within {@link #DROP_LOG_INTERVAL}; a
	 * sender's first drop at once. Progress loop only.
	 */
	void logDue(long now) {
		if (!this.freshDrop && now - this.dropLogScanned < DROP_LOG_SCAN_NANOS) {
			return;
		}
		this.dropLogScanned = now;
		List<String> lines = new ArrayList<>();
		synchronized (this.lock) {
			this.freshDrop = false;
			for (Iterator<Map.Entry<String, DropLog>> it = this.dropLogs.entrySet().iterator(); it.hasNext();) {
				Map.Entry<String, DropLog> entry = it.next();
				DropLog log = entry.getValue();
				boolean due = !log.logged || now - log.loggedAt >= DROP_LOG_INTERVAL.toNanos();
				if (log.sinceLogged > 0 && due) {
					String sender = entry.getKey().equals(OTHER_SENDERS) ? "further senders"
							: "'" + entry.getKey() + "'";
					lines.add("Agent '" + this.agentName + "' dropped " + log.sinceLogged
							+ " unclaimed notification(s) from " + sender
							+ (log.logged ? " in the last " + TimeUnit.NANOSECONDS.toSeconds(now - log.loggedAt) + " s"
									: "")
							+ ": " + this.bounds + "; nobody waited for them (further drops from this sender"
							+ " are logged at most every " + DROP_LOG_INTERVAL.toSeconds() + " s)");
					log.sinceLogged = 0;
					log.logged = true;
					log.loggedAt = now;
				}
				else if (log.sinceLogged == 0 && due) {
					it.remove();
				}
			}
		}
		for (String line : lines) {
			logger.log(Level.WARNING, line);
		}
	}

	/** Drops of one sender not yet logged; guarded by the dispatcher's lock. */
	private static final class DropLog {

		long sinceLogged;

		boolean logged;

		long loggedAt;

	}

}
