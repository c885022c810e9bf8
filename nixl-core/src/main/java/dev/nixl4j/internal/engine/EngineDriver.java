package dev.nixl4j.internal.engine;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Optional;
import java.util.Map;

import dev.nixl4j.Backend;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.PluginInfo;
import dev.nixl4j.TransferTelemetry;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;
import dev.nixl4j.NativeLibraryInfo;

/**
 * The raw operations of one engine's agent, on opaque {@code long} handles.
 * {@link AgentCore} validates every argument (descriptors inside registered memory,
 * indices in range, handles alive) and serialises handle lifetimes before it calls a
 * driver, so drivers trust their input. Control-path methods throw
 * {@link dev.nixl4j.NixlException}; data-path methods return NIXL status codes.
 */
public interface EngineDriver extends AutoCloseable {

	/**
	 * Returns the engine this driver implements.
	 * @return the engine
	 */
	Engine engine();

	/**
	 * Describes the implementation, for example the native library's path and version.
	 * @return a description
	 */
	String description();

	/**
	 * Returns the NIXL library the engine runs on.
	 * @return the library, or empty for an engine that does not run on NIXL
	 */
	default Optional<NativeLibraryInfo> nativeLibrary() {
		return Optional.empty();
	}

	/**
	 * Lists available plugins.
	 * @return plugin names
	 */
	List<String> availablePlugins();

	/**
	 * Describes a plugin.
	 * @param plugin the plugin name
	 * @return its description
	 */
	PluginInfo pluginInfo(String plugin);

	/**
	 * Creates a backend.
	 * @param plugin the plugin name
	 * @param parameters parameters
	 * @return the backend
	 */
	Backend createBackend(String plugin, Map<String, String> parameters);

	/**
	 * Registers memory.
	 * @param regions the regions
	 * @param segments the segments the regions were made from, in the same order, or an
	 * empty list when the caller gave addresses only
	 * @return a handle for {@link #deregister(long)}
	 */
	long register(DescriptorList regions, List<MemorySegment> segments);

	/**
	 * Deregisters memory.
	 * @param registration the handle from {@link #register(DescriptorList, List)}
	 */
	void deregister(long registration);

	/**
	 * Returns the full local metadata.
	 * @return serialized metadata
	 */
	byte[] localMetadata();

	/**
	 * Returns local metadata that describes only some registered regions (no connection
	 * information: the peer must have loaded the full metadata once).
	 * @param regions registered regions of one memory type
	 * @return serialized metadata
	 */
	byte[] localPartialMetadata(DescriptorList regions);

	/**
	 * Loads a peer's metadata.
	 * @param metadata serialized metadata, already checked for framing
	 * @return the peer's name
	 */
	String loadRemoteMetadata(byte[] metadata);

	/**
	 * Returns NIXL's built-in etcd exchange of this driver's agent.
	 * @return the exchange, or {@code null} when the engine has none or the agent was
	 * created without etcd endpoints
	 */
	default @Nullable EtcdExchangeDriver etcdExchange() {
		return null;
	}

	/**
	 * Whether a peer's metadata is loaded.
	 * @param remoteAgent the peer
	 * @return {@code true} if loaded
	 */
	boolean hasRemoteMetadata(String remoteAgent);

	/**
	 * Forgets a peer's metadata.
	 * @param remoteAgent the peer
	 */
	void invalidateRemoteMetadata(String remoteAgent);

	/**
	 * Creates a transfer request.
	 * @param op the direction
	 * @param local local descriptors
	 * @param remote remote descriptors
	 * @param remoteAgent the peer
	 * @return the request handle
	 */
	long createRequest(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent);

	/**
	 * Prepares a descriptor list.
	 * @param remoteAgent the peer, or {@code null} for local memory
	 * @param descriptors the descriptors
	 * @return the prepared handle
	 */
	long prepare(@Nullable String remoteAgent, DescriptorList descriptors);

	/**
	 * Releases a prepared list.
	 * @param prepared the handle
	 */
	void releasePrepared(long prepared);

	/**
	 * Creates a transfer request from prepared lists.
	 * @param op the direction
	 * @param local the local prepared handle
	 * @param localIndices indices into it
	 * @param remote the remote prepared handle
	 * @param remoteIndices indices into it
	 * @return the request handle
	 */
	long makeRequest(XferOp op, long local, int[] localIndices, long remote, int[] remoteIndices);

	/**
	 * Posts a request.
	 * @param request the handle
	 * @param notification the message for the peer, or {@code null} for none
	 * @return a NIXL status code
	 */
	int post(long request, byte @Nullable [] notification);

	/**
	 * Polls a request.
	 * @param request the handle
	 * @return a NIXL status code
	 */
	int status(long request);

	/**
	 * Explains, in words, why a request failed: what the engine knows beyond the status
	 * code. Called after {@link #post} or {@link #status} returned an error.
	 * @param request the handle
	 * @return the explanation, or {@code null} when the status code says all
	 */
	default @Nullable String failureDetail(long request) {
		return null;
	}

	/**
	 * Gives the driver a way to wake the agent's progress loop, for engines that learn of
	 * completions and notifications on their own threads. Called once, before any other
	 * call.
	 * @param wakeUp wakes the progress loop; cheap and safe to call from any thread
	 */
	default void progressListener(Runnable wakeUp) {
	}

	/**
	 * Gives the driver the agent's {@link FaultListener}, for engines that run threads of
	 * their own (listeners, connections): they report there what a unit of work threw,
	 * and a thread that cannot go on. Called once, before any other call.
	 * @param faults receives the faults; safe to call from any thread
	 */
	default void faultListener(FaultListener faults) {
	}

	/**
	 * Releases a request, cancelling it if in progress, and frees its handle.
	 * @param request the handle
	 * @return a NIXL status code of the release
	 */
	int release(long request);

	/**
	 * Returns a request's telemetry.
	 * @param request the handle
	 * @return the telemetry
	 */
	TransferTelemetry telemetry(long request);

	/**
	 * Sends a notification on its own.
	 * @param remoteAgent the peer
	 * @param message the message
	 */
	void sendNotification(String remoteAgent, byte[] message);

	/**
	 * Hands every notification received since the last call to a sink.
	 * @param sink receives (sender, message) pairs
	 * @return how many were handed over
	 */
	int drainNotifications(NotificationSink sink);

	/**
	 * Destroys the agent. Called once, after every handle was released.
	 */
	@Override
	void close();

	/**
	 * Receives drained notifications.
	 */
	@FunctionalInterface
	interface NotificationSink {

		/**
		 * Accepts one notification.
		 * @param remoteAgent the sender
		 * @param message the message
		 */
		void accept(String remoteAgent, byte[] message);

		/**
		 * Whether another notification may be accepted in this drain. A driver that can
		 * hold messages back (in its own inbox, its readers blocked) stops draining when
		 * this turns {@code false}, so that one drain pass takes a bounded number of
		 * messages however fast peers send.
		 * @return {@code true} while there is room
		 */
		default boolean hasRoom() {
			return true;
		}

		/**
		 * Learns that a peer's connection dropped (the peer died, stopped answering or
		 * restarted) and that every notification it sent before was handed over: waits
		 * for notifications from that peer can end at once instead of at their deadline.
		 * @param remoteAgent the peer
		 * @param detail why, naming the peer
		 */
		default void peerLost(String remoteAgent, String detail) {
		}

	}

	/**
	 * Receives what an agent's internal threads (the progress loop, an engine's own
	 * threads) could not handle. The agent logs and counts each report, and turns
	 * {@link dev.nixl4j.AgentState#FAILED} on a fatal one.
	 */
	interface FaultListener {

		/**
		 * Reports that one unit of work of a thread threw and that the thread goes on.
		 * @param thread what the thread does, for the log (for example
		 * {@code "embedded listener"})
		 * @param error what the unit of work threw
		 */
		void survived(String thread, Throwable error);

		/**
		 * Reports that a thread cannot go on, so the agent can no longer move data.
		 * @param thread what the thread did, for the log and the failure
		 * @param error why it stopped
		 */
		void fatal(String thread, Throwable error);

	}

}
