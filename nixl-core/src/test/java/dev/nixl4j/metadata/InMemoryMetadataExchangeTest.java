package dev.nixl4j.metadata;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import dev.nixl4j.testsupport.MetadataSamples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link InMemoryMetadataExchange} with real NIXL metadata blobs (no native library
 * needed).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InMemoryMetadataExchangeTest {

	private final InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();

	@AfterEach
	void close() {
		this.exchange.close();
	}

	@Test
	void fetchStartedBeforePublishCompletesWhenPublished() throws Exception {
		CompletableFuture<AgentMetadata> fetched = CompletableFuture
			.supplyAsync(() -> this.exchange.fetch(MetadataSamples.ONE_DRAM, Duration.ofSeconds(30)));
		this.exchange.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		assertThat(fetched.get(30, TimeUnit.SECONDS).toByteArray()).isEqualTo(MetadataSamples.oneDram());
	}

	@Test
	void fetchOfAnUnknownAgentFailsAtItsDeadlineNamingTheAgent() {
		Duration timeout = Duration.ofMillis(300);
		long start = System.nanoTime();
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> this.exchange.fetch("nobody-here", timeout));
		Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
		assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(failure.remoteAgent()).isEqualTo("nobody-here");
		assertThat(failure.getMessage()).contains("'nobody-here'");
		assertThat(elapsed).isGreaterThanOrEqualTo(timeout).isLessThan(timeout.plusSeconds(2));
	}

	@Test
	void randomBytesAreRejectedAsInvalidMetadata() {
		byte[] random = new byte[512];
		new Random(42).nextBytes(random);
		this.exchange.publish("corrupt", AgentMetadata.of(random));
		assertThatThrownBy(() -> this.exchange.fetch("corrupt", Duration.ofSeconds(1)))
			.isInstanceOf(NixlException.class)
			.satisfies(ex -> assertThat(((NixlException) ex).status()).isEqualTo(NixlStatus.INVALID_METADATA));
	}

	@Test
	void aValueOverTheCapIsRejectedAsInvalidMetadata() {
		try (InMemoryMetadataExchange small = new InMemoryMetadataExchange(256)) {
			small.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
			NixlException failure = catchThrowableOfType(NixlException.class,
					() -> small.fetch(MetadataSamples.ONE_DRAM, Duration.ofSeconds(1)));
			assertThat(failure.status()).isEqualTo(NixlStatus.INVALID_METADATA);
			assertThat(failure.getMessage()).contains("over the limit of 256 bytes");
		}
	}

	@Test
	void aValueThatNamesAnotherAgentIsRejected() {
		this.exchange.publish("impostor", AgentMetadata.of(MetadataSamples.oneDram()));
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> this.exchange.fetch("impostor", Duration.ofSeconds(1)));
		assertThat(failure.status()).isEqualTo(NixlStatus.INVALID_METADATA);
		assertThat(failure.getMessage()).contains("'one-dram'", "not the agent asked for");
	}

	@Test
	void invalidateTellsEveryWatchOnceAndInOrder() {
		this.exchange.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		List<String> told = new ArrayList<>();
		this.exchange.watch(MetadataSamples.ONE_DRAM, name -> told.add("first:" + name));
		this.exchange.watch(MetadataSamples.ONE_DRAM, name -> told.add("second:" + name));
		this.exchange.watch(MetadataSamples.ONE_DRAM, name -> told.add("closed:" + name)).close();
		this.exchange.invalidate(MetadataSamples.ONE_DRAM);
		this.exchange.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		this.exchange.invalidate(MetadataSamples.ONE_DRAM);
		this.exchange.invalidate(MetadataSamples.ONE_DRAM);
		assertThat(told).containsExactly("first:one-dram", "second:one-dram");
		assertThat(this.exchange.isPublished(MetadataSamples.ONE_DRAM)).isFalse();
	}

	@Test
	void invalidatingMetadataThatIsNotPublishedTellsNoWatch() {
		AtomicInteger told = new AtomicInteger();
		this.exchange.watch("never-published", name -> told.incrementAndGet());
		this.exchange.invalidate("never-published");
		assertThat(told).hasValue(0);
	}

	@Test
	void watchesRunWithoutTheExchangeLockHeld() throws Exception {
		this.exchange.publish(MetadataSamples.ONE_DRAM, AgentMetadata.of(MetadataSamples.oneDram()));
		CompletableFuture<AgentMetadata> fromCallback = new CompletableFuture<>();
		this.exchange.watch(MetadataSamples.ONE_DRAM, name -> {
			// another thread needs the lock: this would time out if the callback held it
			CompletableFuture<AgentMetadata> other = CompletableFuture.supplyAsync(() -> {
				this.exchange.publish("other", AgentMetadata.of(MetadataSamples.oneDram()));
				return AgentMetadata.of(MetadataSamples.oneDram());
			});
			try {
				fromCallback.complete(other.get(10, TimeUnit.SECONDS));
			}
			catch (Exception ex) {
				fromCallback.completeExceptionally(ex);
			}
		});
		this.exchange.invalidate(MetadataSamples.ONE_DRAM);
		assertThat(fromCallback.get(20, TimeUnit.SECONDS).size()).isEqualTo(MetadataSamples.oneDram().length);
		assertThat(this.exchange.isPublished("other")).isTrue();
	}

	@Test
	void closeWakesAWaitingFetch() throws Exception {
		CompletableFuture<AgentMetadata> fetched = CompletableFuture
			.supplyAsync(() -> this.exchange.fetch("late", Duration.ofSeconds(30)));
		this.exchange.close();
		assertThat(fetched).failsWithin(Duration.ofSeconds(10))
			.withThrowableThat()
			.havingRootCause()
			.isInstanceOf(NixlException.class)
			.withMessageContaining("CLOSED");
	}

}
