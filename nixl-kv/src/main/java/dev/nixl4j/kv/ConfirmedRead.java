package dev.nixl4j.kv;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferRefusedException;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

/**
 * One pull's READ of a lease's blocks and its wait for the producer's answer, for a
 * {@link KvConsumer}: the done message travels with the READ, is sent again when no
 * answer came within the resend bound, and answers that come late or twice are taken and
 * dropped so that none sits in the mailbox. A pull returns only when the producer
 * answered {@link LeaseConfirmation#HELD} and the blocks match the lease's checksums, if
 * it carries any.
 */
final class ConfirmedRead {

	private static final System.Logger logger = System.getLogger(KvConsumer.class.getName());

	/**
	 * How long a late confirmation is waited for and dropped, so it does not sit in the
	 * mailbox.
	 */
	private static final Duration LATE_ANSWER = Duration.ofMinutes(10);

	/**
	 * How long answers to repeated done messages are waited for and dropped once the
	 * producer answered one: it answers each message it gets within about a round trip,
	 * so a repeat whose answer did not come by then was lost, and the wait ends rather
	 * than stay among the agent's waiters for {@link #LATE_ANSWER}.
	 */
	private static final Duration DUPLICATE_ANSWER = Duration.ofSeconds(30);

	/** NIXL's name of the operation that posts a transfer. */
	private static final String POST_OPERATION = "post_xfer_req";

	private final PagedKvCache cache;

	private final NixlAgent agent;

	private final String prefix;

	private final Duration confirmationResend;

	private final PullListeners listeners;

	private final AtomicLong integrityFailures = new AtomicLong();

	private final AtomicLong confirmationResends = new AtomicLong();

	ConfirmedRead(PagedKvCache cache, String prefix, Duration confirmationResend, PullListeners listeners) {
		this.cache = cache;
		this.agent = cache.agent();
		this.prefix = prefix;
		this.confirmationResend = confirmationResend;
		this.listeners = listeners;
	}

	long integrityFailures() {
		return this.integrityFailures.get();
	}

	long confirmationResends() {
		return this.confirmationResends.get();
	}

	/**
	 * Compares the CRC32C of each local block with the producer's checksum of the slice
	 * this rank read.
	 */
	private void verify(KvTransferParams params, int[] localBlockIds, int[] remoteIds, int slice) {
		List<Integer> checksums = params.checksums();
		if (checksums.isEmpty()) {
			return;
		}
		int n = localBlockIds.length;
		for (int i = 0; i < n; i++) {
			if (this.cache.crc32c(localBlockIds[i], 1, 0) != checksums.get(slice * n + i)) {
				this.integrityFailures.incrementAndGet();
				throw new KvIntegrityException(this.agent.name(), params.producerAgent(), params.requestId(),
						remoteIds[i], localBlockIds[i], slice);
			}
		}
	}

	/**
	 * READs the blocks and waits for the producer's confirmation.
	 * @throws Failed when the READ failed or was given up: whether it was posted, and
	 * whether it may still land
	 * @throws KvLeaseLostException when the READ landed but the producer did not confirm
	 * the lease, or the blocks do not match its checksums
	 */
	void read(KvTransferParams params, RemoteCacheHandle remote, int[] localBlockIds, int[] remoteIds, int slice,
			long deadline, KvObserver.Pull observed) {
		String producer = params.producerAgent();
		int ranks = params.consumerRanks();
		String ackPrefix = KvMessages.ackPrefix(this.prefix, params.requestId(), params.leaseId(), slice);
		NotificationMatcher ackMatcher = NotificationMatcher.prefix(producer, ackPrefix);
		CompletableFuture<Notification> ack = this.agent.expectNotification(ackMatcher, remaining(deadline));
		// names this READ, so that the producer tells a repeat of its done message from
		// the done message of another READ of the lease
		long read = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
		byte[] done = KvMessages.done(this.prefix, params.requestId(), params.leaseId(), slice, params.generation(),
				read, observed.traceContext());
		boolean posted = false;
		KvObserver.Step reading = observed.read();
		try (Transfer transfer = this.cache.createBlockTransfer(XferOp.READ, localBlockIds, remote, ranks, slice,
				remoteIds, done)) {
			posted = !failedToPost(transfer.post());
			transfer.await(remaining(deadline));
		}
		catch (NixlException ex) {
			reading.end(null, ex);
			// a READ given up while in flight may still land, and be answered
			boolean mayLand = posted && (ex.status() == NixlStatus.TIMEOUT || ex.status() == NixlStatus.CANCELLED);
			giveUpAnswer(ackMatcher, ack, mayLand);
			if (ex instanceof TransferRefusedException refused) {
				// admission control refused the post before the engine saw it: it says
				// why
				throw new Failed(refused, false, false);
			}
			// The READ itself failed (the producer's connection dropped, say): no lease
			// expired.
			throw new Failed(new NixlException(ex.status(), "kv_pull", this.agent.name(), producer,
					"reading the blocks of request '" + params.requestId() + "' from producer '" + producer
							+ "' failed: " + ex.getMessage(),
					ex, ex.retryable() || ex.status() == NixlStatus.ERROR_BACKEND), posted, mayLand);
		}
		catch (RuntimeException ex) {
			reading.end(null, ex);
			giveUpAnswer(ackMatcher, ack, posted);
			throw new Failed(ex, posted, posted);
		}
		long landed = System.nanoTime();
		reading.end(null, null);
		KvObserver.Step confirming = observed.confirmation();
		Resent resent = awaitAnswer(producer, ack, done, deadline);
		Notification answer = resent.answer();
		LeaseConfirmation confirmation = (answer != null) ? KvMessages.parseAck(ackPrefix, answer.text()) : null;
		confirming.end(confirmation, resent.failure());
		if (answer == null) {
			// The READ landed, so the producer may still answer each done message sent:
			// take those answers when they come.
			dropLateAnswers(ackMatcher, 1 + resent.resends(), LATE_ANSWER);
			throw new KvLeaseLostException(this.agent.name(), producer, params.requestId(), null,
					"no confirmation of the lease of request '" + params.requestId() + "' (lease " + params.leaseId()
							+ ") came in time: the blocks read must not be used",
					resent.failure());
		}
		long answered = System.nanoTime() - landed;
		this.listeners.confirmed(producer, answered);
		// each done message repeated may be answered too: those answers are dropped
		dropLateAnswers(ackMatcher, resent.resends(), DUPLICATE_ANSWER);
		if (confirmation != LeaseConfirmation.HELD) {
			LeaseConfirmation refused = (confirmation != null) ? confirmation : LeaseConfirmation.UNKNOWN;
			throw new KvLeaseLostException(this.agent.name(), producer, params.requestId(), refused,
					"the producer answered " + refused + " for request '" + params.requestId() + "' (lease "
							+ params.leaseId() + "): its blocks may have been reused, the data read must not be used",
					null);
		}
		verify(params, localBlockIds, remoteIds, slice);
	}

	/**
	 * Waits for the producer's answer to a READ that completed. When none came within the
	 * resend bound, the done message is sent again on its own (the READ's notification or
	 * the answer may have been lost; the producer answers a repeat as it answered the
	 * first), and again after each further bound, doubled, up to
	 * {@link KvConsumer#MAX_CONFIRMATION_RESENDS} times, until the answer comes or the
	 * deadline passes.
	 * @return the answer, or why none came by the deadline
	 */
	private Resent awaitAnswer(String producer, CompletableFuture<Notification> ack, byte[] done, long deadline) {
		long bound = this.confirmationResend.toNanos();
		int resends = 0;
		while (bound > 0 && resends < KvConsumer.MAX_CONFIRMATION_RESENDS) {
			long left = deadline - System.nanoTime();
			if (left <= bound) {
				break;
			}
			try {
				return new Resent(ack.get(bound, TimeUnit.NANOSECONDS), null, resends);
			}
			catch (TimeoutException ex) {
				resends++;
				resend(producer, done);
				bound = Math.min(bound * 2, Long.MAX_VALUE / 4);
			}
			catch (ExecutionException ex) {
				return new Resent(null, ex.getCause(), resends);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				ack.cancel(false);
				return new Resent(null, ex, resends);
			}
		}
		try {
			return new Resent(ack.join(), null, resends);
		}
		catch (CompletionException ex) {
			return new Resent(null, ex.getCause(), resends);
		}
	}

	/**
	 * Sends a done message again on its own. Counted even when the send fails: the wait
	 * for the answer goes on until the deadline whatever the send did.
	 */
	private void resend(String producer, byte[] done) {
		this.confirmationResends.incrementAndGet();
		try {
			this.agent.sendNotification(producer, done);
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.DEBUG, "Could not repeat a done message to ''{0}'': {1}", producer,
					ex.getMessage());
		}
	}

	/**
	 * Waits for up to {@code count} answers that may still come, one after the other, and
	 * drops them, so that none sits in the mailbox. One wait at a time per pull: the next
	 * starts when the previous took an answer, and none after one waited {@code wait} in
	 * vain.
	 */
	private void dropLateAnswers(NotificationMatcher ackMatcher, int count, Duration wait) {
		if (count <= 0) {
			return;
		}
		try {
			this.agent.expectNotification(ackMatcher, wait).thenRun(() -> dropLateAnswers(ackMatcher, count - 1, wait));
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.DEBUG, "Cannot wait for a late confirmation: {0}", ex.getMessage());
		}
	}

	/**
	 * The answer to a READ (or why none came) and how many times its done message was
	 * sent again.
	 */
	private record Resent(@Nullable Notification answer, @Nullable Throwable failure, int resends) {
	}

	/**
	 * Whether the engine refused to post a transfer: it failed in {@code post_xfer_req},
	 * so that nothing was transferred and no notification sent.
	 */
	private static boolean failedToPost(CompletableFuture<Transfer> completion) {
		return completion.state() == Future.State.FAILED && completion.exceptionNow() instanceof NixlException ex
				&& POST_OPERATION.equals(ex.operation());
	}

	/**
	 * Stops waiting for the confirmation of a READ that failed on this side. When the
	 * READ may still land, the producer may answer it later: that answer is waited for
	 * and dropped, so it does not sit in the mailbox, where a retried pull of the same
	 * lease would take it for the answer to its own READ.
	 */
	private void giveUpAnswer(NotificationMatcher ackMatcher, CompletableFuture<Notification> ack, boolean mayLand) {
		ack.cancel(false);
		if (!mayLand || !ack.isCompletedExceptionally()) {
			// the answer came already, and was taken by the wait
			return;
		}
		try {
			this.agent.expectNotification(ackMatcher, LATE_ANSWER);
		}
		catch (RuntimeException ex) {
			logger.log(System.Logger.Level.DEBUG, "Cannot wait for a late confirmation: {0}", ex.getMessage());
		}
	}

	private static Duration remaining(long deadline) {
		return Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
	}

	/**
	 * A READ that failed or was given up on this side, and what is known of its bytes.
	 */
	static final class Failed extends RuntimeException {

		private static final long serialVersionUID = 1L;

		/** What the caller of the pull is told. */
		final transient RuntimeException failure;

		/**
		 * Whether the READ was posted; when it was not, no byte moved and no notification
		 * was sent.
		 */
		final boolean posted;

		/**
		 * Whether the READ was given up while in flight, so that it may still land in the
		 * local blocks.
		 */
		final boolean mayLand;

		Failed(RuntimeException failure, boolean posted, boolean mayLand) {
			super(failure.getMessage(), failure, false, false);
			this.failure = failure;
			this.posted = posted;
			this.mayLand = mayLand;
		}

	}

}
