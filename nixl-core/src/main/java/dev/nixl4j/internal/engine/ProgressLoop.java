package dev.nixl4j.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.nixl4j.TransferState;
import org.jspecify.annotations.Nullable;

/**
 * The one thread per agent that polls transfers in flight and drains notifications, so
 * that users never write a polling loop. NIXL sends a transfer's notification only while
 * its initiator keeps polling the transfer, which is why this loop must run.
 *
 * <p>
 * Pacing: right after any progress it spins for a few microseconds (small transfers
 * finish there, at the latency of the backend), then parks with a back-off that grows to
 * {@value #ACTIVE_PARK_MAX_NANOS} ns while transfers or waiters exist, and sleeps
 * {@value #IDLE_PARK_NANOS} ns between notification drains when idle. Parking instead of
 * spinning leaves the cores to the backend's own progress threads. For
 * {@value #REPLY_WINDOW_NANOS} ns after a transfer this agent posted with a notification
 * completed, the back-off stops at {@value #REPLY_PARK_MAX_NANOS} ns while someone waits
 * for a notification: the peer's answer to it (a KV lease's confirmation, say) is then
 * taken within tens of microseconds of its arrival instead of up to
 * {@value #ACTIVE_PARK_MAX_NANOS} ns later. Only the side that waits for an answer pays
 * for the shorter parks; a producer answering a steady stream of reads does not.
 *
 * <p>
 * Faults: each unit of work (the poll of one transfer with its listeners, one
 * notification drain) that throws is reported to the agent as survived and the loop goes
 * on; a transfer whose poll throws is ended {@link dev.nixl4j.TransferState#FAILED}
 * rather than polled again. When a unit cannot be completed for
 * {@value #STUCK_LIMIT_NANOS} ns in a row (a drain that keeps throwing, a transfer that
 * cannot even be ended), or when the thread dies anyway, the loop reports a fatal fault,
 * which turns the agent {@link dev.nixl4j.AgentState#FAILED}, and stops.
 */
final class ProgressLoop implements Runnable {

	private static final long SPIN_NANOS = 20_000;

	private static final long ACTIVE_PARK_MIN_NANOS = 20_000;

	private static final long ACTIVE_PARK_MAX_NANOS = 200_000;

	private static final long IDLE_PARK_NANOS = 2_000_000;

	private static final long REPLY_WINDOW_NANOS = 5_000_000;

	private static final long REPLY_PARK_MAX_NANOS = 40_000;

	private static final long STUCK_LIMIT_NANOS = 500_000_000L;

	private static final String THREAD = "progress";

	private final AgentCore agent;

	private final ConcurrentLinkedQueue<TransferImpl> submitted = new ConcurrentLinkedQueue<>();

	private final List<TransferImpl> active = new ArrayList<>();

	private final Thread thread;

	private volatile boolean running = true;

	/** Until when ({@link System#nanoTime()}) a peer's answer is likely. */
	private volatile long replyExpectedUntil = System.nanoTime();

	/** Whether a unit of the current round could not be completed; loop thread only. */
	private boolean stuck;

	/** What the latest unit that could not be completed threw; loop thread only. */
	private @Nullable Throwable stuckBy;

	ProgressLoop(AgentCore agent) {
		this.agent = agent;
		this.thread = Thread.ofPlatform()
			.daemon(true)
			.name("nixl-progress-" + agent.name())
			.uncaughtExceptionHandler((thread, error) -> agent.faults().fatal(THREAD, error))
			.unstarted(this);
	}

	void start() {
		this.thread.start();
	}

	void submit(TransferImpl transfer) {
		this.submitted.add(transfer);
		LockSupport.unpark(this.thread);
	}

	void wakeUp() {
		LockSupport.unpark(this.thread);
	}

	/**
	 * Says that a peer was just notified by a completed transfer and may answer soon: the
	 * loop takes notifications promptly for a while.
	 */
	void expectReply() {
		this.replyExpectedUntil = System.nanoTime() + REPLY_WINDOW_NANOS;
	}

	void stop() {
		this.running = false;
		LockSupport.unpark(this.thread);
		if (Thread.currentThread() != this.thread) {
			try {
				this.thread.join(TimeUnit.SECONDS.toMillis(10));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	@Override
	public void run() {
		long lastProgress = System.nanoTime();
		long park = ACTIVE_PARK_MIN_NANOS;
		long stuckSince = 0;
		while (this.running) {
			this.stuck = false;
			boolean progressed;
			try {
				progressed = pollTransfers() | drainNotifications();
			}
			catch (Throwable ex) {
				stuck(ex);
				progressed = false;
			}
			long now = System.nanoTime();
			if (!this.stuck) {
				stuckSince = 0;
			}
			else if (stuckSince == 0) {
				stuckSince = now;
			}
			else if (now - stuckSince >= STUCK_LIMIT_NANOS) {
				this.running = false;
				this.agent.faults().fatal(THREAD, Objects.requireNonNull(this.stuckBy));
				return;
			}
			if (progressed) {
				lastProgress = now;
				park = ACTIVE_PARK_MIN_NANOS;
				continue;
			}
			boolean busy = this.stuck || !this.active.isEmpty() || !this.submitted.isEmpty()
					|| this.agent.hasNotificationWaiters();
			if (busy && now - lastProgress < SPIN_NANOS) {
				Thread.onSpinWait();
			}
			else if (busy) {
				long limit = (now - this.replyExpectedUntil < 0) ? REPLY_PARK_MAX_NANOS : ACTIVE_PARK_MAX_NANOS;
				park = Math.min(park, limit);
				LockSupport.parkNanos(this, park);
				park = Math.min(park * 2, limit);
			}
			else {
				LockSupport.parkNanos(this, IDLE_PARK_NANOS);
			}
		}
	}

	/**
	 * Reports a unit of work that threw and could not be completed: it counts towards the
	 * limit.
	 */
	private void stuck(Throwable error) {
		this.stuck = true;
		this.stuckBy = error;
		this.agent.faults().survived(THREAD, error);
	}

	private boolean drainNotifications() {
		try {
			return this.agent.drainNotifications();
		}
		catch (Throwable ex) {
			stuck(ex);
			return false;
		}
	}

	private boolean pollTransfers() {
		boolean progressed = false;
		TransferImpl transfer;
		while ((transfer = this.submitted.peek()) != null) {
			this.active.add(transfer);
			this.submitted.poll();
		}
		for (int i = this.active.size() - 1; i >= 0; i--) {
			if (poll(this.active.get(i))) {
				int last = this.active.size() - 1;
				this.active.set(i, this.active.get(last));
				this.active.remove(last);
				progressed = true;
			}
		}
		return progressed;
	}

	/**
	 * Polls one transfer. A poll that throws ends the transfer as failed (the transfer
	 * reports it); what else throws (a listener, after the end) is reported here, and the
	 * transfer ended as failed should it still be in progress, so it is never polled
	 * again.
	 * @return {@code true} when the transfer left the in-progress state
	 */
	private boolean poll(TransferImpl transfer) {
		try {
			return transfer.poll(THREAD);
		}
		catch (Throwable ex) {
			this.agent.faults().survived(THREAD, ex);
			try {
				transfer.pollThrew(ex);
			}
			catch (Throwable again) {
				if (transfer.state() == TransferState.IN_PROGRESS) {
					stuck(again);
					return false;
				}
				this.agent.faults().survived(THREAD, again);
			}
			return transfer.state() != TransferState.IN_PROGRESS;
		}
	}

}
