package dev.nixl4j.internal.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.NotificationSubscription;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The mailbox's bounds, its drop counters and log, and subscriptions, on the dispatcher
 * itself.
 */
class NotificationDispatcherTest {

	private static final NotificationMatcher ANY = NotificationMatcher.prefix(null, "");

	@Test
	void overItsBoundASendersOldestMessageIsDroppedAndCounted() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 10, 3);
		for (int i = 0; i < 5; i++) {
			dispatcher.deliver("j", bytes("junk-" + i));
		}
		assertThat(dispatcher.mailboxSize()).isEqualTo(3);
		assertThat(dispatcher.dropped()).isEqualTo(2);
		assertThat(dispatcher.dropped("j")).isEqualTo(2);
		assertThat(dispatcher.received()).isEqualTo(5);
		assertThat(drain(dispatcher, ANY)).containsExactly("junk-2", "junk-3", "junk-4");
	}

	@Test
	void overTheTotalBoundTheSenderHoldingTheMostLosesItsOldest() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 4, 4);
		dispatcher.deliver("c", bytes("quiet-c"));
		for (int i = 0; i < 6; i++) {
			dispatcher.deliver("j", bytes("junk-" + i));
		}
		dispatcher.deliver("d", bytes("quiet-d"));
		assertThat(dispatcher.mailboxSize()).isEqualTo(4);
		assertThat(dispatcher.dropped("c")).isZero();
		assertThat(dispatcher.dropped("d")).isZero();
		assertThat(dispatcher.dropped("j")).isEqualTo(4);
		assertThat(drain(dispatcher, ANY)).containsExactly("quiet-c", "junk-4", "junk-5", "quiet-d");
	}

	@Test
	void anArrivingSenderTiedWithTheLargestDropsItsOwnOldestRatherThanAnEqualPeers() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 2, 2);
		dispatcher.deliver("a", bytes("a"));
		dispatcher.deliver("b", bytes("b"));
		dispatcher.deliver("c", bytes("c"));
		assertThat(dispatcher.dropped("c")).isEqualTo(1);
		assertThat(drain(dispatcher, ANY)).containsExactly("a", "b");
	}

	@Test
	void theByteCapIsAppliedPerSenderAndInTotalTheSameWay() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 4096, 1024);
		// a sender's share of the 64 MiB is the share its count bound has of the capacity
		long perSenderBytes = NotificationDispatcher.MAX_MAILBOX_BYTES / 4;
		int mib = 1 << 20;
		for (int i = 0; i < 20; i++) {
			dispatcher.deliver("j", new byte[mib]);
		}
		assertThat(dispatcher.mailboxSize()).isEqualTo((int) (perSenderBytes / mib));
		assertThat(dispatcher.dropped("j")).isEqualTo(20 - perSenderBytes / mib);
		for (String sender : List.of("k", "l", "m")) {
			for (int i = 0; i < 16; i++) {
				dispatcher.deliver(sender, new byte[mib]);
			}
		}
		assertThat(dispatcher.mailboxSize()).isEqualTo(64);
		dispatcher.deliver("c", bytes("quiet"));
		assertThat(dispatcher.dropped("c")).isZero();
		assertThat(dispatcher.dropped()).isEqualTo(5);
		assertThat(dispatcher.poll(NotificationMatcher.exact("c", "quiet"))).isPresent();
	}

	@Test
	void aMessageLargerThanASendersByteShareIsDroppedAtOnce() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 4096, 1);
		dispatcher.deliver("j", new byte[(int) (NotificationDispatcher.MAX_MAILBOX_BYTES / 4096) + 1]);
		assertThat(dispatcher.mailboxSize()).isZero();
		assertThat(dispatcher.dropped("j")).isEqualTo(1);
	}

	@Test
	void unclaimedMessagesNeverStopTheDrainOnlyTheLimitOfOnePassDoes() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 4, 2);
		dispatcher.startPass();
		for (int i = 0; i < NotificationDispatcher.DRAIN_PASS_LIMIT; i++) {
			assertThat(dispatcher.hasRoom()).isTrue();
			dispatcher.accept("j", bytes("junk-" + i));
		}
		assertThat(dispatcher.hasRoom()).isFalse();
		dispatcher.startPass();
		assertThat(dispatcher.hasRoom()).isTrue();
		assertThat(dispatcher.mailboxSize()).isEqualTo(2);
		assertThat(dispatcher.dropped("j")).isEqualTo(NotificationDispatcher.DRAIN_PASS_LIMIT - 2);
	}

	@Test
	void dropsAreLoggedOncePerSenderNamingTheSenderAndCountButNotTheBytes() {
		Logger logger = Logger.getLogger(NotificationDispatcher.class.getName());
		List<String> lines = new ArrayList<>();
		Handler capture = new Handler() {

			@Override
			public void publish(LogRecord record) {
				if (record.getLevel().intValue() >= Level.WARNING.intValue()) {
					synchronized (lines) {
						lines.add(record.getMessage());
					}
				}
			}

			@Override
			public void flush() {
			}

			@Override
			public void close() {
			}

		};
		logger.addHandler(capture);
		try {
			NotificationDispatcher dispatcher = new NotificationDispatcher("p", 8, 2);
			for (int i = 0; i < 5; i++) {
				dispatcher.deliver("flooder", bytes("secret-key-" + i));
			}
			dispatcher.startPass();
			for (int i = 0; i < 5; i++) {
				dispatcher.deliver("flooder", bytes("secret-key-" + i));
			}
			dispatcher.startPass();
			synchronized (lines) {
				assertThat(lines).hasSize(1);
				assertThat(lines.get(0)).contains("'flooder'").contains("dropped 3 ").doesNotContain("secret");
			}
			assertThat(dispatcher.dropped("flooder")).isEqualTo(8);
		}
		finally {
			logger.removeHandler(capture);
		}
	}

	@Test
	void aSubscriptionTakesItsMessagesBeforeAnyWaiter() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 8, 8);
		CompletableFuture<Notification> waiter = dispatcher.expect(NotificationMatcher.prefix(null, "kv/"),
				Duration.ofSeconds(30));
		List<String> handled = new ArrayList<>();
		dispatcher.subscribe(NotificationMatcher.prefix(null, "kv/done:"), (n) -> handled.add(n.text()));
		dispatcher.deliver("c", bytes("kv/done:1"));
		dispatcher.deliver("c", bytes("kv/other"));
		assertThat(handled).containsExactly("kv/done:1");
		assertThat(waiter).isCompletedWithValueMatching((n) -> n.text().equals("kv/other"));
	}

	@Test
	void aSubscriptionIsNeverDroppedWhateverFillsTheMailbox() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 4, 2);
		List<String> handled = new ArrayList<>();
		dispatcher.subscribe(NotificationMatcher.prefix(null, "kv/"), (n) -> handled.add(n.text()));
		for (int i = 0; i < 100; i++) {
			dispatcher.deliver("j" + (i % 10), bytes("junk"));
			dispatcher.deliver("c", bytes("kv/" + i));
		}
		assertThat(handled).hasSize(100);
		assertThat(dispatcher.dropped("c")).isZero();
	}

	@Test
	void aNewSubscriptionGetsWhatWaitsInTheMailboxOnTheNextPass() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 8, 8);
		dispatcher.deliver("c", bytes("kv/early"));
		dispatcher.deliver("c", bytes("other"));
		List<String> handled = new ArrayList<>();
		dispatcher.subscribe(NotificationMatcher.prefix(null, "kv/"), (n) -> handled.add(n.text()));
		assertThat(handled).isEmpty();
		dispatcher.startPass();
		assertThat(handled).containsExactly("kv/early");
		assertThat(drain(dispatcher, ANY)).containsExactly("other");
	}

	@Test
	void aClosedSubscriptionTakesNothingAndGivesBackWhatItHadNotHandled() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 8, 8);
		dispatcher.deliver("c", bytes("kv/early"));
		List<String> handled = new ArrayList<>();
		NotificationSubscription subscription = dispatcher.subscribe(NotificationMatcher.prefix(null, "kv/"),
				(n) -> handled.add(n.text()));
		subscription.close();
		subscription.close();
		assertThat(subscription.isOpen()).isFalse();
		dispatcher.startPass();
		dispatcher.deliver("c", bytes("kv/late"));
		assertThat(handled).isEmpty();
		assertThat(drain(dispatcher, ANY)).containsExactly("kv/early", "kv/late");
	}

	@Test
	void aHandlerThatThrowsCountsTheMessageAsHandledAndGetsTheNext() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 8, 8);
		List<String> handled = new ArrayList<>();
		dispatcher.subscribe(ANY, (n) -> {
			handled.add(n.text());
			if (n.text().equals("bad")) {
				throw new IllegalStateException("handler failure");
			}
		});
		dispatcher.deliver("c", bytes("bad"));
		dispatcher.deliver("c", bytes("good"));
		assertThat(handled).containsExactly("bad", "good");
		assertThat(dispatcher.mailboxSize()).isZero();
	}

	@Test
	void closingTheDispatcherClosesItsSubscriptions() {
		NotificationDispatcher dispatcher = new NotificationDispatcher("p", 8, 8);
		NotificationSubscription subscription = dispatcher.subscribe(ANY, (n) -> {
		});
		dispatcher.close();
		assertThat(subscription.isOpen()).isFalse();
	}

	private static List<String> drain(NotificationDispatcher dispatcher, NotificationMatcher matcher) {
		List<String> texts = new ArrayList<>();
		while (true) {
			var next = dispatcher.poll(matcher);
			if (next.isEmpty()) {
				return texts;
			}
			texts.add(next.get().text());
		}
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
