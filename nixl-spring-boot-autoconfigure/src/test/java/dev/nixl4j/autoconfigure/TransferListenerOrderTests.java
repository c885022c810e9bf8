package dev.nixl4j.autoconfigure;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Drain;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.autoconfigure.metrics.NixlMetricsAutoConfiguration;
import dev.nixl4j.autoconfigure.metrics.NixlObservationAutoConfiguration;
import dev.nixl4j.autoconfigure.resilience.NixlResilienceAutoConfiguration;
import dev.nixl4j.resilience4j.PeerCircuitBreakers;
import dev.nixl4j.resilience4j.TransferBulkhead;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.testsupport.TestPeer;
import io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration;
import io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The agent applies the transfer listener beans in {@code @Order} order, the
 * auto-configured ones at their {@link TransferListenerOrder} orders: user listeners
 * placed before, between and after them see the built-ins' effects in that order, and a
 * listener that refuses a post is heard (through {@code postRefused}) by the listeners
 * before it and by none after it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TransferListenerOrderTests {

	private static final int SIZE = 64 * 1024;

	private static final String REFUSER = "refuser";

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlMetricsAutoConfiguration.class,
				NixlObservationAutoConfiguration.class, NixlResilienceAutoConfiguration.class,
				ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
				CircuitBreakerAutoConfiguration.class, BulkheadAutoConfiguration.class))
		.withUserConfiguration(UserListeners.class)
		.withPropertyValues("nixl.agent.engine=embedded", "nixl.agent.name=ordered-" + ProcessHandle.current().pid());

	@Test
	void userListenersRunBeforeBetweenAndAfterTheBuiltInsInOrder() {
		this.runner.run(context -> {
			assertThat(context).hasNotFailed();
			Events events = probe(context);
			try (TestPeer peer = TestPeer.start("ordered", SIZE, 1)) {
				write(context, peer);
			}
			assertThat(events.list).containsExactly(
					// before the observation starts, before the bulkhead takes its permit
					"first before: observations=0 permits=1024", "afterObservation before: observations=1 permits=1024",
					"afterMetrics before: observations=1 permits=1024",
					"afterDrain before: observations=1 permits=1024",
					"afterBreaker before: observations=1 permits=1024", "unordered before: observations=1 permits=1023",
					// the timer records after the metrics' place, the breaker counts
					// after its own
					"first after: timed=0 breakerCalls=0", "afterObservation after: timed=0 breakerCalls=0",
					"afterMetrics after: timed=1 breakerCalls=0", "afterDrain after: timed=1 breakerCalls=0",
					"afterBreaker after: timed=1 breakerCalls=1", "unordered after: timed=1 breakerCalls=1");
		});
	}

	@Test
	void aRefusingListenerIsHeardByTheListenersBeforeItAndByNoneAfterIt() {
		this.runner.withPropertyValues("test.refuse=true").run(context -> {
			assertThat(context).hasNotFailed();
			Events events = probe(context);
			try (TestPeer peer = TestPeer.start("refused", SIZE, 1)) {
				IllegalStateException refused = catchThrowableOfType(IllegalStateException.class,
						() -> write(context, peer));
				assertThat(refused).hasMessage("refused by the user's listener");
				assertThat(events.list).containsExactly("first before: observations=0 permits=1024",
						"afterObservation before: observations=1 permits=1024",
						"afterMetrics before: observations=1 permits=1024",
						"first refused: refused by the user's listener",
						"afterObservation refused: refused by the user's listener",
						"afterMetrics refused: refused by the user's listener");
				// the drain before the refuser heard the refusal: nothing of it is in
				// flight
				assertThat(context.getBean(Drain.class).drain(Duration.ZERO).isComplete()).isTrue();

				// now the drain refuses: the refuser and everything after it hear nothing
				events.list.clear();
				NixlException shuttingDown = catchThrowableOfType(NixlException.class, () -> write(context, peer));
				assertThat(shuttingDown.status()).isEqualTo(NixlStatus.UNAVAILABLE);
				assertThat(events.list).containsExactly("first before: observations=1 permits=1024",
						"afterObservation before: observations=2 permits=1024",
						"afterMetrics before: observations=2 permits=1024",
						"first refused: " + shuttingDown.getMessage(),
						"afterObservation refused: " + shuttingDown.getMessage(),
						"afterMetrics refused: " + shuttingDown.getMessage());
			}
		});
	}

	@Test
	void withoutTheUsersListenersTheBuiltInsAreApplied() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class, NixlResilienceAutoConfiguration.class,
					CircuitBreakerAutoConfiguration.class, BulkheadAutoConfiguration.class))
			.withPropertyValues("nixl.agent.engine=embedded", "nixl.transfer.max-in-flight=1")
			.run(context -> {
				assertThat(context).hasNotFailed().hasSingleBean(PeerCircuitBreakers.class);
				TransferBulkhead bulkhead = context.getBean(TransferBulkhead.class);
				try (TestPeer peer = TestPeer.start("bulkhead", SIZE, 1)) {
					write(context, peer);
				}
				assertThat(bulkhead.bulkhead().getMetrics().getAvailableConcurrentCalls()).isOne();
				context.getBean(Drain.class).drain(Duration.ZERO);
				try (TestPeer peer = TestPeer.start("bulkhead-stopping", SIZE, 1)) {
					assertThat(catchThrowableOfType(NixlException.class, () -> write(context, peer)).status())
						.isEqualTo(NixlStatus.UNAVAILABLE);
				}
			});
	}

	@Test
	void anApplicationsOwnAgentBeanGetsTheListenerBeansToo() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(NixlAutoConfiguration.class))
			.withBean(NixlAgent.class,
					() -> NixlAgent.create(AgentConfig.builder("own-agent").engine(Engine.EMBEDDED).build()))
			.withBean("mine", Recorder.class, () -> new Recorder("mine", new Events(), false))
			.run(context -> {
				assertThat(context).hasNotFailed();
				Recorder mine = context.getBean(Recorder.class);
				try (TestPeer peer = TestPeer.start("own", SIZE, 1)) {
					write(context, peer);
					context.getBean(Drain.class).drain(Duration.ZERO);
					assertThat(catchThrowableOfType(NixlException.class, () -> write(context, peer)).status())
						.isEqualTo(NixlStatus.UNAVAILABLE);
				}
				// the drain comes before a listener without an order: the refused post
				// never reached it
				assertThat(mine.events().list).containsExactly("mine before: ", "mine after: ");
			});
	}

	/** A WRITE from the application's agent to the peer, every byte checked. */
	private static void write(AssertableApplicationContext context, TestPeer peer) {
		NixlAgent agent = context.getBean(NixlAgent.class);
		try (Arena arena = Arena.ofShared()) {
			MemorySegment local = Bytes.pattern(arena, SIZE, 3);
			try (Registration _ = agent.register(local)) {
				if (!agent.hasRemoteMetadata(peer.agent().name())) {
					agent.loadRemoteMetadata(peer.agent().localMetadata());
				}
				peer.transfer(agent, XferOp.WRITE, local, null);
			}
		}
	}

	/** Makes the events show the built-ins' state as each user listener saw it. */
	private static Events probe(AssertableApplicationContext context) {
		Events events = context.getBean(Events.class);
		StartCounter observations = context.getBean(StartCounter.class);
		MeterRegistry meters = context.getBean(MeterRegistry.class);
		TransferBulkhead bulkhead = context.getBean(TransferBulkhead.class);
		PeerCircuitBreakers breakers = context.getBean(PeerCircuitBreakers.class);
		events.before = () -> "observations=" + observations.started + " permits="
				+ bulkhead.bulkhead().getMetrics().getAvailableConcurrentCalls();
		events.after = (transfer) -> "timed="
				+ Search.in(meters).name("nixl.transfer.duration").timers().stream().mapToLong(t -> t.count()).sum()
				+ " breakerCalls="
				+ breakers.circuitBreaker(transfer.remoteAgent()).getMetrics().getNumberOfSuccessfulCalls();
		return events;
	}

	/** What the user's listeners heard, in the order they heard it. */
	static final class Events {

		final List<String> list = new CopyOnWriteArrayList<>();

		volatile Supplier<String> before = () -> "";

		volatile Function<Transfer, String> after = (transfer) -> "";

	}

	/** Counts the observations started. */
	static final class StartCounter implements ObservationHandler<Observation.Context> {

		volatile int started;

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

		@Override
		public void onStart(Observation.Context context) {
			this.started++;
		}

	}

	/** A user's listener that records what it hears, or one that refuses every post. */
	record Recorder(String name, Events events, boolean refuse) implements TransferListener {

		@Override
		public void beforePost(Transfer transfer) {
			if (this.refuse) {
				throw new IllegalStateException("refused by the user's listener");
			}
			this.events.list.add(this.name + " before: " + this.events.before.get());
		}

		@Override
		public void postRefused(Transfer transfer, RuntimeException reason) {
			this.events.list.add(this.name + " refused: " + reason.getMessage());
		}

		@Override
		public void afterPost(Transfer transfer, TransferState outcome, long durationNanos,
				@Nullable NixlException failure) {
			this.events.list.add(this.name + " after: " + this.events.after.apply(transfer));
		}

	}

	/** Declared out of order: the agent applies them by their {@code @Order}. */
	@Configuration(proxyBeanMethods = false)
	static class UserListeners {

		@Bean
		Events events() {
			return new Events();
		}

		@Bean
		StartCounter startCounter() {
			return new StartCounter();
		}

		@Bean
		Recorder unordered(Events events) {
			return new Recorder("unordered", events, false);
		}

		@Bean
		@Order(TransferListenerOrder.CIRCUIT_BREAKER + 1)
		Recorder afterBreaker(Events events) {
			return new Recorder("afterBreaker", events, false);
		}

		@Bean
		@Order(TransferListenerOrder.DRAIN + 1)
		TransferListener afterDrain(Events events, Environment environment) {
			boolean refuse = environment.getProperty("test.refuse", Boolean.class, false);
			return refuse ? new Recorder(REFUSER, events, true) : new Recorder("afterDrain", events, false);
		}

		@Bean
		@Order(TransferListenerOrder.OBSERVATION - 1)
		Recorder first(Events events) {
			return new Recorder("first", events, false);
		}

		@Bean
		@Order(TransferListenerOrder.METRICS + 1)
		Recorder afterMetrics(Events events) {
			return new Recorder("afterMetrics", events, false);
		}

		@Bean
		@Order(TransferListenerOrder.OBSERVATION + 1)
		Recorder afterObservation(Events events) {
			return new Recorder("afterObservation", events, false);
		}

	}

}
