package dev.nixl4j.kv;

import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.NotificationSubscription;
import org.jspecify.annotations.Nullable;

/**
 * Answers a {@link KvProducer}'s consumers: takes their done and release messages through
 * two standing subscriptions, has the {@link LeaseTable} decide them, and sends the
 * answer. A consumer whose metadata is loaded is answered at once on the thread that
 * delivered its done message (the agent's progress loop: the lease table's lock and
 * {@code genNotif}, nothing that waits); the rest, and answers that need the consumer's
 * metadata loaded first, run on the {@link ProducerThread}.
 */
final class ConsumerAnswers implements AutoCloseable {

	private static final System.Logger logger = System.getLogger(KvProducer.class.getName());

	/**
	 * The pause between two attempts to answer a consumer whose metadata could not be
	 * loaded.
	 */
	private static final Duration ANSWER_RETRY = Duration.ofMillis(200);

	private final NixlAgent agent;

	private final PeerLoader peers;

	private final String prefix;

	private final Duration peerTimeout;

	private final KvObserver observer;

	private final LeaseTable leases;

	private final ProducerThread thread;

	private final NotificationMatcher doneMatcher;

	private final NotificationMatcher releaseMatcher;

	private final List<NotificationSubscription> subscriptions = new ArrayList<>();

	ConsumerAnswers(NixlAgent agent, PeerLoader peers, String prefix, Duration peerTimeout, KvObserver observer,
			LeaseTable leases, ProducerThread thread) {
		this.agent = agent;
		this.peers = peers;
		this.prefix = prefix;
		this.peerTimeout = peerTimeout;
		this.observer = observer;
		this.leases = leases;
		this.thread = thread;
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
				this.subscriptions
					.add(this.agent.subscribeNotifications(matcher, (matcher == this.doneMatcher) ? this::onDone
							: (notification) -> this.thread.handOver(() -> received(matcher, notification))));
			}
			catch (NixlException ex) {
				logger.log(Level.WARNING, "KV producer of agent ''{0}'' stops answering consumers: {1}",
						this.agent.name(), ex.getMessage());
			}
		}
	}

	/**
	 * A consumer reported its read: answered at once, on the delivering thread, when its
	 * metadata is loaded; else on the producer's thread, which may load it first.
	 * Whatever throws here is caught: the delivering thread would drop it unseen.
	 */
	private void onDone(Notification notification) {
		if (!this.agent.hasRemoteMetadata(notification.remoteAgent())) {
			this.thread.handOver(() -> received(this.doneMatcher, notification));
			return;
		}
		this.leases.startAnswering();
		LeaseTable.Answer decided = null;
		try {
			decided = decide(notification);
			if (decided != null) {
				this.agent.sendNotification(decided.consumer(), decided.ack());
				decided.step().end(decided.confirmation(), null);
			}
		}
		catch (RuntimeException | Error ex) {
			if (decided != null) {
				decided.step().end(decided.confirmation(), ex);
			}
			couldNotAnswer(notification.remoteAgent(), "", ex);
		}
		LeaseTable.Answer answer = decided;
		Runnable rest = () -> {
			try {
				if (answer != null) {
					concluded(answer);
				}
			}
			finally {
				this.leases.answered();
			}
		};
		if (!this.thread.handOver(rest)) {
			this.leases.answered();
		}
	}

	private void received(NotificationMatcher matcher, Notification notification) {
		this.leases.startAnswering();
		try {
			if (matcher == this.releaseMatcher) {
				release(notification);
			}
			else {
				answer(notification);
			}
		}
		catch (RuntimeException | Error ex) {
			couldNotAnswer(notification.remoteAgent(), "", ex);
		}
		finally {
			this.leases.answered();
		}
	}

	private void answer(Notification notification) {
		LeaseTable.Answer answer = decide(notification);
		if (answer == null) {
			return;
		}
		Throwable failure = null;
		try {
			sendAck(answer.consumer(), answer.ack(), System.nanoTime() + this.peerTimeout.toNanos());
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			answer.step().end(answer.confirmation(), failure);
			concluded(answer);
		}
	}

	/**
	 * Decides a consumer's report against the lease it names; {@code null} for a
	 * malformed message.
	 */
	private LeaseTable.@Nullable Answer decide(Notification notification) {
		String consumer = notification.remoteAgent();
		KvMessages.Done done = KvMessages.parseDone(this.prefix, notification.text());
		if (done == null) {
			ignoredMalformed(notification);
			return null;
		}
		KvObserver.Step step = this.observer.confirming(consumer, done.requestId(), done.leaseId(), done.trace());
		return this.leases.decide(consumer, done, step);
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
	 * Sends an answer; while the consumer's metadata cannot be loaded, tries again until
	 * the deadline.
	 */
	private void sendAck(String consumer, byte[] ack, long deadline) {
		try {
			this.peers.load(this.agent, consumer, this.peerTimeout);
		}
		catch (NixlException ex) {
			if (deadline - System.nanoTime() <= 0 || !this.agent.isOpen()) {
				throw ex;
			}
			logger.log(Level.DEBUG, "KV producer of agent ''{0}'' cannot reach ''{1}'' yet, trying again: {2}",
					this.agent.name(), consumer, ex.getMessage());
			// counted until it is sent or given up, so that awaitLeasesEnded waits for it
			this.leases.startAnswering();
			try {
				this.thread.schedule(() -> {
					try {
						sendAck(consumer, ack, deadline);
					}
					catch (RuntimeException | Error failure) {
						// the scheduler would hide it in the task's future
						couldNotAnswer(consumer, " again", failure);
					}
					finally {
						this.leases.answered();
					}
				}, ANSWER_RETRY.toNanos(), TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException closed) {
				this.leases.answered();
				logger.log(Level.DEBUG, "KV producer closed before answering ''{0}''", consumer);
			}
			return;
		}
		this.agent.sendNotification(consumer, ack);
	}

	/**
	 * Reports what answering a consumer threw: a failure is logged, an {@link Error}
	 * logged and counted as survived (the unit named with {@code again} appended);
	 * neither is thrown on.
	 */
	private void couldNotAnswer(String consumer, String again, Throwable failure) {
		if (failure instanceof Error error) {
			this.thread.survived("answering '" + consumer + "'" + again, error);
		}
		else {
			logger.log(Level.WARNING, "KV producer of agent ''{0}'' could not answer ''{1}'': {2}", this.agent.name(),
					consumer, failure.toString());
		}
	}

	/**
	 * Ends a lease a consumer gave back; a release of a lease not held for that agent
	 * changes nothing.
	 */
	private void release(Notification notification) {
		String consumer = notification.remoteAgent();
		KvMessages.Done release = KvMessages.parseRelease(this.prefix, notification.text());
		if (release == null) {
			ignoredMalformed(notification);
			return;
		}
		LeaseTable.Released released = this.leases.release(release, consumer);
		if (released == null) {
			logger.log(Level.INFO,
					"KV producer of agent ''{0}'' ignored a release of request ''{1}'' (lease {2}) from ''{3}'':"
							+ " no such lease is held for that agent",
					this.agent.name(), release.requestId(), Long.toString(release.leaseId()), consumer);
			return;
		}
		logger.log(Level.DEBUG, "KV lease of request ''{0}'' (lease {1}) released by ''{2}''", release.requestId(),
				Long.toString(release.leaseId()), consumer);
		this.leases.conclude(released.lease(), released.reused(), LeaseOutcome.RELEASED);
	}

	private void ignoredMalformed(Notification notification) {
		logger.log(Level.WARNING,
				"KV producer of agent ''{0}'' ignored a malformed notification of {1} bytes from ''{2}''",
				this.agent.name(), notification.message().length, notification.remoteAgent());
	}

	/** Stops taking the consumers' notifications. */
	@Override
	public void close() {
		synchronized (this.subscriptions) {
			this.subscriptions.forEach(NotificationSubscription::close);
			this.subscriptions.clear();
		}
	}

}
