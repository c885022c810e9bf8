package dev.nixl4j.autoconfigure.endpoint;

import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import dev.nixl4j.AgentStatistics;
import dev.nixl4j.Backend;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NativeLibraryInfo;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferState;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code nixl} endpoint: the agent, its engine (and for native NIXL the library
 * loaded, where from), plugins and backends, the memory it has registered, its peers, the
 * transfers in flight and its statistics.
 *
 * <p>
 * It shows names, counts and sizes only. Metadata, memory keys, memory addresses and
 * backend parameters (which may hold credentials, for object-store plugins for example)
 * are never part of the answer.
 */
@Endpoint(id = "nixl")
public class NixlEndpoint {

	/** What stands for a name the caller may not see. */
	public static final String HIDDEN = "(hidden)";

	private final NixlAgent agent;

	private final Show showNames;

	private final Set<String> roles;

	/**
	 * Creates the endpoint.
	 * @param agent the agent it describes
	 */
	public NixlEndpoint(NixlAgent agent) {
		this(agent, Show.ALWAYS, Set.of());
	}

	/**
	 * Creates the endpoint, showing agent names only to the callers {@code showNames}
	 * allows.
	 * @param agent the agent it describes
	 * @param showNames when names are shown
	 * @param roles roles of which an authenticated caller needs one to see names under
	 * {@link Show#WHEN_AUTHORIZED}; empty: any authenticated caller
	 */
	public NixlEndpoint(NixlAgent agent, Show showNames, Set<String> roles) {
		this.agent = agent;
		this.showNames = showNames;
		this.roles = Set.copyOf(roles);
	}

	/**
	 * Describes the agent now. Agent names (this agent's, its peers', the peers of its
	 * transfers) and where the NIXL library lies (its path and source, also in the
	 * engine's description) are replaced by {@value #HIDDEN} for callers not allowed to
	 * see them.
	 * @param securityContext the caller
	 * @return the descriptor
	 */
	@ReadOperation
	public NixlDescriptor nixl(SecurityContext securityContext) {
		return describe(this.showNames.isShown(securityContext, this.roles));
	}

	/**
	 * Describes the agent now, names included, for callers in this process.
	 * @return the descriptor
	 */
	public NixlDescriptor nixl() {
		return describe(true);
	}

	private NixlDescriptor describe(boolean names) {
		boolean open = this.agent.isOpen();
		Engine engine = this.agent.engine();
		List<String> peers = this.agent.remoteAgents();
		Optional<NativeLibraryInfo> library = this.agent.nativeLibrary();
		return new NixlDescriptor(names ? this.agent.name() : HIDDEN, open, engine,
				names ? this.agent.engineDescription()
						: library.map((lib) -> LibraryDescriptor.hide(this.agent.engineDescription(), lib))
							.orElse(this.agent.engineDescription()),
				library.map((lib) -> names ? LibraryDescriptor.of(lib) : LibraryDescriptor.hidden(lib)).orElse(null),
				open ? this.agent.availablePlugins() : List.of(),
				this.agent.backends().stream().map(BackendDescriptor::of).toList(),
				RegistrationsDescriptor.of(this.agent.registrations()),
				names ? peers : Collections.nCopies(peers.size(), HIDDEN),
				this.agent.inFlightTransfers().stream().map((t) -> TransferDescriptor.of(t, names)).toList(),
				StatisticsDescriptor.of(this.agent.statistics()));
	}

	/**
	 * What the endpoint answers.
	 *
	 * @param agent the agent's name
	 * @param open whether the agent is open
	 * @param engine the engine that backs it
	 * @param engineDescription what backs the engine: the NIXL library, or the embedded
	 * engine
	 * @param library the NIXL library loaded, for the native engine; {@code null} for the
	 * embedded one
	 * @param availablePlugins the plugins the engine can create backends from (none once
	 * closed)
	 * @param backends the backends created
	 * @param registrations the memory registered now
	 * @param peers the peers whose metadata is loaded
	 * @param inFlightTransfers the transfer posts in progress
	 * @param statistics counters since the agent was created
	 */
	public record NixlDescriptor(String agent, boolean open, Engine engine, String engineDescription,
			@Nullable LibraryDescriptor library, List<String> availablePlugins, List<BackendDescriptor> backends,
			RegistrationsDescriptor registrations, List<String> peers, List<TransferDescriptor> inFlightTransfers,
			StatisticsDescriptor statistics) implements OperationResponseBody {

	}

	/**
	 * The NIXL library the native engine runs on.
	 *
	 * @param source where the search found it, for example
	 * {@code "class path (nixl-native-linux-x86_64 1.5.1)"} or {@code "NIXL_LIB_DIR"}
	 * @param path the path of {@code libnixl_capi.so}
	 * @param version NIXL's version
	 */
	public record LibraryDescriptor(String source, String path, String version) {

		static LibraryDescriptor of(NativeLibraryInfo library) {
			return new LibraryDescriptor(library.source(), library.path().toString(), library.version());
		}

		/** The library for a caller who may not see names: its version only. */
		static LibraryDescriptor hidden(NativeLibraryInfo library) {
			return new LibraryDescriptor(HIDDEN, HIDDEN, library.version());
		}

		/** Words about the library without its path, directory and source. */
		static String hide(String text, NativeLibraryInfo library) {
			String hidden = text.replace(library.path().toString(), HIDDEN)
				.replace(library.pluginDirectory().toString(), HIDDEN);
			return library.source().isBlank() ? hidden : hidden.replace(library.source(), HIDDEN);
		}

	}

	/**
	 * A backend, without its parameters.
	 *
	 * @param plugin the plugin it was created from
	 * @param memoryTypes the memory types it can register
	 */
	public record BackendDescriptor(String plugin, List<MemoryType> memoryTypes) {

		static BackendDescriptor of(Backend backend) {
			return new BackendDescriptor(backend.plugin(), backend.memoryTypes().stream().sorted().toList());
		}

	}

	/**
	 * Registered memory in total and by memory type.
	 *
	 * @param count how many registrations are live
	 * @param bytes their bytes
	 * @param byMemoryType count and bytes of each memory type that has registrations
	 */
	public record RegistrationsDescriptor(int count, long bytes, Map<MemoryType, SizeDescriptor> byMemoryType) {

		static RegistrationsDescriptor of(List<Registration> registrations) {
			Map<MemoryType, SizeDescriptor> byType = new EnumMap<>(MemoryType.class);
			long bytes = 0;
			for (Registration registration : registrations) {
				long size = registration.byteSize();
				bytes += size;
				byType.merge(registration.memoryType(), new SizeDescriptor(1, size),
						(a, b) -> new SizeDescriptor(a.count() + b.count(), a.bytes() + b.bytes()));
			}
			return new RegistrationsDescriptor(registrations.size(), bytes, byType);
		}

	}

	/**
	 * A count of registrations and their bytes.
	 *
	 * @param count the registrations
	 * @param bytes their bytes
	 */
	public record SizeDescriptor(int count, long bytes) {

	}

	/**
	 * A transfer post in progress.
	 *
	 * @param op its direction
	 * @param remoteAgent the peer
	 * @param bytes the bytes it moves
	 * @param ageMillis how long ago it was posted, in milliseconds
	 */
	public record TransferDescriptor(XferOp op, String remoteAgent, long bytes, long ageMillis) {

		static TransferDescriptor of(Transfer transfer, boolean names) {
			return new TransferDescriptor(transfer.op(), names ? transfer.remoteAgent() : HIDDEN, transfer.byteSize(),
					transfer.elapsed().toMillis());
		}

	}

	/**
	 * Counters since the agent was created.
	 *
	 * @param transfers posts that ended, by direction and outcome
	 * @param bytes bytes of posts that ended (moved when completed, requested otherwise),
	 * by direction and outcome
	 * @param notificationsSent notifications sent, on their own or with a transfer
	 * @param notificationsReceived notifications received
	 */
	public record StatisticsDescriptor(Map<XferOp, Map<TransferState, Long>> transfers,
			Map<XferOp, Map<TransferState, Long>> bytes, long notificationsSent, long notificationsReceived) {

		static StatisticsDescriptor of(AgentStatistics statistics) {
			Map<XferOp, Map<TransferState, Long>> transfers = new EnumMap<>(XferOp.class);
			Map<XferOp, Map<TransferState, Long>> bytes = new EnumMap<>(XferOp.class);
			for (XferOp op : XferOp.values()) {
				Map<TransferState, Long> transfersByOutcome = new EnumMap<>(TransferState.class);
				Map<TransferState, Long> bytesByOutcome = new EnumMap<>(TransferState.class);
				for (TransferState outcome : AgentStatistics.OUTCOMES) {
					transfersByOutcome.put(outcome, statistics.transfers(op, outcome));
					bytesByOutcome.put(outcome, statistics.bytes(op, outcome));
				}
				transfers.put(op, transfersByOutcome);
				bytes.put(op, bytesByOutcome);
			}
			return new StatisticsDescriptor(transfers, bytes, statistics.notificationsSent(),
					statistics.notificationsReceived());
		}

	}

}
