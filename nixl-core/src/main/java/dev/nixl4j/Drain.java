package dev.nixl4j;

import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

/**
 * Graceful drain of an agent before it closes: new posts are refused, posts in flight and
 * the work of {@link DrainParticipant}s may end until a deadline, and the result names
 * what was left. The agent is not closed by the drain; its owner closes it afterwards,
 * which cancels what is left.
 *
 * <pre>{@code
 * Drain drain = Drain.attach(agent);          // once, when the agent is created
 * ...
 * DrainResult result = drain.drain(Duration.ofSeconds(30), List.of(kvProducer));
 * if (!result.isComplete()) {
 *     log(result.transfersLeft().size() + " transfer(s) are cancelled");
 * }
 * kvProducer.close();
 * agent.close();
 * }</pre>
 *
 * <p>
 * A drain is a {@link TransferListener} that counts the posts it admitted; it only sees
 * posts made after it was added to the agent. Once {@linkplain #drain draining} began its
 * {@link #beforePost} refuses every post with a {@link NixlException} of status
 * {@link NixlStatus#UNAVAILABLE}, so, as the listener contract says, listeners added
 * before it hear {@code postRefused} and listeners added after it hear nothing of that
 * post.
 *
 * <p>
 * Thread-safe. Draining is one-way: a drained agent accepts no post through this drain
 * again.
 */
public final class Drain implements TransferListener {

	private final String agentName;

	private final ReentrantLock lock = new ReentrantLock();

	private final Condition idle = this.lock.newCondition();

	/**
	 * Posts admitted and not yet ended, counted per transfer (the same transfer may be
	 * posted again).
	 */
	private final Map<Transfer, Integer> inFlight = new IdentityHashMap<>();

	private boolean draining;

	/**
	 * Creates a drain that is not yet added to an agent: for code that adds its listeners
	 * itself (the Spring Boot starter applies it in its listener order).
	 * @param agentName the name of the agent it will be added to, for the refusals'
	 * messages
	 */
	public Drain(String agentName) {
		this.agentName = Objects.requireNonNull(agentName, "agentName");
	}

	/**
	 * Creates a drain and adds it to the agent's transfer listeners.
	 * @param agent the agent
	 * @return the drain, counting the agent's posts from now on
	 */
	public static Drain attach(NixlAgent agent) {
		Drain drain = new Drain(agent.name());
		agent.addTransferListener(drain);
		return drain;
	}

	/**
	 * Refuses the post once draining began, else counts it in flight.
	 * @param transfer the transfer
	 * @throws NixlException of status {@link NixlStatus#UNAVAILABLE} once draining began
	 */
	@Override
	public void beforePost(Transfer transfer) {
		this.lock.lock();
		try {
			if (this.draining) {
				throw new NixlException(NixlStatus.UNAVAILABLE, "post_xfer_req", this.agentName, transfer.remoteAgent(),
						"the application is shutting down and accepts no new transfers");
			}
			this.inFlight.merge(transfer, 1, Integer::sum);
		}
		finally {
			this.lock.unlock();
		}
	}

	@Override
	public void postRefused(Transfer transfer, RuntimeException reason) {
		ended(transfer);
	}

	@Override
	public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
			@Nullable NixlException failure) {
		ended(transfer);
	}

	private void ended(Transfer transfer) {
		this.lock.lock();
		try {
			this.inFlight.computeIfPresent(transfer, (t, count) -> (count == 1) ? null : count - 1);
			if (this.inFlight.isEmpty()) {
				this.idle.signalAll();
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Whether draining began.
	 * @return {@code true} once {@link #drain} was called
	 */
	public boolean isDraining() {
		this.lock.lock();
		try {
			return this.draining;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Drains with no participants: see {@link #drain(Duration, List)}.
	 * @param timeout how long to wait at most
	 * @return what was left
	 */
	public DrainResult drain(Duration timeout) {
		return drain(timeout, List.of());
	}

	/**
	 * Refuses every later post, waits for the posts in flight to end and then for each
	 * participant, in order, to end its work, all within one timeout. Returns by the
	 * timeout (give or take a participant that overruns its own); an interrupt ends the
	 * wait early, with the thread's interrupt status set.
	 * @param timeout how long to wait at most, in all
	 * @param participants components whose work is waited for after the posts
	 * @return the posts and the participants' work still left when it returned
	 * @throws IllegalArgumentException when the timeout is negative
	 */
	public DrainResult drain(Duration timeout, List<? extends DrainParticipant> participants) {
		if (timeout.isNegative()) {
			throw new IllegalArgumentException("drain timeout must not be negative, was " + timeout);
		}
		List<DrainParticipant> waitedFor = List.copyOf(participants);
		long start = System.nanoTime();
		long deadline = start + timeout.toNanos();
		List<Transfer> transfersLeft = awaitIdle(deadline);
		List<DrainResult.Pending> participantsLeft = new ArrayList<>();
		for (DrainParticipant participant : waitedFor) {
			long remaining = Math.max(0, deadline - System.nanoTime());
			if (Thread.currentThread().isInterrupted() || !participant.awaitDrained(Duration.ofNanos(remaining))) {
				participantsLeft.add(new DrainResult.Pending(participant, participant.pendingWork()));
			}
		}
		return new DrainResult(transfersLeft, participantsLeft, Duration.ofNanos(System.nanoTime() - start));
	}

	private List<Transfer> awaitIdle(long deadline) {
		this.lock.lock();
		try {
			this.draining = true;
			long remaining = deadline - System.nanoTime();
			while (!this.inFlight.isEmpty() && remaining > 0) {
				try {
					remaining = this.idle.awaitNanos(remaining);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					break;
				}
			}
			return List.copyOf(this.inFlight.keySet());
		}
		finally {
			this.lock.unlock();
		}
	}

}
