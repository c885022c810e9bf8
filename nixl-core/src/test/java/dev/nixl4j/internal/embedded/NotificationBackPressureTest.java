package dev.nixl4j.internal.embedded;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A peer that sends large notifications nobody claims is held back over TCP instead of
 * filling the receiving agent's heap, and every notification still arrives, in order,
 * once they are claimed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NotificationBackPressureTest {

	private static final int MESSAGE_BYTES = 1 << 20;

	/**
	 * Enough messages for the mailbox's and the engine's byte caps together, and then
	 * some.
	 */
	private static final int MESSAGES = 120;

	@Test
	void unclaimedLargeNotificationsAreHeldBackAndAllArriveInOrderOnceClaimed() throws Exception {
		try (NixlAgent receiver = tcpAgent("flooded"); NixlAgent sender = tcpAgent("flooder")) {
			sender.loadRemoteMetadata(receiver.localMetadata());
			for (int i = 0; i < MESSAGES; i++) {
				sender.sendNotification(receiver.name(), message(i));
			}
			// the receiver takes what its caps allow and no more, however long the sender
			// waits
			// the agent's mailbox drains until it holds 64 MiB; the engine's inbox then
			// holds its own cap
			long capped = ((64L << 20) + EmbeddedDriver.MAX_NETWORK_INBOX_BYTES) / MESSAGE_BYTES;
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
			long seen = -1;
			while (System.nanoTime() - deadline < 0) {
				long now = receiver.statistics().notificationsReceived();
				if (now == seen && now > 0) {
					break;
				}
				seen = now;
				Thread.sleep(1000);
			}
			long received = receiver.statistics().notificationsReceived();
			assertThat(received).as("notifications the receiver took while nobody claimed them")
				.isPositive()
				.isLessThanOrEqualTo(capped + 2)
				.isLessThan(MESSAGES);

			List<CompletableFuture<Notification>> claims = new ArrayList<>();
			for (int i = 0; i < MESSAGES; i++) {
				claims.add(receiver.expectNotification(NotificationMatcher.prefix(sender.name(), ""),
						Duration.ofSeconds(60)));
			}
			for (int i = 0; i < MESSAGES; i++) {
				Notification notification = claims.get(i).get(60, TimeUnit.SECONDS);
				assertThat(Arrays.equals(notification.message(), message(i))).as("notification %d, byte for byte", i)
					.isTrue();
			}
			assertThat(receiver.statistics().notificationsReceived()).isEqualTo(MESSAGES);
		}
	}

	private static NixlAgent tcpAgent(String name) {
		return NixlAgent.create(AgentConfig.builder(name + "-" + ProcessHandle.current().pid())
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.defaults().withInProcessCopies(false))
			.build());
	}

	private static byte[] message(int index) {
		byte[] bytes = new byte[MESSAGE_BYTES];
		for (int i = 0; i < bytes.length; i++) {
			bytes[i] = (byte) (index * 31 + i);
		}
		return bytes;
	}

}
