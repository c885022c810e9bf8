package dev.nixl4j.internal.engine;

import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import dev.nixl4j.AgentStatistics;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;

/**
 * Counters of finished transfers and notifications of one agent.
 */
final class AgentStatisticsCounter implements AgentStatistics {

	private static final TransferState[] OUTCOMES = AgentStatistics.OUTCOMES.toArray(TransferState[]::new);

	private final AtomicLongArray transfers = new AtomicLongArray(XferOp.values().length * OUTCOMES.length);

	private final AtomicLongArray bytes = new AtomicLongArray(XferOp.values().length * OUTCOMES.length);

	private final AtomicLong notificationsSent = new AtomicLong();

	private final AtomicLong internalErrors = new AtomicLong();

	private final NotificationDispatcher notifications;

	AgentStatisticsCounter(NotificationDispatcher notifications) {
		this.notifications = notifications;
	}

	void record(TransferImpl transfer, TransferState outcome, boolean notified) {
		int slot = slot(transfer.op(), outcome);
		if (slot >= 0) {
			this.transfers.incrementAndGet(slot);
			this.bytes.addAndGet(slot, transfer.byteSize());
		}
		if (notified && outcome == TransferState.COMPLETED) {
			this.notificationsSent.incrementAndGet();
		}
	}

	void notificationSent() {
		this.notificationsSent.incrementAndGet();
	}

	void internalError() {
		this.internalErrors.incrementAndGet();
	}

	private static int slot(XferOp op, TransferState outcome) {
		for (int i = 0; i < OUTCOMES.length; i++) {
			if (OUTCOMES[i] == outcome) {
				return op.ordinal() * OUTCOMES.length + i;
			}
		}
		return -1;
	}

	@Override
	public long transfers(XferOp op, TransferState outcome) {
		int slot = slot(op, outcome);
		return (slot >= 0) ? this.transfers.get(slot) : 0;
	}

	@Override
	public long bytes(XferOp op, TransferState outcome) {
		int slot = slot(op, outcome);
		return (slot >= 0) ? this.bytes.get(slot) : 0;
	}

	@Override
	public long notificationsSent() {
		return this.notificationsSent.get();
	}

	@Override
	public long notificationsReceived() {
		return this.notifications.received();
	}

	@Override
	public long notificationsDropped() {
		return this.notifications.dropped();
	}

	@Override
	public long notificationsDropped(String remoteAgent) {
		return this.notifications.dropped(remoteAgent);
	}

	@Override
	public Map<String, Long> notificationsDroppedBySender() {
		return this.notifications.droppedBySender();
	}

	@Override
	public long internalErrors() {
		return this.internalErrors.get();
	}

}
