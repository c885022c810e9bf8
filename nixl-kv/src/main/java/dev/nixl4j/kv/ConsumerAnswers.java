package dev.nixl4j.kv;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.NotificationSubscription;

/**
 * Answers a {@link KvProducer}'s consumers: takes their done and release messages through
 * two standing subscriptions, has the {@link LeaseTable} decide them on the thread that
 * delivered them (the agent's progress loop: the lease table's lock and the release of
 * blocks, nothing that waits), and sends the answer there too when the consumer's
 * metadata is loaded. An answer whose consumer is not loaded waits in
 * {@link PendingAnswers}, whose own threads look the consumer up; the outcomes of the
 * leases that ended, and the logs, run on the {@link LeaseThread}. So nothing a peer
 * sends waits on the thread that expires leases and ends their outcomes.
 */
final class ConsumerAnswers implements AutoCloseable {

	private static final System.Logger logger = System.getLogger(KvProducer.class.getName());

	private final NixlAgent agent;

	private final String prefix;

	private final KvObserver observer;

	private final LeaseTable leases;

	private final LeaseThread thread;

	private final PendingAnswers pending;

	private final NotificationMatcher doneMatcher;

	private final NotificationMatcher releaseMatcher;

	private final List<NotificationSubscription> subscriptions = new ArrayList<>();

	ConsumerAnswers(NixlAgent agent, PeerLoader peers, String prefix, Duration peerTimeout, KvObserver observer,
			LeaseTable leases, LeaseThread thread) {
		this.agent = agent;
		this.prefix = prefix;
		this.observer = observer;
		this.leases = leases;
		this.thread = thread;
		this.pending = new PendingAnswers(agent, peers, peerTimeout, thread);
		this.doneMatcher = NotificationMatcher.prefix(null, KvMessages.donePrefix(prefix));
		this.releaseMatcher = NotificationMatcher.prefix(null, KvMessages.releasePrefix(prefix));
		subscribe(this.doneMatcher);
		subscribe(this.releaseMatcher);
	}

	/**
	 * Takes the consumers' notifications as they arrive, ahead of anything waiting in the
	 * agent's mailbox.
	 */
	private void subscribe(NotificationMatcher matcher) {
		synchronized (this.subscriptions) {
			try {
				this.subscriptions.add(this.agent.subscribeNotifications(matcher,
						(matcher == this.doneMatcher) ? this::onDone : this::onRelease));
			}
			catch (NixlException ex) {
				logger.log(Level.WARNING, "KV producer of agent ''{0}'' stops answering consumers: {1}",
						this.agent.name(), ex.getMessage());
			}
		}
	}

	/**
	 * A consumer reported its read: decided and answered at once, on the delivering
	 * thread, when its metadata is loaded; else the answer waits for it in
	 * {@link PendingAnswers}. A message from another agent than the lease's consumer is
	 * not answered. Whatever throws here is caught: the delivering thread would drop it
	 * unseen.
	 */
	private void onDone(Notification notification) {
		String consumer = notification.remoteAgent();
		try {
			KvMessages.Done done = KvMessages.parseDone(this.prefix, notification.text());
			if (done == null) {
				ignoredMalformed(notification);
				return;
			}
			LeaseTable.Answer answer = this.leases.decide(consumer, done);
			if (answer == null) {
				ignoredStranger("done", done, consumer);
				return;
			}
			answer(answer);
		}
		catch (RuntimeException | Error ex) {
			couldNotAnswer(consumer, ex);
		}
	}

	/**
	 * Sends an answer now when the consumer's metadata is loaded (and no earlier answer
	 * to it waits), else hands it to {@link PendingAnswers}; counted until sent or given
	 * up, so that a drain waits for it. Once it was sent or given up, the rest of the
	 * answer ({@link #concludeLater}) goes to the producer's thread: a lease's outcome
	 * follows the answer to the consumer that ended it.
	 */
	private void answer(LeaseTable.Answer answer) {
		String consumer = answer.consumer();
		KvObserver.Step step = confirming(answer);
		this.leases.startAnswering();
		PendingAnswers.Outcome outcome = (failure) -> {
			try {
				step.end(answer.confirmation(), failure);
			}
			finally {
				try {
					concludeLater(answer);
				}
				finally {
					this.leases.answered();
				}
			}
		};
		boolean loaded;
		try {
			loaded = this.agent.hasRemoteMetadata(consumer);
		}
		catch (RuntimeException ex) {
			// the agent closed: the answer cannot be sent
			outcome.ended(ex);
			return;
		}
		if (this.pending.take(consumer, answer.ack(), outcome, loaded)) {
			return;
		}
		Throwable failure = null;
		try {
			this.agent.sendNotification(consumer, answer.ack());
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			couldNotAnswer(consumer, ex);
		}
		outcome.ended(failure);
	}

	/**
	 * Tells the observer that an answer starts; an observer that throws is counted and
	 * observes nothing of it.
	 */
	private KvObserver.Step confirming(LeaseTable.Answer answer) {
		KvMessages.Done done = answer.done();
		try {
			return this.observer.confirming(answer.consumer(), done.requestId(), done.leaseId(), done.trace());
		}
		catch (RuntimeException | Error ex) {
			couldNotAnswer(answer.consumer(), ex);
			return KvObserver.Step.NONE;
		}
	}

	/**
	 * Hands the rest of an answer to the producer's thread: the outcome of the lease it
	 * ended, and the log of an answer that was not {@link LeaseConfirmation#HELD}.
	 */
	private void concludeLater(LeaseTable.Answer answer) {
		if (answer.ended() == null && answer.confirmation() == LeaseConfirmation.HELD) {
			return;
		}
		this.leases.startAnswering();
		Runnable rest = () -> {
			try {
				concluded(answer);
			}
			finally {
				this.leases.answered();
			}
		};
		if (!this.thread.handOver(rest)) {
			this.leases.answered();
		}
	}

	/**
	 * Ends the outcome of a lease the answer completed, and logs an answer that was not
	 * {@link LeaseConfirmation#HELD}.
	 */
	private void concluded(LeaseTable.Answer answer) {
		KvLease ended = answer.ended();
		if (ended != null) {
			this.leases.conclude(ended, answer.reused(), answer.outcome());
		}
		if (answer.confirmation() != LeaseConfirmation.HELD) {
			logger.log(Level.INFO,
					"KV producer of agent ''{0}'' answers {1} to ''{2}'' for request ''{3}'' (lease {4})",
					this.agent.name(), answer.confirmation(), answer.consumer(), answer.done().requestId(),
					Long.toString(answer.done().leaseId()));
		}
	}

	/**
	 * Reports what answering a consumer threw: a failure is logged, an {@link Error}
	 * logged and counted as survived; neither is thrown on.
	 */
	private void couldNotAnswer(String consumer, Throwable failure) {
		if (failure instanceof Error error) {
			this.thread.survived("answering '" + consumer + "'", error);
		}
		else {
			logger.log(Level.WARNING, "KV producer of agent ''{0}'' could not answer ''{1}'': {2}", this.agent.name(),
					consumer, failure.toString());
		}
	}

	/**
	 * A consumer gives a lease back: decided on the delivering thread, the lease's
	 * outcome ended on the producer's thread. A release of a lease not held for that
	 * agent changes nothing.
	 */
	private void onRelease(Notification notification) {
		String consumer = notification.remoteAgent();
		try {
			KvMessages.Done release = KvMessages.parseRelease(this.prefix, notification.text());
			if (release == null) {
				ignoredMalformed(notification);
				return;
			}
			LeaseTable.Released released = this.leases.release(release, consumer);
			if (released == null) {
				ignoredStranger("release", release, consumer);
				return;
			}
			this.leases.startAnswering();
			Runnable rest = () -> {
				try {
					logger.log(Level.DEBUG, "KV lease of request ''{0}'' (lease {1}) released by ''{2}''",
							release.requestId(), Long.toString(release.leaseId()), consumer);
					this.leases.conclude(released.lease(), released.reused(), LeaseOutcome.RELEASED);
				}
				finally {
					this.leases.answered();
				}
			};
			if (!this.thread.handOver(rest)) {
				this.leases.answered();
			}
		}
		catch (RuntimeException | Error ex) {
			couldNotAnswer(consumer, ex);
		}
	}

	/**
	 * Logs, at DEBUG (a peer may send any number of them), a message that names no lease
	 * held or remembered for its sender: a lease not held, or one whose consumer is
	 * another agent (counted by {@link LeaseTable#ignoredMessages()}).
	 */
	private void ignoredStranger(String kind, KvMessages.Done message, String sender) {
		logger.log(Level.DEBUG,
				() -> "KV producer of agent '" + this.agent.name() + "' ignored a " + kind + " of request '"
						+ message.requestId() + "' (lease " + message.leaseId() + ", rank " + message.rank()
						+ ") from '" + sender + "': no such lease is held for that agent");
	}

	private void ignoredMalformed(Notification notification) {
		logger.log(Level.WARNING,
				"KV producer of agent ''{0}'' ignored a malformed notification of {1} bytes from ''{2}''",
				this.agent.name(), notification.message().length, notification.remoteAgent());
	}

	/**
	 * Returns the answers that wait for their consumer's metadata.
	 * @return them
	 */
	PendingAnswers pending() {
		return this.pending;
	}

	/**
	 * Stops taking the consumers' notifications and drops the answers that wait for their
	 * consumer's metadata.
	 */
	@Override
	public void close() {
		synchronized (this.subscriptions) {
			this.subscriptions.forEach(NotificationSubscription::close);
			this.subscriptions.clear();
		}
		this.pending.close();
	}

}
