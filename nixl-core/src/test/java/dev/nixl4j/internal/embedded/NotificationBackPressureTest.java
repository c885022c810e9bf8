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
import dev.nixl4j.testsupport.Eventually;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A peer that sends large notifications nobody claims cannot fill the receiving agent's
 * heap: the agent keeps draining, holds that sender's newest messages up to the sender's
 * share of the mailbox's byte cap, and drops and counts the older ones.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NotificationBackPressureTest {

	private static final int MESSAGE_BYTES = 1 << 20;

	/** Far more than one sender's share of the mailbox's 64 MiB. */
	private static final int MESSAGES = 120;

	@Test
	void unclaimedLargeNotificationsAreBoundedAndTheNewestArriveInOrderOnceClaimed() throws Exception {
		try (NixlAgent receiver = tcpAgent("flooded"); NixlAgent sender = tcpAgent("flooder")) {
			sender.loadRemoteMetadata(receiver.localMetadata());
			for (int i = 0; i < MESSAGES; i++) {
				sender.sendNotification(receiver.name(), message(i));
			}
			// a sender's share of the 64 MiB is its share of the message count: 1024 of
			// 4096
			int kept = (int) ((64L << 20) * AgentConfig.DEFAULT_MAILBOX_PER_SENDER
					/ AgentConfig.DEFAULT_MAILBOX_CAPACITY / MESSAGE_BYTES);
			// a notification counts as received when it arrives, and as dropped once the
			// mailbox has made room for it
			Eventually.until(Duration.ofSeconds(60), "every notification drained and stored or dropped",
					() -> receiver.statistics().notificationsReceived() == MESSAGES
							&& receiver.statistics().notificationsDropped(sender.name()) >= MESSAGES - kept);
			assertThat(receiver.statistics().notificationsDropped(sender.name())).isEqualTo(MESSAGES - kept);

			List<CompletableFuture<Notification>> claims = new ArrayList<>();
			for (int i = 0; i < kept; i++) {
				claims.add(receiver.expectNotification(NotificationMatcher.prefix(sender.name(), ""),
						Duration.ofSeconds(60)));
			}
			for (int i = 0; i < kept; i++) {
				Notification notification = claims.get(i).get(60, TimeUnit.SECONDS);
				assertThat(Arrays.equals(notification.message(), message(MESSAGES - kept + i)))
					.as("notification %d, byte for byte", MESSAGES - kept + i)
					.isTrue();
			}
			assertThat(receiver.pollNotification(NotificationMatcher.prefix(null, ""))).isEmpty();
		}
	}

	private static NixlAgent tcpAgent(String name) {
		return NixlAgent.create(AgentConfig.builder(name + "-" + ProcessHandle.current().pid())
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.builder().inProcessCopies(false).build())
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
