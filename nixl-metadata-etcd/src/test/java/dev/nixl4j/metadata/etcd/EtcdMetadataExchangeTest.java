package dev.nixl4j.metadata.etcd;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import dev.nixl4j.metadata.MetadataExchange;
import dev.nixl4j.testsupport.Eventually;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * {@link EtcdMetadataExchange} against a real etcd server, with real native agents:
 * NIXL's key layout, lease-backed keys, watches, deadlines and the check of every fetched
 * value.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class EtcdMetadataExchangeTest extends EtcdAgentTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final AtomicInteger ids = new AtomicInteger();

	private EtcdMetadataExchange exchange() {
		return track(EtcdMetadataExchange.builder()
			.endpoints(etcd.endpoint())
			.leaseTtl(Duration.ofSeconds(2))
			.operationTimeout(Duration.ofSeconds(3))
			.build());
	}

	private NixlAgent agent(String role, TestInfo info) {
		String name = role + "-" + info.getTestMethod().map(m -> m.getName()).orElse("t") + "-" + ids.incrementAndGet();
		return track(NixlAgent.create(AgentConfig.builder(name).build()));
	}

	private MemorySegment registered(NixlAgent agent, long seed) {
		Arena arena = track(Arena.ofShared());
		MemorySegment segment = Bytes.pattern(arena, 1 << 20, seed);
		agent.register(segment);
		return segment;
	}

	private static List<KeyValue> get(String key) throws Exception {
		return raw.getKVClient().get(bytes(key)).get(10, TimeUnit.SECONDS).getKvs();
	}

	private static ByteSequence bytes(String text) {
		return ByteSequence.from(text, StandardCharsets.UTF_8);
	}

	@Test
	void publishedMetadataIsFetchedIntoAnotherAgentAndCarriesATransfer(TestInfo info) throws Exception {
		NixlAgent target = agent("target", info);
		NixlAgent initiator = agent("init", info);
		MemorySegment remote = registered(target, 2);
		MemorySegment local = registered(initiator, 1);
		EtcdMetadataExchange publisher = exchange();
		EtcdMetadataExchange fetcher = exchange();

		publisher.publish(target);
		AgentMetadata fetched = fetcher.fetch(target.name(), WAIT);
		assertThat(fetched).isEqualTo(target.localMetadata());
		assertThat(initiator.loadRemoteMetadata(fetched)).isEqualTo(target.name());

		try (Transfer write = initiator.transfer(XferOp.WRITE, DescriptorList.of(local), DescriptorList.of(remote),
				target.name(), null)) {
			write.await(WAIT);
			assertThat(write.state()).isEqualTo(TransferState.COMPLETED);
		}
		assertThat(Bytes.hasPattern(remote, 1)).isTrue();
		Bytes.fill(remote, 3);
		try (Transfer read = initiator.transfer(XferOp.READ, DescriptorList.of(local), DescriptorList.of(remote),
				target.name(), null)) {
			read.await(WAIT);
		}
		assertThat(Bytes.hasPattern(local, 3)).isTrue();
	}

	@Test
	void keysFollowNixlsLayoutAndAreLeaseBacked(TestInfo info) throws Exception {
		NixlAgent target = agent("target", info);
		registered(target, 2);
		EtcdMetadataExchange exchange = exchange();
		exchange.publish(target);

		// NIXL 1.5.1 joins its default namespace "/nixl/agents/" and the agent with
		// another '/'
		String key = "/nixl/agents//" + target.name() + "/metadata";
		assertThat(exchange.key(target.name())).isEqualTo(key);
		List<KeyValue> kvs = get(key);
		assertThat(kvs).hasSize(1);
		assertThat(kvs.get(0).getValue().getBytes()).isEqualTo(target.localMetadata().toByteArray());
		long lease = kvs.get(0).getLease();
		assertThat(lease).isNotZero();
		assertThat(
				raw.getLeaseClient().timeToLive(lease, LeaseOption.DEFAULT).get(10, TimeUnit.SECONDS).getGrantedTTL())
			.isEqualTo(2);
		List<KeyValue> anchor = get("/nixl/agents//" + target.name() + "/");
		assertThat(anchor).singleElement().satisfies(kv -> {
			assertThat(kv.getValue().isEmpty()).isTrue();
			assertThat(kv.getLease()).isEqualTo(lease);
		});
		// the lease is kept alive past its TTL while the exchange is open
		CompletableFuture<String> removed = new CompletableFuture<>();
		try (MetadataExchange.Watch watch = exchange().watch(target.name(), removed::complete)) {
			assertThat(removed).failsWithin(Duration.ofSeconds(5));
		}
		assertThat(get(key)).hasSize(1);

		exchange.close();
		assertThat(get(key)).isEmpty();
		assertThat(get("/nixl/agents//" + target.name() + "/")).isEmpty();
	}

	@Test
	void metadataOfAProcessKilledWithSigkillDisappearsWhenItsLeaseRunsOut(TestInfo info) throws Exception {
		NixlAgent target = agent("target", info);
		registered(target, 2);
		EtcdMetadataExchange watcher = exchange();
		List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
				System.getProperty("java.class.path"), EtcdPublisherMain.class.getName(), etcd.endpoint(),
				EtcdMetadataExchange.DEFAULT_NAMESPACE, target.name(), "2");
		Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
		try {
			PrintStream in = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
			in.println(Base64.getEncoder().encodeToString(target.localMetadata().toByteArray()));
			BufferedReader out = new BufferedReader(
					new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
			assertThat(CompletableFuture.supplyAsync(() -> readLine(out))).succeedsWithin(WAIT).isEqualTo("PUBLISHED");
			assertThat(watcher.fetch(target.name(), WAIT)).isEqualTo(target.localMetadata());
			assertThat(get(watcher.key(target.name()))).singleElement()
				.satisfies(kv -> assertThat(kv.getLease()).isNotZero());

			CompletableFuture<String> removed = new CompletableFuture<>();
			watcher.watch(target.name(), removed::complete);
			long killed = System.nanoTime();
			child.destroyForcibly();
			assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();

			assertThat(removed).succeedsWithin(Duration.ofSeconds(15)).isEqualTo(target.name());
			assertThat(Duration.ofNanos(System.nanoTime() - killed)).isGreaterThan(Duration.ofMillis(500));
			assertThat(get(watcher.key(target.name()))).isEmpty();
			assertThat(get("/nixl/agents//" + target.name() + "/")).isEmpty();
		}
		finally {
			child.destroyForcibly();
		}
	}

	private static String readLine(BufferedReader reader) {
		try {
			return reader.readLine();
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

	@Test
	void deletingAPeersKeysMakesAgentsThatLoadedItForgetIt(TestInfo info) throws Exception {
		NixlAgent target = agent("target", info);
		NixlAgent initiator = agent("init", info);
		registered(target, 2);
		EtcdMetadataExchange publisher = exchange();
		EtcdMetadataExchange loader = exchange();
		publisher.publish(target);
		loader.load(initiator, target.name(), WAIT);
		assertThat(initiator.remoteAgents()).containsExactly(target.name());

		raw.getKVClient()
			.delete(bytes("/nixl/agents//" + target.name() + "/"), DeleteOption.builder().isPrefix(true).build())
			.get(10, TimeUnit.SECONDS);

		Eventually.until(WAIT, "the initiator forgets " + target.name(), () -> initiator.remoteAgents().isEmpty());
		assertThat(initiator.hasRemoteMetadata(target.name())).isFalse();
	}

	@Test
	void invalidateWithdrawsTheKeysAndWatchersHearItOnce(TestInfo info) throws Exception {
		NixlAgent target = agent("target", info);
		registered(target, 2);
		EtcdMetadataExchange publisher = exchange();
		EtcdMetadataExchange watcher = exchange();
		publisher.publish(target);
		AtomicInteger calls = new AtomicInteger();
		CompletableFuture<String> removed = new CompletableFuture<>();
		watcher.watch(target.name(), name -> {
			calls.incrementAndGet();
			removed.complete(name);
		});

		publisher.invalidate(target.name());

		assertThat(removed).succeedsWithin(WAIT).isEqualTo(target.name());
		assertThat(get(publisher.key(target.name()))).isEmpty();
		publisher.publish(target);
		publisher.invalidate(target.name());
		assertThat(get(publisher.key(target.name()))).isEmpty();
		assertThat(calls).hasValue(1);
		// withdrawing what is not published does nothing
		publisher.invalidate(target.name());
	}

	@Test
	void anErrorFromAWatcherIsCountedAndTheExchangesThreadGoesOn(TestInfo info) throws Exception {
		NixlAgent first = agent("first", info);
		NixlAgent second = agent("second", info);
		registered(first, 3);
		registered(second, 4);
		EtcdMetadataExchange publisher = exchange();
		EtcdMetadataExchange watcher = exchange();
		publisher.publish(first);
		publisher.publish(second);
		CompletableFuture<String> failing = new CompletableFuture<>();
		watcher.watch(first.name(), name -> {
			failing.complete(name);
			throw new OutOfMemoryError("injected into a watcher");
		});
		CompletableFuture<String> later = new CompletableFuture<>();
		watcher.watch(second.name(), later::complete);

		publisher.invalidate(first.name());
		assertThat(failing).succeedsWithin(Duration.ofSeconds(1)).isEqualTo(first.name());
		publisher.invalidate(second.name());

		assertThat(later).as("the exchange's thread still tells watchers")
			.succeedsWithin(Duration.ofSeconds(1))
			.isEqualTo(second.name());
		assertThat(watcher.internalErrors()).isOne();
	}

	@Test
	void fetchingAnAgentThatNeverPublishesFailsAtTheDeadlineNamingIt() {
		EtcdMetadataExchange exchange = exchange();
		long start = System.nanoTime();
		NixlException failure = catchThrowableOfType(NixlException.class,
				() -> exchange.fetch("nobody-publishes-this", Duration.ofMillis(700)));
		Duration took = Duration.ofNanos(System.nanoTime() - start);
		assertThat(failure.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(failure.remoteAgent()).isEqualTo("nobody-publishes-this");
		assertThat(failure.getMessage()).contains("nobody-publishes-this").contains("PT0.7S");
		assertThat(took).isBetween(Duration.ofMillis(650), Duration.ofSeconds(3));
	}

	@Test
	void aFetchWithAZeroTimeoutReadsOnceAndFindsWhatIsPublished(TestInfo info) {
		NixlAgent target = agent("target", info);
		registered(target, 3);
		EtcdMetadataExchange exchange = exchange();
		NixlException missing = catchThrowableOfType(NixlException.class,
				() -> exchange.fetch(target.name(), Duration.ZERO));
		assertThat(missing.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(missing.remoteAgent()).isEqualTo(target.name());
		exchange().publish(target);
		assertThat(exchange.fetch(target.name(), Duration.ZERO)).isEqualTo(target.localMetadata());
		exchange.invalidate(target.name());
		exchange.publish(target);
		assertThat(exchange.fetch(target.name(), Duration.ZERO)).isEqualTo(target.localMetadata());
	}

	@Test
	void fetchWaitsForMetadataPublishedAfterItStarted(TestInfo info) {
		NixlAgent target = agent("target", info);
		registered(target, 2);
		EtcdMetadataExchange publisher = exchange();
		CompletableFuture<AgentMetadata> fetched = CompletableFuture
			.supplyAsync(() -> exchange().fetch(target.name(), WAIT));
		assertThat(fetched).failsWithin(Duration.ofMillis(300));
		publisher.publish(target);
		assertThat(fetched).succeedsWithin(WAIT).isEqualTo(target.localMetadata());
	}

	@Test
	void corruptOversizeAndMisnamedValuesAreRejectedBeforeReachingTheAgent(TestInfo info) throws Exception {
		NixlAgent target = agent("target", info);
		NixlAgent initiator = agent("init", info);
		registered(target, 2);
		EtcdMetadataExchange exchange = track(
				EtcdMetadataExchange.builder().endpoints(etcd.endpoint()).maxValueBytes(4096).build());
		byte[] metadata = target.localMetadata().toByteArray();

		String corrupt = "corrupt-" + ids.incrementAndGet();
		put(exchange.key(corrupt), Bytes.splice(metadata, 0, 12, "notNixlSerDe".getBytes(StandardCharsets.UTF_8)));
		String oversize = "oversize-" + ids.incrementAndGet();
		put(exchange.key(oversize), new byte[8192]);
		String misnamed = "misnamed-" + ids.incrementAndGet();
		put(exchange.key(misnamed), metadata);

		for (String agent : List.of(corrupt, oversize, misnamed)) {
			NixlException failure = catchThrowableOfType(NixlException.class,
					() -> exchange.load(initiator, agent, WAIT));
			assertThat(failure.status()).as(agent).isEqualTo(NixlStatus.INVALID_METADATA);
			assertThat(failure.getMessage()).as(agent).contains(agent);
		}
		assertThat(catchThrowableOfType(NixlException.class, () -> exchange.fetch(oversize, WAIT)).getMessage())
			.contains("8192 bytes, over the limit of 4096");
		assertThat(initiator.remoteAgents()).isEmpty();
		assertThat(initiator.hasRemoteMetadata(target.name())).isFalse();
	}

	private static void put(String key, byte[] value) throws Exception {
		raw.getKVClient().put(bytes(key), ByteSequence.from(value)).get(10, TimeUnit.SECONDS);
		assertThat(raw.getKVClient().get(bytes(key), GetOption.DEFAULT).get(10, TimeUnit.SECONDS).getKvs()).hasSize(1);
	}

}
