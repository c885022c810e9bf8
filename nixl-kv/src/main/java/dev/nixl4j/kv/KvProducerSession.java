package dev.nixl4j.kv;

import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A snapshot of a {@link KvConsumer}'s session with one producer, for health checks and
 * endpoints.
 *
 * @param producer the producer's agent
 * @param state where the session stands
 * @param incarnation the incarnation of the producer's cache last resolved, {@code ""}
 * when none
 * @param since when the session entered its state
 * @param reason why it is not {@link KvSessionState#CONNECTED}, {@code null} when it is
 * or when it is new
 * @param reconnects how many times the session was lost and connected anew: reset after a
 * failure in the backend, or connected to another incarnation of the producer's cache (it
 * restarted)
 */
public record KvProducerSession(String producer, KvSessionState state, String incarnation, Instant since,
		@Nullable String reason, long reconnects) {

	/**
	 * Checks the snapshot.
	 * @param producer producer
	 * @param state state
	 * @param incarnation incarnation
	 * @param since since
	 * @param reason reason
	 * @param reconnects reconnects
	 */
	public KvProducerSession {
		Objects.requireNonNull(producer, "producer");
		Objects.requireNonNull(state, "state");
		Objects.requireNonNull(incarnation, "incarnation");
		Objects.requireNonNull(since, "since");
	}

}
