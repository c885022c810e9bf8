package dev.nixl4j.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The one thread per agent that polls transfers in flight and drains notifications, so that
 * users never write a polling loop. NIXL sends a transfer's notification only while its
 * initiator keeps polling the transfer, which is why this loop must run.
 *
 * <p>Pacing: right after any progress it spins for a few microseconds (small transfers finish
 * there, at the latency of the backend), then parks with a back-off that grows to
 * {@value #ACTIVE_PARK_MAX_NANOS} ns while transfers or waiters exist, and sleeps
 * {@value #IDLE_PARK_NANOS} ns between notification drains when idle. Parking instead of
 * spinning leaves the cores to the backend's own progress threads.
 */
final class ProgressLoop implements Runnable {

	private static final long SPIN_NANOS = 20_000;

	private static final long ACTIVE_PARK_MIN_NANOS = 20_000;

	private static final long ACTIVE_PARK_MAX_NANOS = 200_000;

	private static final long IDLE_PARK_NANOS = 2_000_000;

	private final AgentCore agent;

	private final ConcurrentLinkedQueue<TransferImpl> submitted = new ConcurrentLinkedQueue<>();

	private final List<TransferImpl> active = new ArrayList<>();

	private final Thread thread;

	private volatile boolean running = true;

	ProgressLoop(AgentCore agent) {
		this.agent = agent;
		this.thread = Thread.ofPlatform()
			.daemon(true)
			.name("nixl-progress-" + agent.name())
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
		while (this.running) {
			boolean progressed = pollTransfers() | this.agent.drainNotifications();
			long now = System.nanoTime();
			if (progressed) {
				lastProgress = now;
				park = ACTIVE_PARK_MIN_NANOS;
				continue;
			}
			boolean busy = !this.active.isEmpty() || !this.submitted.isEmpty() || this.agent.hasNotificationWaiters();
			if (busy && now - lastProgress < SPIN_NANOS) {
				Thread.onSpinWait();
			}
			else if (busy) {
				LockSupport.parkNanos(this, park);
				park = Math.min(park * 2, ACTIVE_PARK_MAX_NANOS);
			}
			else {
				LockSupport.parkNanos(this, IDLE_PARK_NANOS);
			}
		}
	}

	private boolean pollTransfers() {
		boolean progressed = false;
		TransferImpl transfer;
		while ((transfer = this.submitted.poll()) != null) {
			this.active.add(transfer);
		}
		for (int i = this.active.size() - 1; i >= 0; i--) {
			if (this.active.get(i).poll()) {
				int last = this.active.size() - 1;
				this.active.set(i, this.active.get(last));
				this.active.remove(last);
				progressed = true;
			}
		}
		return progressed;
	}

}
