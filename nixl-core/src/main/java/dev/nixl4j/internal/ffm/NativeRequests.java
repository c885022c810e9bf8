package dev.nixl4j.internal.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.TransferTelemetry;
import dev.nixl4j.XferOp;
import org.jspecify.annotations.Nullable;

import static dev.nixl4j.internal.ffm.NativeCalls.SUCCESS;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * How one native agent makes transfer requests: from two descriptor lists, or from two
 * prepared lists and indices into them; and what NIXL measured of a request. Posting,
 * polling and releasing a request stay in {@link NativeDriver}, the post path.
 */
final class NativeRequests {

	private static final MemorySegment NULL = MemorySegment.NULL;

	private final String name;

	private final MemorySegment agent;

	NativeRequests(String name, MemorySegment agent) {
		this.name = name;
		this.agent = agent;
	}

	long createRequest(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent) {
		MemorySegment localList = xferDlist(local);
		MemorySegment remoteList = null;
		try (Arena arena = Arena.ofConfined()) {
			remoteList = xferDlist(remote);
			MemorySegment out = arena.allocate(ADDRESS);
			int rc = (int) Capi.CREATE_XFER_REQ.invokeExact(this.agent, op.code(), localList, remoteList,
					arena.allocateFrom(remoteAgent), out, NULL);
			check(rc, "create_xfer_req", remoteAgent, "NIXL refused a " + op + " of " + local.size()
					+ " descriptor(s): the remote agent's metadata is not loaded, a remote descriptor is outside its "
					+ "registered memory, or no common backend serves these memory types");
			return out.get(ADDRESS, 0).address();
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "create_xfer_req", this.name, remoteAgent);
		}
		finally {
			destroyXferDlist(localList);
			if (remoteList != null) {
				destroyXferDlist(remoteList);
			}
		}
	}

	long prepare(@Nullable String remoteAgent, DescriptorList descriptors) {
		MemorySegment dlist = xferDlist(descriptors);
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			int rc = (int) Capi.PREP_XFER_DLIST.invokeExact(this.agent,
					arena.allocateFrom((remoteAgent != null) ? remoteAgent : ""), dlist, out, NULL);
			check(rc, "prep_xfer_dlist", remoteAgent, "NIXL could not prepare " + descriptors.size()
					+ " descriptor(s); for a remote list its metadata must be loaded and cover every descriptor");
			return out.get(ADDRESS, 0).address();
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "prep_xfer_dlist", this.name, remoteAgent);
		}
		finally {
			destroyXferDlist(dlist);
		}
	}

	void releasePrepared(long prepared) {
		try {
			int rc = (int) Capi.RELEASE_XFER_DLIST_HANDLE.invokeExact(this.agent, MemorySegment.ofAddress(prepared));
			check(rc, "release_xfer_dlist_handle", null, "");
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "release_xfer_dlist_handle", this.name, null);
		}
	}

	long makeRequest(XferOp op, long local, int[] localIndices, long remote, int[] remoteIndices) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment localIdx = arena.allocateFrom(JAVA_INT, localIndices);
			MemorySegment remoteIdx = arena.allocateFrom(JAVA_INT, remoteIndices);
			MemorySegment out = arena.allocate(ADDRESS);
			int rc = (int) Capi.MAKE_XFER_REQ.invokeExact(this.agent, op.code(), MemorySegment.ofAddress(local),
					localIdx, (long) localIndices.length, MemorySegment.ofAddress(remote), remoteIdx,
					(long) remoteIndices.length, out, NULL);
			check(rc, "make_xfer_req", null,
					"NIXL refused a " + op + " of " + localIndices.length + " prepared descriptor(s)");
			return out.get(ADDRESS, 0).address();
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "make_xfer_req", this.name, null);
		}
	}

	TransferTelemetry telemetry(long request) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment t = arena.allocate(Capi.TELEMETRY);
			int rc = (int) Capi.GET_XFER_TELEMETRY.invokeExact(this.agent, MemorySegment.ofAddress(request), t);
			check(rc, "get_xfer_telemetry", null,
					"no telemetry for this transfer (telemetry must be on in AgentConfig, "
							+ "and the transfer must have been posted)");
			return new TransferTelemetry(t.get(JAVA_LONG, 0), Duration.ofNanos(t.get(JAVA_LONG, 8) * 1000),
					Duration.ofNanos(t.get(JAVA_LONG, 16) * 1000), t.get(JAVA_LONG, 24), t.get(JAVA_LONG, 32));
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "get_xfer_telemetry", this.name, null);
		}
	}

	private MemorySegment xferDlist(DescriptorList descriptors) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.CREATE_XFER_DLIST.invokeExact(descriptors.memoryType().code(), out), "create_xfer_dlist",
					null, "");
			MemorySegment dlist = out.get(ADDRESS, 0);
			for (MemoryDescriptor descriptor : descriptors.descriptors()) {
				int rc = (int) Capi.XFER_DLIST_ADD_DESC.invokeExact(dlist, descriptor.address(), descriptor.length(),
						descriptor.deviceId());
				if (rc != SUCCESS) {
					destroyXferDlist(dlist);
					check(rc, "xfer_dlist_add_desc", null, descriptor.toString());
				}
			}
			return dlist;
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "create_xfer_dlist", this.name, null);
		}
	}

	private void destroyXferDlist(MemorySegment dlist) {
		try {
			int ignored = (int) Capi.DESTROY_XFER_DLIST.invokeExact(dlist);
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "destroy_xfer_dlist", this.name, null);
		}
	}

	private void check(int rc, String operation, @Nullable String remoteAgent, String detail) {
		NativeCalls.check(rc, operation, this.name, remoteAgent, detail);
	}

}
