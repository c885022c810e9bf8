package dev.nixl4j.internal.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.internal.engine.EtcdExchangeDriver;
import dev.nixl4j.metadata.MetadataFraming;
import org.jspecify.annotations.Nullable;

import static dev.nixl4j.internal.ffm.NativeCalls.NOT_FOUND;
import static dev.nixl4j.internal.ffm.NativeCalls.SUCCESS;
import static dev.nixl4j.internal.ffm.NativeCalls.cString;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The metadata of one native agent: its own (whole or for some regions), its peers'
 * (loaded, checked, invalidated), and NIXL's built-in exchange through etcd.
 */
final class NativeMetadata implements EtcdExchangeDriver {

	private static final MemorySegment NULL = MemorySegment.NULL;

	private final String name;

	private final MemorySegment agent;

	private final NativeRegistrations registrations;

	NativeMetadata(String name, MemorySegment agent, NativeRegistrations registrations) {
		this.name = name;
		this.agent = agent;
		this.registrations = registrations;
	}

	byte[] localMetadata() {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment data = arena.allocate(ADDRESS);
			MemorySegment length = arena.allocate(JAVA_LONG);
			check((int) Capi.GET_LOCAL_MD.invokeExact(this.agent, data, length), "get_local_md", null, "");
			return takeBuffer(data.get(ADDRESS, 0), length.get(JAVA_LONG, 0));
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "get_local_md", this.name, null);
		}
	}

	byte[] localPartialMetadata(DescriptorList regions) {
		MemorySegment dlist = this.registrations.regDlist(regions);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment data = arena.allocate(ADDRESS);
			MemorySegment length = arena.allocate(JAVA_LONG);
			check((int) Capi.GET_LOCAL_PARTIAL_MD.invokeExact(this.agent, dlist, data, length, NULL),
					"get_local_partial_md", null, "");
			return takeBuffer(data.get(ADDRESS, 0), length.get(JAVA_LONG, 0));
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "get_local_partial_md", this.name, null);
		}
		finally {
			this.registrations.destroyRegDlist(dlist);
		}
	}

	/** Copies a buffer NIXL allocated with malloc, then frees it. */
	private static byte[] takeBuffer(MemorySegment pointer, long length) throws Throwable {
		try {
			if (length < 0 || length > Integer.MAX_VALUE - 8) {
				throw new NixlException(NixlStatus.ERROR_INVALID_STATE, "get_local_md", null, null,
						"NIXL returned a buffer of impossible length " + length);
			}
			return pointer.reinterpret(length).toArray(ValueLayout.JAVA_BYTE);
		}
		finally {
			Capi.FREE.invokeExact(pointer);
		}
	}

	String loadRemoteMetadata(byte[] metadata) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment data = arena.allocateFrom(ValueLayout.JAVA_BYTE, metadata);
			MemorySegment name = arena.allocate(ADDRESS);
			int rc = (int) Capi.LOAD_REMOTE_MD.invokeExact(this.agent, data, (long) metadata.length, name);
			if (rc != SUCCESS) {
				throw refused(rc, metadata);
			}
			MemorySegment pointer = name.get(ADDRESS, 0);
			try {
				return cString(pointer);
			}
			finally {
				Capi.FREE.invokeExact(pointer);
			}
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "load_remote_md", this.name, null);
		}
	}

	/**
	 * Why NIXL refused a peer's metadata, as far as this agent's state tells: NIXL keeps
	 * the connection details of a peer it has loaded and refuses other ones under the
	 * same name; a peer not loaded was refused by a backend that could not take its
	 * connection details (UCX, for one, cannot reach a peer whose process is gone), and
	 * the backend's own reason is in NIXL's log.
	 */
	private NixlException refused(int rc, byte[] metadata) {
		MetadataFraming.ParsedMetadata parsed = MetadataFraming.parse(metadata);
		String peer = parsed.agentName();
		String detail;
		if (hasRemoteMetadata(peer)) {
			detail = "NIXL refused the metadata of '" + peer + "' (" + metadata.length + " bytes): '" + peer
					+ "' is loaded already, and NIXL refuses other connection details under the same name; a peer"
					+ " that restarted under the same name must be invalidated first";
		}
		else {
			List<String> backends = parsed.connections()
				.stream()
				.map(MetadataFraming.BackendConnection::backend)
				.toList();
			detail = "NIXL could not load the metadata of '" + peer + "' (" + metadata.length + " bytes): "
					+ (backends.isEmpty() ? "it carries no connection details"
							: "its connection details for " + String.join(", ", backends)
									+ " were refused by this agent's backend, which could not reach the peer (it may"
									+ " be gone or unreachable); the backend's own reason, such as UCX's"
									+ " \"Connection refused\" or \"Destination is unreachable\", is in NIXL's log");
		}
		return new NixlException(NixlStatus.ofCode(rc), "load_remote_md", this.name, peer,
				detail + " (status " + rc + ")");
	}

	boolean hasRemoteMetadata(String remoteAgent) {
		try (Arena arena = Arena.ofConfined()) {
			int rc = (int) Capi.CHECK_REMOTE_MD.invokeExact(this.agent, arena.allocateFrom(remoteAgent), NULL);
			if (rc == SUCCESS) {
				return true;
			}
			if (rc == NOT_FOUND) {
				return false;
			}
			check(rc, "check_remote_md", remoteAgent, "");
			return false;
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "check_remote_md", this.name, remoteAgent);
		}
	}

	void invalidateRemoteMetadata(String remoteAgent) {
		try (Arena arena = Arena.ofConfined()) {
			int rc = (int) Capi.INVALIDATE_REMOTE_MD.invokeExact(this.agent, arena.allocateFrom(remoteAgent));
			check(rc, "invalidate_remote_md", remoteAgent, "no metadata of this agent is loaded");
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "invalidate_remote_md", this.name, remoteAgent);
		}
	}

	/**
	 * Publishes this agent's full metadata through NIXL's built-in exchange
	 * ({@code send_local_md}). NIXL stores it asynchronously, from its metadata worker.
	 * @throws NixlException when NIXL refused
	 */
	@Override
	public void sendLocalMetadata() {
		try {
			check((int) Capi.SEND_LOCAL_MD.invokeExact(this.agent, NULL), "send_local_md", null,
					"NIXL could not queue publishing the metadata to etcd (see NIXL's log above)");
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "send_local_md", this.name, null);
		}
	}

	/**
	 * Asks NIXL's built-in exchange to fetch a peer's metadata and load it
	 * ({@code fetch_remote_md}). Asynchronous: {@link #hasRemoteMetadata} tells when it
	 * is loaded.
	 * @param remoteAgent the peer
	 */
	@Override
	public void fetchRemoteMetadata(String remoteAgent) {
		try (Arena arena = Arena.ofConfined()) {
			check((int) Capi.FETCH_REMOTE_MD.invokeExact(this.agent, arena.allocateFrom(remoteAgent), NULL),
					"fetch_remote_md", remoteAgent,
					"NIXL could not start fetching the metadata from etcd (see NIXL's " + "log above)");
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "fetch_remote_md", this.name, remoteAgent);
		}
	}

	/**
	 * Withdraws this agent's metadata from NIXL's built-in exchange
	 * ({@code invalidate_local_md}): NIXL deletes the agent's keys asynchronously, and
	 * peers watching them forget the agent.
	 */
	@Override
	public void invalidateLocalMetadata() {
		try {
			check((int) Capi.INVALIDATE_LOCAL_MD.invokeExact(this.agent, NULL), "invalidate_local_md", null,
					"NIXL could not queue withdrawing the metadata from etcd (see NIXL's log above)");
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "invalidate_local_md", this.name, null);
		}
	}

	private void check(int rc, String operation, @Nullable String remoteAgent, String detail) {
		NativeCalls.check(rc, operation, this.name, remoteAgent, detail);
	}

}
