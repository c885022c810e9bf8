package dev.nixl4j.autoconfigure.health;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.AgentState;
import dev.nixl4j.AgentStatistics;
import dev.nixl4j.Backend;
import dev.nixl4j.Engine;
import dev.nixl4j.NativeLibraryInfo;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaDevice;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.readiness.Readiness;
import dev.nixl4j.readiness.ReadinessReport;
import dev.nixl4j.kv.KvConsumer;
import dev.nixl4j.kv.KvProducer;
import dev.nixl4j.kv.KvProducerSession;
import dev.nixl4j.metadata.MetadataPublication;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Health of a {@link NixlAgent}, contributed as {@code nixl}.
 *
 * <ul>
 * <li>{@code DOWN} when the agent is closed, when it {@linkplain AgentState#FAILED
 * failed} (one of its internal threads could not go on; the details give the reason), or
 * when a cheap call into its engine (listing the plugins) fails;
 * <li>{@code OUT_OF_SERVICE} when the application publishes the agent's metadata and its
 * entry is not published now (it vanished or changed and is being published again; the
 * details say why), or when the agent runs on native NIXL and the
 * {@linkplain ReadinessReport readiness report} for its configuration is not
 * {@link Readiness#READY};
 * <li>{@code UP} otherwise.
 * </ul>
 *
 * <p>
 * The details name the engine and what backs it (for native NIXL, the {@code library}
 * loaded: where the search found it, its path and version), the backends, the peers whose
 * metadata is loaded, the transfers in flight, how many posts stalled, and the readiness.
 * They never hold metadata, memory keys, memory addresses or backend parameters. Names
 * and paths (this agent's name, its peers' and its KV producers', the KV sessions'
 * incarnations, where the NIXL and CUDA libraries lie) are shown only while
 * {@link #withNames(BooleanSupplier)} allows; otherwise every detail shows
 * {@value #HIDDEN} in their place, the rule of the {@code nixl} endpoint.
 *
 * <p>
 * The readiness report creates two short-lived agents and moves data between them, which
 * takes from milliseconds to seconds. It therefore runs once, on the first health check,
 * and its result is kept for the life of this indicator: later checks only look at the
 * live agent. The report checks native NIXL (the library, the plugins, a native loopback
 * transfer). An agent backed by the embedded engine does not use native NIXL, so for it
 * the report is not run and the details say so: a host without NIXL would otherwise make
 * a working embedded agent look out of service.
 */
public class NixlHealthIndicator extends AbstractHealthIndicator {

	/**
	 * What stands for a name or path the details may not show, as in the {@code nixl}
	 * endpoint.
	 */
	public static final String HIDDEN = "(hidden)";

	private final NixlAgent agent;

	private final Function<AgentConfig, ReadinessReport> readinessCheck;

	private @Nullable ReadinessReport readiness;

	private @Nullable Map<String, Object> cuda;

	private volatile @Nullable MetadataPublication publication;

	private volatile @Nullable EtcdReachability etcd;

	private volatile @Nullable KvConsumer kvConsumer;

	private volatile BooleanSupplier showNames = () -> true;

	private volatile @Nullable KvProducer kvProducer;

	/**
	 * Creates an indicator whose readiness report requires host memory (DRAM) to move.
	 * @param agent the agent
	 */
	public NixlHealthIndicator(NixlAgent agent) {
		this(agent, ReadinessReport::check);
	}

	/**
	 * Creates an indicator with its own readiness check, for example one that also
	 * requires {@link dev.nixl4j.MemoryType#VRAM}:
	 * {@code config -> ReadinessReport.check(config, Set.of(MemoryType.DRAM, MemoryType.VRAM))}.
	 * @param agent the agent
	 * @param readinessCheck runs the readiness report for the agent's configuration;
	 * called at most once
	 */
	public NixlHealthIndicator(NixlAgent agent, Function<AgentConfig, ReadinessReport> readinessCheck) {
		super("NIXL health check failed");
		this.agent = agent;
		this.readinessCheck = readinessCheck;
	}

	/**
	 * Makes the indicator report the state of the agent's metadata publication.
	 * @param publication the publication that keeps the agent's entry, {@code null} for
	 * none
	 * @return this indicator
	 */
	public NixlHealthIndicator withPublication(@Nullable MetadataPublication publication) {
		this.publication = publication;
		return this;
	}

	/**
	 * Makes the indicator report DOWN, with the reason, while none of the etcd endpoints
	 * that NIXL's own etcd exchange uses accepts a connection within the timeout: NIXL's
	 * client reports no failure back to Java, so without this check an unreachable etcd
	 * goes unnoticed.
	 * @param endpoints the endpoints, for example {@code http://10.0.0.5:2379}
	 * @param timeout how long all connection attempts of one check together may take
	 * @return this indicator
	 */
	public NixlHealthIndicator withEtcdEndpoints(List<String> endpoints, Duration timeout) {
		this.etcd = new EtcdReachability(endpoints, timeout);
		return this;
	}

	/**
	 * Makes the indicator show where the consumer's session with each producer stands
	 * (connected, reconnecting, gone, incompatible), as detail {@code kvSessions}. A
	 * producer that is gone or incompatible is the producer's state, not this agent's: it
	 * does not change the status.
	 * @param consumer the KV consumer, {@code null} for none
	 * @return this indicator
	 */
	public NixlHealthIndicator withKvConsumer(@Nullable KvConsumer consumer) {
		this.kvConsumer = consumer;
		return this;
	}

	/**
	 * Makes the indicator show names and paths only while {@code showNames} says so, for
	 * example only when the health endpoint shows details to authenticated callers alone
	 * (the starter's rule, after {@code nixl.endpoint.show-names}). By default it shows
	 * them.
	 * @param showNames asked at each check
	 * @return this indicator
	 */
	public NixlHealthIndicator withNames(BooleanSupplier showNames) {
		this.showNames = showNames;
		return this;
	}

	/**
	 * Makes the indicator show the KV producer's leases and answers, as detail
	 * {@code kvProducer}: {@code activeLeases}, {@code pendingAnswers} (answers that wait
	 * for their consumer's metadata), {@code droppedAnswers} and {@code ignoredMessages}
	 * (done and release messages from agents that are not the lease's consumer), and
	 * {@code answers} saying so while answers back up
	 * ({@link KvProducer#answersBackedUp()}). Backed-up answers do not change the status:
	 * they wait for agents whose metadata cannot be found, while this agent still moves
	 * data and answers the consumers it knows at once.
	 * @param producer the KV producer, {@code null} for none
	 * @return this indicator
	 */
	public NixlHealthIndicator withKvProducer(@Nullable KvProducer producer) {
		this.kvProducer = producer;
		return this;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		if (this.showNames.getAsBoolean()) {
			check(builder);
			return;
		}
		Health.Builder named = new Health.Builder();
		try {
			check(named);
		}
		catch (RuntimeException ex) {
			// Boot shows the exception's message as detail "error"; the cause is logged
			throw new IllegalStateException(hide(ex.toString(), secrets()), ex);
		}
		Health health = named.build();
		List<String> secrets = secrets();
		builder.status(health.getStatus());
		health.getDetails().forEach((name, value) -> builder.withDetail(name, hide(value, secrets)));
	}

	/**
	 * The names and paths that are hidden: the agent's, its peers', its KV producers' and
	 * their incarnations, the NIXL library's path, directory and source, the CUDA
	 * library's; the longest first, so that a name inside another goes with it.
	 */
	private List<String> secrets() {
		List<String> secrets = new ArrayList<>();
		secrets.add(this.agent.name());
		secrets.addAll(this.agent.remoteAgents());
		KvConsumer consumer = this.kvConsumer;
		if (consumer != null) {
			for (KvProducerSession session : consumer.sessions()) {
				secrets.add(session.producer());
				secrets.add(session.incarnation());
			}
		}
		this.agent.nativeLibrary().ifPresent((library) -> {
			secrets.add(library.path().toString());
			Path directory = library.path().toAbsolutePath().getParent();
			if (directory != null && directory.getNameCount() > 0) {
				secrets.add(directory.toString());
			}
			secrets.add(library.pluginDirectory().toString());
			secrets.add(library.source());
		});
		Map<String, Object> cudaDetail = this.cuda;
		if (cudaDetail != null) {
			for (String key : List.of("library", "source")) {
				if (cudaDetail.get(key) instanceof String value) {
					secrets.add(value);
				}
			}
		}
		return secrets.stream()
			.filter((secret) -> secret != null && !secret.isBlank())
			.distinct()
			.sorted(Comparator.comparingInt(String::length).reversed())
			.toList();
	}

	/** A detail with every secret in its text replaced, in maps and lists too. */
	private static Object hide(Object value, List<String> secrets) {
		if (value instanceof Map<?, ?> map) {
			Map<Object, @Nullable Object> hidden = new LinkedHashMap<>();
			map.forEach((key, item) -> hidden.put(key, (item != null) ? hide(item, secrets) : null));
			return hidden;
		}
		if (value instanceof List<?> list) {
			List<@Nullable Object> hidden = new ArrayList<>();
			list.forEach((item) -> hidden.add((item != null) ? hide(item, secrets) : null));
			return hidden;
		}
		if (value instanceof String text) {
			return hide(text, secrets);
		}
		return value;
	}

	private static String hide(String text, List<String> secrets) {
		String hidden = text;
		for (String secret : secrets) {
			hidden = hidden.replace(secret, HIDDEN);
		}
		return hidden;
	}

	private void check(Health.Builder builder) {
		builder.withDetail("agent", this.agent.name());
		if (!this.agent.isOpen()) {
			builder.down().withDetail("reason", "the agent is closed");
			return;
		}
		if (this.agent.state() == AgentState.FAILED) {
			builder.down()
				.withDetail("state", AgentState.FAILED)
				.withDetail("reason", this.agent.failure().map(Throwable::getMessage).orElse("the agent failed"));
			return;
		}
		// A real call into the engine: it throws (and the indicator reports DOWN) when
		// the agent
		// closed meanwhile or the engine no longer answers.
		this.agent.availablePlugins();
		Engine engine = this.agent.engine();
		builder.withDetail("engine", engine).withDetail("engineDescription", this.agent.engineDescription());
		this.agent.nativeLibrary().ifPresent((library) -> builder.withDetail("library", libraryDetail(library)));
		if (engine == Engine.NATIVE) {
			builder.withDetail("cuda", cudaDetail());
		}
		builder.withDetail("backends", this.agent.backends().stream().map(Backend::plugin).toList());
		List<String> peers = this.agent.remoteAgents();
		Map<String, Object> peerDetail = new LinkedHashMap<>();
		peerDetail.put("count", peers.size());
		peerDetail.put("names", peers);
		builder.withDetail("peers", peerDetail)
			.withDetail("inFlightTransfers", this.agent.inFlightTransfers().size())
			.withDetail("stalledTransfers", stalled(this.agent.statistics()));
		KvConsumer consumer = this.kvConsumer;
		if (consumer != null) {
			builder.withDetail("kvSessions",
					consumer.sessions().stream().map(NixlHealthIndicator::sessionDetail).toList());
		}
		KvProducer producer = this.kvProducer;
		if (producer != null) {
			builder.withDetail("kvProducer", producerDetail(producer));
		}
		if (unpublished(builder)) {
			return;
		}
		EtcdReachability etcdCheck = this.etcd;
		if (etcdCheck != null) {
			String problem = etcdCheck.problem();
			Map<String, Object> etcdDetail = new LinkedHashMap<>();
			etcdDetail.put("endpoints", etcdCheck.endpoints());
			etcdDetail.put("reachable", problem == null);
			if (problem != null) {
				etcdDetail.put("reason", problem);
				builder.down().withDetail("etcd", etcdDetail);
				return;
			}
			builder.withDetail("etcd", etcdDetail);
		}
		if (engine != Engine.NATIVE) {
			builder.up()
				.withDetail("readiness", readinessDetail("not checked",
						"the embedded engine (pure Java, DRAM only) backs this agent; the readiness report checks native "
								+ "NIXL, which this agent does not use"));
			return;
		}
		ReadinessReport report = readiness();
		builder.withDetail("readiness", readinessDetail(report.readiness().name(), report.summary()));
		if (report.isReady()) {
			builder.up();
		}
		else {
			builder.outOfService();
		}
	}

	/**
	 * What was found of CUDA and whether UCX's CUDA transports load, once per indicator:
	 * neither changes while the process runs, and neither changes the status.
	 */
	private synchronized Map<String, Object> cudaDetail() {
		Map<String, Object> detail = this.cuda;
		if (detail == null) {
			CudaReport report = Cuda.report();
			detail = new LinkedHashMap<>();
			detail.put("usable", report.usable());
			detail.put("summary", report.summary());
			detail.put("devices", report.devices().stream().map(CudaDevice::toString).toList());
			detail.put("driverVersion", CudaReport.formatVersion(report.driverVersion()));
			detail.put("runtimeVersion", CudaReport.formatVersion(report.runtimeVersion()));
			if (report.library() != null) {
				detail.put("library", report.library());
				detail.put("source", report.source());
			}
			detail.put("ucxCudaTransports", Cuda.ucxCudaSupport().summary());
			this.cuda = detail;
		}
		return detail;
	}

	private static Map<String, Object> producerDetail(KvProducer producer) {
		Map<String, Object> detail = new LinkedHashMap<>();
		detail.put("activeLeases", producer.activeLeases());
		int pending = producer.pendingAnswers();
		detail.put("pendingAnswers", pending);
		detail.put("droppedAnswers", producer.droppedAnswers());
		detail.put("ignoredMessages", producer.ignoredMessages());
		if (producer.answersBackedUp()) {
			detail.put("answers",
					"backed up: " + pending + " answers wait for their consumers' metadata, the oldest for "
							+ producer.oldestPendingAnswer().toMillis() + " ms (at most "
							+ KvProducer.MAX_PENDING_ANSWERS
							+ " wait, then they are dropped); consumers whose metadata is loaded are answered at once");
		}
		return detail;
	}

	private static Map<String, Object> sessionDetail(KvProducerSession session) {
		Map<String, Object> detail = new LinkedHashMap<>();
		detail.put("producer", session.producer());
		detail.put("state", session.state());
		detail.put("incarnation", session.incarnation());
		detail.put("since", session.since());
		if (session.reason() != null) {
			detail.put("reason", session.reason());
		}
		detail.put("reconnects", session.reconnects());
		return detail;
	}

	/** Reports the publication; whether the entry should be published but is not. */
	private boolean unpublished(Health.Builder builder) {
		MetadataPublication current = this.publication;
		if (current == null) {
			return false;
		}
		MetadataPublication.State state = current.state();
		if (state.status() == MetadataPublication.Status.NEW) {
			return false;
		}
		Map<String, Object> detail = new LinkedHashMap<>();
		detail.put("status", state.status());
		detail.put("since", state.since());
		if (state.reason() != null) {
			detail.put("reason", state.reason());
		}
		detail.put("republications", current.republications());
		builder.withDetail("metadata", detail);
		if (state.status() == MetadataPublication.Status.NOT_PUBLISHED) {
			builder.outOfService();
			return true;
		}
		return false;
	}

	private synchronized ReadinessReport readiness() {
		ReadinessReport report = this.readiness;
		if (report == null) {
			report = this.readinessCheck.apply(this.agent.config());
			this.readiness = report;
		}
		return report;
	}

	private static long stalled(AgentStatistics statistics) {
		long stalled = 0;
		for (XferOp op : XferOp.values()) {
			stalled += statistics.transfers(op, TransferState.STALLED);
		}
		return stalled;
	}

	private static Map<String, String> libraryDetail(NativeLibraryInfo library) {
		Map<String, String> detail = new LinkedHashMap<>();
		detail.put("source", library.source());
		detail.put("path", library.path().toString());
		detail.put("version", library.version());
		return detail;
	}

	private static Map<String, String> readinessDetail(String status, String summary) {
		Map<String, String> detail = new LinkedHashMap<>();
		detail.put("status", status);
		detail.put("summary", summary);
		return detail;
	}

}
