package dev.nixl4j;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.nixl4j.testsupport.NativeNixl;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Measures how much a flood of unclaimed notifications from one peer delays another
 * peer's confirmations: agent C sends {@code ping/<i>} to agent P, whose subscription
 * answers {@code pong/<i>}, for which C waits; first alone, then while agent J sends junk
 * to P as fast as it can. Prints the round trips' percentiles; asserts only that every
 * round trip completed within a few seconds and that P dropped junk (timings are figures
 * to read, not to assert).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NotificationFloodLatencyTest {

	private static final int ROUND_TRIPS = 500;

	private static final Duration ROUND_TRIP_LIMIT = Duration.ofSeconds(5);

	@Test
	void embedded() throws Exception {
		measure(Engine.EMBEDDED);
	}

	@Test
	void nativeNixl() throws Exception {
		NativeNixl.require();
		measure(Engine.NATIVE);
	}

	private static void measure(Engine engine) throws Exception {
		String suffix = "-" + engine.name().toLowerCase() + "-" + ProcessHandle.current().pid();
		try (NixlAgent p = agent("flood-p" + suffix, engine);
				NixlAgent c = agent("flood-c" + suffix, engine);
				NixlAgent j = agent("flood-j" + suffix, engine);
				NotificationSubscription answers = p.subscribeNotifications(NotificationMatcher.prefix(null, "ping/"),
						(ping) -> p.sendNotification(ping.remoteAgent(),
								("pong/" + ping.text().substring(5)).getBytes(StandardCharsets.UTF_8)))) {
			c.loadRemoteMetadata(p.localMetadata());
			j.loadRemoteMetadata(p.localMetadata());
			p.loadRemoteMetadata(c.localMetadata());
			roundTrips(p, c, "warm-up", 50);
			long[] quiet = roundTrips(p, c, "quiet", ROUND_TRIPS);

			AtomicBoolean flooding = new AtomicBoolean(true);
			AtomicLong junk = new AtomicLong();
			CompletableFuture<Void> flood = CompletableFuture.runAsync(() -> {
				byte[] message = "junk nobody waits for".getBytes(StandardCharsets.UTF_8);
				while (flooding.get()) {
					j.sendNotification(p.name(), message);
					junk.incrementAndGet();
				}
			});
			long[] flooded;
			try {
				long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
				while (junk.get() < AgentConfig.DEFAULT_MAILBOX_CAPACITY && System.nanoTime() - until < 0) {
					Thread.onSpinWait();
				}
				flooded = roundTrips(p, c, "flooded", ROUND_TRIPS);
			}
			finally {
				flooding.set(false);
			}
			flood.join();
			System.out.printf("%s engine, %d round trips C -> P (subscription) -> C (waiter), microseconds:%n", engine,
					ROUND_TRIPS);
			System.out.println("  quiet:   " + summary(quiet));
			System.out.println("  flooded: " + summary(flooded) + "  (J sent " + junk.get() + " junk notifications, P"
					+ " dropped " + p.statistics().notificationsDropped(j.name()) + ")");
			assertThat(junk.get()).isGreaterThan(AgentConfig.DEFAULT_MAILBOX_CAPACITY);
			assertThat(p.statistics().notificationsDropped(j.name())).isPositive();
			assertThat(p.statistics().notificationsDropped(c.name())).isZero();
		}
	}

	private static long[] roundTrips(NixlAgent p, NixlAgent c, String phase, int count) {
		long[] micros = new long[count];
		for (int i = 0; i < count; i++) {
			String id = phase + "-" + i;
			long start = System.nanoTime();
			CompletableFuture<Notification> pong = c
				.expectNotification(NotificationMatcher.exact(p.name(), "pong/" + id), ROUND_TRIP_LIMIT);
			c.sendNotification(p.name(), ("ping/" + id).getBytes(StandardCharsets.UTF_8));
			assertThat(pong).succeedsWithin(ROUND_TRIP_LIMIT);
			micros[i] = TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
		}
		return micros;
	}

	private static String summary(long[] micros) {
		long[] sorted = micros.clone();
		Arrays.sort(sorted);
		return "p50 " + sorted[sorted.length / 2] + ", p99 " + sorted[(int) (sorted.length * 0.99)] + ", max "
				+ sorted[sorted.length - 1];
	}

	/**
	 * An agent whose peers reach it as a remote token holder would: on the embedded
	 * engine over TCP, whose connections bound what a peer can have in flight, rather
	 * than by in-process copies (an in-process sender is trusted code of the same JVM).
	 */
	private static NixlAgent agent(String name, Engine engine) {
		AgentConfig.Builder builder = AgentConfig.builder(name).engine(engine);
		if (engine == Engine.EMBEDDED) {
			builder.embedded(EmbeddedOptions.builder().inProcessCopies(false).build());
		}
		return NixlAgent.create(builder.build());
	}

}
