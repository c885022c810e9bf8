package dev.nixl4j.kv;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentMetadata;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.Eventually;
import dev.nixl4j.testsupport.LineProcess;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leases of a producer killed with SIGKILL and restarted under the same agent name, on
 * every engine (one subclass per engine), the producer in a process of its own
 * ({@link KvProducerMain}) that the test publishes in the exchange as its worker would:
 * pulls of the old process's leases fail at once with
 * {@link KvProducerUnavailableException}, concurrently with a pull of the new incarnation
 * that is not held up by them, in either order of the restart and the stale pulls; a
 * lease the new process took before it was published waits for its handle without holding
 * up other pulls. Every pulled block is checked byte by byte; every pull's time is
 * printed.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
public abstract class KvProducerRestartTests {

	/** How long the producer's process may take to answer a command. */
	private static final Duration WAIT = Duration.ofSeconds(60);

	/** Each pull's deadline: long, so that a pull that waits for it shows. */
	private static final Duration DEADLINE = Duration.ofSeconds(20);

	/**
	 * The bound on a pull that must not wait: a stale pull takes milliseconds, a fresh
	 * one tens of them; generous for a loaded two-core host, and far below both the
	 * deadline and the consumer's peer timeout ({@link KvProducer#DEFAULT_PEER_TIMEOUT}),
	 * which a pull that waited for the directory would take.
	 */
	private static final Duration AT_ONCE = Duration.ofSeconds(4);

	private static final int STALE_PULLS = 3;

	@RegisterExtension
	final KvFixture kv = new KvFixture(this::engine);

	/**
	 * Returns the engine under test.
	 * @return the engine
	 */
	protected abstract Engine engine();

	private Consumer startConsumer() {
		NixlAgent agent = this.kv.agent("decode", (builder) -> {
		});
		PagedKvCache cache = this.kv
			.track(PagedKvCache.builder(agent, KvProducerMain.LAYOUT).modelFingerprint(KvProducerMain.MODEL).build());
		MetadataPublication publication = this.kv.publication(agent, null);
		KvDirectory directory = KvDirectory.of(this.kv.exchange(), publication);
		AtomicInteger resolves = new AtomicInteger();
		// the exchange's own directory, counting how often it is asked for a handle
		KvDirectory counted = new KvDirectory() {

			@Override
			public RemoteCacheHandle resolve(String producer, Duration timeout) {
				resolves.incrementAndGet();
				return directory.resolve(producer, timeout);
			}

			@Override
			public void announce() {
				directory.announce();
			}

			@Override
			public void reannounce() {
				directory.reannounce();
			}

		};
		KvConsumer consumer = KvConsumer.builder(cache)
			.peers(PeerLoader.of(this.kv.exchange()))
			.directory(counted)
			.build();
		return new Consumer(cache, consumer, resolves);
	}

	/**
	 * Starts a producer process that knows the consumer, and publishes its metadata and
	 * handle (replacing those of an earlier process of the same name).
	 */
	private ProducerProcess startProducer(String name, Consumer consumer) throws IOException {
		ProducerProcess producer = startUnpublished(name, consumer);
		publish(producer);
		return producer;
	}

	/** Starts a producer process that knows the consumer; it is not published yet. */
	private ProducerProcess startUnpublished(String name, Consumer consumer) throws IOException {
		LineProcess child = this.kv.track(LineProcess.start("KV producer " + name,
				new ProcessBuilder(LineProcess.javaCommand(KvProducerMain.class, "256m", name, engine().name())),
				"QUIT"));
		String[] ready = child.expect("READY ", WAIT).split(" ");
		AgentMetadata metadata = AgentMetadata.of(Base64.getDecoder().decode(ready[1]));
		RemoteCacheHandle handle = RemoteCacheHandle.fromJson(Base64.getDecoder().decode(ready[2]));
		child.send("LOAD " + Base64.getEncoder().encodeToString(consumer.agent().localMetadata().toByteArray()));
		child.expect("LOADED ", WAIT);
		return new ProducerProcess(name, child, metadata, handle);
	}

	/** Publishes a producer's metadata and handle, replacing those of its name. */
	private void publish(ProducerProcess producer) {
		this.kv.exchange().publish(producer.name, producer.metadata);
		this.kv.exchange().publishDocument(producer.name, KvDirectory.HANDLE_DOCUMENT, producer.handle.toJson());
	}

	private static KvTransferParams lease(ProducerProcess producer, String requestId, int blocks, long generation,
			Consumer consumer) {
		producer.child.send("LEASE " + requestId + " " + blocks + " " + generation + " " + consumer.agent().name());
		return KvProducerMain.decode(producer.child.expect("LEASE ", WAIT).substring("LEASE ".length()));
	}

	/** Kills the producer's process with SIGKILL and waits until it is gone. */
	private static void kill(ProducerProcess producer) {
		producer.child.process().destroyForcibly();
		assertThat(producer.child.exitValue(WAIT)).as("killed").isNotZero();
	}

	/**
	 * Pulls a lease; on success checks every byte against the pattern of its generation.
	 * Starts when told, and says how long the pull took.
	 */
	private static Pulled pull(Consumer consumer, KvTransferParams params, long generation, CountDownLatch go) {
		int[] remote = params.blockIdArray();
		int[] local = consumer.cache.allocator().allocate(remote.length);
		try {
			if (!go.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
				throw new IllegalStateException("the pulls were not started within " + WAIT);
			}
			long start = System.nanoTime();
			try {
				consumer.consumer.pull(params, local, DEADLINE);
			}
			catch (RuntimeException ex) {
				return new Pulled(params, Duration.ofNanos(System.nanoTime() - start), ex);
			}
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			for (int r = 0; r < KvProducerMain.LAYOUT.regionCount(); r++) {
				for (int i = 0; i < local.length; i++) {
					assertThat(Bytes.hasPattern(consumer.cache.block(r, local[i]),
							KvProducerMain.seed(r, remote[i], generation)))
						.as("region %d, local block %d <- producer block %d", r, local[i], remote[i])
						.isTrue();
				}
			}
			return new Pulled(params, took, null);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		finally {
			consumer.cache.allocator().release(local);
		}
	}

	/**
	 * Runs the stale pulls and the fresh one (if any) at the same moment; the fresh one
	 * is the last of the results.
	 */
	private List<Pulled> concurrently(Consumer consumer, List<KvTransferParams> stale, @Nullable KvTransferParams fresh,
			long freshGeneration) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(stale.size() + 1);
		try {
			CountDownLatch go = new CountDownLatch(1);
			List<CompletableFuture<Pulled>> pulls = new ArrayList<>();
			for (KvTransferParams params : stale) {
				pulls.add(CompletableFuture.supplyAsync(() -> pull(consumer, params, 0, go), threads));
			}
			if (fresh != null) {
				pulls.add(CompletableFuture.supplyAsync(() -> pull(consumer, fresh, freshGeneration, go), threads));
			}
			go.countDown();
			List<Pulled> pulled = new ArrayList<>();
			for (CompletableFuture<Pulled> pull : pulls) {
				pulled.add(pull.get(DEADLINE.multipliedBy(3).toSeconds(), TimeUnit.SECONDS));
			}
			return pulled;
		}
		finally {
			threads.shutdownNow();
		}
	}

	private void print(String round, List<Pulled> pulled, boolean withFresh) {
		for (int i = 0; i < pulled.size(); i++) {
			Pulled p = pulled.get(i);
			String what = (withFresh && i == pulled.size() - 1) ? "fresh pull" : "stale pull " + (i + 1);
			System.out.printf("[%s, %s] %s: %s after %d ms%n", engine(), round, what,
					(p.failure() != null) ? "failed (" + p.failure().getClass().getSimpleName() + ")" : "pulled",
					p.took().toMillis());
		}
	}

	/**
	 * Checks that each stale pull failed at once as a lease of a producer that is gone.
	 */
	private static void assertFailedAtOnce(List<Pulled> stale, String leased, @Nullable String current) {
		for (Pulled p : stale) {
			assertThat(p.failure()).as("the pull of lease %s", p.params().requestId())
				.isInstanceOf(KvProducerUnavailableException.class);
			assertThat(p.failure().getMessage()).contains(p.params().producerAgent()).contains(leased);
			if (current != null) {
				assertThat(p.failure().getMessage()).as("names the incarnation that replaced the lease's")
					.contains(current);
			}
			assertThat(p.took()).as("failed at once, not at its deadline of %s", DEADLINE).isLessThan(AT_ONCE);
		}
	}

	private static void assertPulledAtOnce(Pulled fresh) {
		assertThat(fresh.failure()).as("the pull of the new incarnation's lease").isNull();
		assertThat(fresh.took()).as("not held up by the stale pulls").isLessThan(AT_ONCE);
	}

	private static KvProducerSession session(Consumer consumer, String producer) {
		return consumer.consumer.sessions()
			.stream()
			.filter((s) -> s.producer().equals(producer))
			.findFirst()
			.orElseThrow();
	}

	@Test
	void leasesOfTheKilledProcessFailAtOnceBesideAPullOfTheRestartedOne() throws Exception {
		String name = this.kv.name("prefill");
		Consumer consumer = startConsumer();
		ProducerProcess old = startProducer(name, consumer);
		assertPulledAtOnce(concurrently(consumer, List.of(), lease(old, "warm-up", 2, 1, consumer), 1).get(0));
		KvTransferParams first = lease(old, "stale-first", 2, 0, consumer);
		List<KvTransferParams> stale = new ArrayList<>();
		for (int i = 0; i < STALE_PULLS; i++) {
			stale.add(lease(old, "stale-" + i, 2, 0, consumer));
		}
		kill(old);

		ProducerProcess restarted = startProducer(name, consumer);
		// one stale pull first, alone: it learns of the restart
		List<Pulled> alone = concurrently(consumer, List.of(first), null, 0);
		print("restarted, one stale pull", alone, false);
		KvTransferParams fresh = lease(restarted, "fresh", 3, 7, consumer);
		List<Pulled> together = concurrently(consumer, stale, fresh, 7);
		print("restarted, stale and fresh pulls", together, true);
		KvProducerSession afterRestart = session(consumer, name);
		// and once more, on the session as it is
		List<Pulled> again = concurrently(consumer, stale, lease(restarted, "fresh-2", 2, 8, consumer), 8);
		print("pulled again", again, true);

		String oldIncarnation = old.handle.incarnation();
		String newIncarnation = restarted.handle.incarnation();
		assertFailedAtOnce(alone, oldIncarnation, newIncarnation);
		assertFailedAtOnce(together.subList(0, STALE_PULLS), oldIncarnation, newIncarnation);
		assertPulledAtOnce(together.get(STALE_PULLS));
		assertThat(afterRestart.state()).isEqualTo(KvSessionState.CONNECTED);
		assertThat(afterRestart.incarnation()).isEqualTo(newIncarnation);
		assertThat(afterRestart.reconnects()).as("one restart, one reconnect").isOne();
		assertFailedAtOnce(again.subList(0, STALE_PULLS), oldIncarnation, newIncarnation);
		assertPulledAtOnce(again.get(STALE_PULLS));
	}

	@Test
	void leasesOfTheKilledProcessFailAtOnceBeforeAndAfterTheRestartedOneIsPublished() throws Exception {
		String name = this.kv.name("prefill");
		Consumer consumer = startConsumer();
		ProducerProcess old = startProducer(name, consumer);
		assertPulledAtOnce(concurrently(consumer, List.of(), lease(old, "warm-up", 2, 1, consumer), 1).get(0));
		List<KvTransferParams> stale = new ArrayList<>();
		for (int i = 0; i < STALE_PULLS; i++) {
			stale.add(lease(old, "stale-" + i, 2, 0, consumer));
		}
		kill(old);
		// its entry expires (a registry's entry TTL, an etcd lease)
		this.kv.exchange().invalidate(name);
		Eventually.until(WAIT, "the consumer forgot the producer", () -> !consumer.agent().hasRemoteMetadata(name));

		List<Pulled> gone = concurrently(consumer, stale, null, 0);
		print("killed, not restarted", gone, false);
		KvProducerSession whileGone = session(consumer, name);
		ProducerProcess restarted = startProducer(name, consumer);
		KvTransferParams fresh = lease(restarted, "fresh", 3, 7, consumer);
		List<Pulled> together = concurrently(consumer, stale, fresh, 7);
		print("restarted, stale and fresh pulls", together, true);
		KvProducerSession afterRestart = session(consumer, name);

		String oldIncarnation = old.handle.incarnation();
		String newIncarnation = restarted.handle.incarnation();
		assertFailedAtOnce(gone, oldIncarnation, null);
		assertThat(whileGone.state()).isEqualTo(KvSessionState.GONE);
		assertThat(whileGone.incarnation()).as("the last one resolved").isEqualTo(oldIncarnation);
		assertFailedAtOnce(together.subList(0, STALE_PULLS), oldIncarnation, newIncarnation);
		assertPulledAtOnce(together.get(STALE_PULLS));
		assertThat(afterRestart.state()).isEqualTo(KvSessionState.CONNECTED);
		assertThat(afterRestart.incarnation()).isEqualTo(newIncarnation);
		assertThat(afterRestart.reconnects()).as("one restart, one reconnect").isOne();
	}

	@Test
	void aLeaseOfTheRestartedProcessTakenBeforeItIsPublishedWaitsForItsHandleWithoutHoldingUpOtherPulls()
			throws Exception {
		String name = this.kv.name("prefill");
		Consumer consumer = startConsumer();
		ProducerProcess old = startProducer(name, consumer);
		assertPulledAtOnce(concurrently(consumer, List.of(), lease(old, "warm-up", 2, 1, consumer), 1).get(0));
		KvTransferParams stale = lease(old, "stale", 2, 0, consumer);
		kill(old);
		// the new process leases before it publishes, while the old entry is still there
		ProducerProcess restarted = startUnpublished(name, consumer);
		KvTransferParams early = lease(restarted, "early", 3, 9, consumer);

		ExecutorService thread = Executors.newSingleThreadExecutor();
		try {
			CountDownLatch go = new CountDownLatch(1);
			int asked = consumer.resolves().get();
			CompletableFuture<Pulled> waiting = CompletableFuture.supplyAsync(() -> pull(consumer, early, 9, go),
					thread);
			go.countDown();
			Eventually.until(WAIT, "the early lease's pull asked the directory again for its handle",
					() -> consumer.resolves().get() >= asked + 3);
			// the old entry expires, and a pull that needs the session comes: it is not
			// held up by the one waiting for the new handle, which waits on
			this.kv.exchange().invalidate(name);
			Eventually.until(WAIT, "the consumer forgot the producer", () -> !consumer.agent().hasRemoteMetadata(name));
			List<Pulled> meanwhile = concurrently(consumer, List.of(stale), null, 0);
			print("early lease waiting", meanwhile, false);
			boolean stillWaiting = !waiting.isDone();
			long published = System.nanoTime();
			publish(restarted);
			Pulled pulled = waiting.get(DEADLINE.multipliedBy(2).toSeconds(), TimeUnit.SECONDS);
			System.out.printf("[%s, early lease] %s %d ms after the new handle was published (%d ms in all)%n",
					engine(), (pulled.failure() != null) ? "failed (" + pulled.failure() + ")" : "pulled",
					Duration.ofNanos(System.nanoTime() - published).toMillis(), pulled.took().toMillis());

			assertFailedAtOnce(meanwhile, old.handle.incarnation(), null);
			assertThat(stillWaiting).as("the early lease waited for its handle meanwhile").isTrue();
			assertThat(pulled.failure()).as("the early lease, once its handle is published").isNull();
			KvProducerSession session = session(consumer, name);
			assertThat(session.state()).isEqualTo(KvSessionState.CONNECTED);
			assertThat(session.incarnation()).isEqualTo(restarted.handle.incarnation());
		}
		finally {
			thread.shutdownNow();
		}
	}

	private record Consumer(PagedKvCache cache, KvConsumer consumer, AtomicInteger resolves) {

		NixlAgent agent() {
			return this.cache.agent();
		}

	}

	private record ProducerProcess(String name, LineProcess child, AgentMetadata metadata, RemoteCacheHandle handle) {
	}

	private record Pulled(KvTransferParams params, Duration took, @Nullable RuntimeException failure) {
	}

}
