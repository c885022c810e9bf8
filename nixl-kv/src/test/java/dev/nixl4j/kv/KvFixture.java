package dev.nixl4j.kv;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataPublication;
import dev.nixl4j.testsupport.FaultInjectingDriver;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The set-up the KV contract suites share, as a JUnit 5 extension registered on an
 * instance field ({@code @RegisterExtension}): agents of the engine under test, named
 * after the role, the test and a counter; their caches, producers and consumers, which
 * find each other through one in-memory metadata exchange per test. Everything made here
 * (or handed to {@link #track}) is closed after the test, the last made first, and the
 * exchange with it; JUnit makes a test instance, and so a fixture, per test.
 */
final class KvFixture implements BeforeEachCallback, AfterEachCallback {

	private static final AtomicInteger ids = new AtomicInteger();

	private final Supplier<Engine> engine;

	private final List<AutoCloseable> resources = new ArrayList<>();

	private final InMemoryMetadataExchange exchange = new InMemoryMetadataExchange();

	private String test = "t";

	/**
	 * Creates the fixture of a suite.
	 * @param engine the engine under test (asked when an agent is made, so a subclass's
	 * override answers)
	 */
	KvFixture(Supplier<Engine> engine) {
		this.engine = engine;
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		this.test = context.getTestMethod().map((method) -> method.getName()).orElse("t");
	}

	@Override
	public void afterEach(ExtensionContext context) throws Exception {
		try {
			for (int i = this.resources.size() - 1; i >= 0; i--) {
				this.resources.get(i).close();
			}
		}
		finally {
			this.exchange.close();
		}
	}

	/**
	 * Returns the exchange the test's agents publish in.
	 * @return the exchange
	 */
	InMemoryMetadataExchange exchange() {
		return this.exchange;
	}

	/**
	 * Closes a resource after the test, before everything tracked earlier.
	 * @param resource the resource
	 * @return the resource
	 */
	<T extends AutoCloseable> T track(T resource) {
		this.resources.add(resource);
		return resource;
	}

	/**
	 * Stops tracking a resource the test closed itself.
	 * @param resource the resource
	 */
	void forget(AutoCloseable resource) {
		this.resources.remove(resource);
	}

	/**
	 * Returns a new agent name for a role: the role, the test and a counter.
	 * @param role what the agent is, such as {@code prefill}
	 * @return the name
	 */
	String name(String role) {
		return role + "-" + this.test + "-" + ids.incrementAndGet();
	}

	/**
	 * Returns a configuration of the engine under test.
	 * @param name the agent's name
	 * @return the configuration, to be completed
	 */
	AgentConfig.Builder config(String name) {
		return AgentConfig.builder(name).engine(this.engine.get());
	}

	/**
	 * Creates an agent of the engine under test, closed after the test.
	 * @param role what the agent is
	 * @param customizer changes to the default configuration
	 * @return the agent
	 */
	NixlAgent agent(String role, Consumer<AgentConfig.Builder> customizer) {
		AgentConfig.Builder config = config(name(role));
		customizer.accept(config);
		return track(NixlAgent.create(config.build()));
	}

	/**
	 * Creates an agent of the engine under test whose driver can lose notifications,
	 * closed after the test.
	 * @param role what the agent is
	 * @return the agent and its driver
	 */
	FaultInjectingAgent faultInjectingAgent(String role) {
		AgentConfig config = config(name(role)).build();
		FaultInjectingDriver driver = FaultInjectingDriver.open(config);
		return new FaultInjectingAgent(driver, track(driver.agent(config)));
	}

	/**
	 * Creates a cache with its own agent, both closed after the test; it is not
	 * published.
	 * @param role what the agent is
	 * @param layout the cache's layout
	 * @param customizer changes to the agent's default configuration
	 * @return the cache
	 */
	PagedKvCache cache(String role, KvCacheLayout layout, Consumer<AgentConfig.Builder> customizer) {
		return track(PagedKvCache.allocate(agent(role, customizer), layout));
	}

	/**
	 * Publishes the metadata of the caches' agents in the exchange.
	 * @param caches the caches
	 */
	void publish(PagedKvCache... caches) {
		for (PagedKvCache cache : caches) {
			this.exchange.publish(cache.agent());
		}
	}

	/**
	 * Creates a publication of an agent's metadata in the exchange, closed after the
	 * test; it is not published yet.
	 * @param agent the agent
	 * @param cache the cache whose handle is published beside the metadata, or
	 * {@code null} for none
	 * @return the publication
	 */
	MetadataPublication publication(NixlAgent agent, @Nullable PagedKvCache cache) {
		MetadataPublication.Builder builder = MetadataPublication.builder(this.exchange, agent);
		if (cache != null) {
			builder.document(KvDirectory.HANDLE_DOCUMENT, cache.handle().toJson());
		}
		return track(builder.build());
	}

	/**
	 * Creates a producer that loads its consumers from the exchange, closed after the
	 * test.
	 * @param cache the producer's cache
	 * @param customizer more settings
	 * @return the producer
	 */
	KvProducer producer(PagedKvCache cache, UnaryOperator<KvProducer.Builder> customizer) {
		return track(customizer.apply(KvProducer.builder(cache).peers(PeerLoader.of(this.exchange))).build());
	}

	/**
	 * Creates a producer that loads its consumers from the exchange, closed after the
	 * test.
	 * @param cache the producer's cache
	 * @return the producer
	 */
	KvProducer producer(PagedKvCache cache) {
		return producer(cache, UnaryOperator.identity());
	}

	/**
	 * Creates a consumer without a directory that loads producers from the exchange,
	 * connected to a producer.
	 * @param cache the consumer's cache
	 * @param rank the consumer's rank
	 * @param producer the producer
	 * @return the consumer
	 */
	KvConsumer consumer(PagedKvCache cache, int rank, KvProducer producer) {
		KvConsumer consumer = KvConsumer.builder(cache).rank(rank).peers(PeerLoader.of(this.exchange)).build();
		consumer.connect(producer.handle());
		return consumer;
	}

	/**
	 * An agent and the driver that can lose its notifications.
	 *
	 * @param driver the driver
	 * @param agent the agent
	 */
	record FaultInjectingAgent(FaultInjectingDriver driver, NixlAgent agent) {
	}

	/**
	 * Leases blocks the test keeps its own references to: the lease takes over one more
	 * reference, retained here (and released again when the lease is refused).
	 * @param producer the producer
	 * @param requestId the request
	 * @param blockIds the blocks
	 * @param ranks the consumer ranks
	 * @param ttl the lease's time to live
	 * @param consumer the consumer, or {@code null} for the first that claims the lease
	 * @return the lease
	 */
	static KvLease leaseKeeping(KvProducer producer, String requestId, int[] blockIds, int ranks, Duration ttl,
			@Nullable String consumer) {
		KvLease.Options options = KvLease.options().consumerRanks(ranks).ttl(ttl);
		producer.cache().allocator().retain(blockIds);
		try {
			return producer.lease(requestId, blockIds, (consumer != null) ? options.consumer(consumer) : options);
		}
		catch (RuntimeException ex) {
			producer.cache().allocator().release(blockIds);
			throw ex;
		}
	}

	/**
	 * Leases blocks the test keeps its own references to, for the first consumer that
	 * claims the lease.
	 * @param producer the producer
	 * @param requestId the request
	 * @param blockIds the blocks
	 * @param ranks the consumer ranks
	 * @param ttl the lease's time to live
	 * @return the lease
	 */
	static KvLease leaseKeeping(KvProducer producer, String requestId, int[] blockIds, int ranks, Duration ttl) {
		return leaseKeeping(producer, requestId, blockIds, ranks, ttl, null);
	}

}
