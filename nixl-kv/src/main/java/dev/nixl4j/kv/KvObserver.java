package dev.nixl4j.kv;

import org.jspecify.annotations.Nullable;

/**
 * Observes the steps of the KV protocol with the trace context each carries, so that an
 * integration (tracing, logging) sees one request on both workers: set on a
 * {@link KvProducer} ({@link KvProducer#observer}) and a {@link KvConsumer}
 * ({@link KvConsumer.Builder#observer}). Every method has a default that does nothing;
 * {@link #NONE}, the default of both, costs a pull nothing but a few calls that return
 * shared constants.
 *
 * <p>
 * The steps, with the context each takes:
 * <ul>
 * <li>{@link #leaseTaken}: the producer took a lease; what it returns becomes the
 * parameters' {@link KvTransferParams#traceContext() trace context};</li>
 * <li>{@link #confirming}: the producer decides and sends its answer to a consumer's done
 * message, which carried the context of the consumer's pull;</li>
 * <li>{@link #pullStarted}: a consumer's pull, under the lease's context; the pull's own
 * context ({@link Pull#traceContext()}) goes into its done message; within it
 * {@link Pull#read()} (the READ from post to completion) and {@link Pull#confirmation()}
 * (the wait for the producer's answer).</li>
 * </ul>
 * Methods are called on the threads that run the protocol (a pull's caller, the agent's
 * notification thread, the producer's thread): they must be quick and must not throw.
 */
public interface KvObserver {

	/** Observes nothing. */
	KvObserver NONE = new KvObserver() {
	};

	/**
	 * The producer took a lease, on the thread that called {@link KvProducer#lease},
	 * before it returns the lease; the lease's {@link KvLease#outcome() outcome} says
	 * when and how it ended.
	 * @param lease the lease
	 * @return the trace context that the parameters handed to the consumer carry (that of
	 * a step covering the lease, for example), or {@code null} for none
	 */
	default @Nullable KvTraceContext leaseTaken(KvLease lease) {
		return null;
	}

	/**
	 * The producer starts answering a consumer's done message.
	 * @param consumer the consumer's agent
	 * @param requestId the request the message names
	 * @param leaseId the lease the message names
	 * @param pull the trace context of the consumer's pull, from the message, or
	 * {@code null} when it carried none (or a malformed one)
	 * @return the step, ended once the answer was sent
	 */
	default Step confirming(String consumer, String requestId, long leaseId, @Nullable KvTraceContext pull) {
		return Step.NONE;
	}

	/**
	 * A consumer starts a pull.
	 * @param params the lease's parameters, with the producer's trace context if any
	 * @return the pull, ended when {@link KvConsumer#pull} returns or throws
	 */
	default Pull pullStarted(KvTransferParams params) {
		return Pull.NONE;
	}

	/**
	 * A step that ends once: with the producer's answer when it is about one, and with
	 * what failed if it failed.
	 */
	interface Step {

		/** A step observed by nobody. */
		Step NONE = new Step() {
		};

		/**
		 * Ends the step.
		 * @param confirmation the producer's answer, when the step is about one and it is
		 * known
		 * @param failure what failed, or {@code null}
		 */
		default void end(@Nullable LeaseConfirmation confirmation, @Nullable Throwable failure) {
		}

	}

	/**
	 * A consumer's pull: a step with the READ and the confirmation wait within it.
	 */
	interface Pull extends Step {

		/** A pull observed by nobody. */
		Pull NONE = new Pull() {
		};

		/**
		 * Returns the pull's trace context, which its done message carries to the
		 * producer.
		 * @return the context, or {@code null} for none (the done message then has no
		 * trace field, as before)
		 */
		default @Nullable KvTraceContext traceContext() {
			return null;
		}

		/**
		 * The pull posts its READ.
		 * @return the step, ended when the READ completed or failed
		 */
		default Step read() {
			return Step.NONE;
		}

		/**
		 * The pull starts waiting for the producer's answer.
		 * @return the step, ended with the answer or without one
		 */
		default Step confirmation() {
			return Step.NONE;
		}

	}

}
