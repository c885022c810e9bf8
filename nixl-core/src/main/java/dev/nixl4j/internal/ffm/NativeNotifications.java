package dev.nixl4j.internal.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import dev.nixl4j.internal.engine.EngineDriver.NotificationSink;
import org.jspecify.annotations.Nullable;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The notifications of one native agent: sending one to a peer, and draining those NIXL
 * received into a sink. The drain runs on the progress loop's thread only, and reuses one
 * notification map and its scratch memory from one drain to the next.
 */
final class NativeNotifications {

	private static final MemorySegment NULL = MemorySegment.NULL;

	private final String name;

	private final MemorySegment agent;

	/** Scratch memory of the progress loop's notification drain (one thread). */
	private final Arena drainArena = Arena.ofShared();

	private final MemorySegment notifMap;

	private final MemorySegment drainCount;

	private final MemorySegment drainPointer;

	private final MemorySegment drainLength;

	/**
	 * Creates the notification map.
	 * @param name the agent's name
	 * @param agent the agent
	 * @throws Throwable what NIXL's {@code create_notif_map} threw or returned
	 */
	NativeNotifications(String name, MemorySegment agent) throws Throwable {
		this.name = name;
		this.agent = agent;
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment out = arena.allocate(ADDRESS);
			check((int) Capi.CREATE_NOTIF_MAP.invokeExact(out), "create_notif_map", null);
			this.notifMap = out.get(ADDRESS, 0);
		}
		this.drainCount = this.drainArena.allocate(JAVA_LONG);
		this.drainPointer = this.drainArena.allocate(ADDRESS);
		this.drainLength = this.drainArena.allocate(JAVA_LONG);
	}

	void sendNotification(String remoteAgent, byte[] message) {
		try (Arena arena = Arena.ofConfined()) {
			MemorySegment data = (message.length > 0) ? arena.allocateFrom(ValueLayout.JAVA_BYTE, message)
					: arena.allocate(1);
			int rc = (int) Capi.GEN_NOTIF.invokeExact(this.agent, arena.allocateFrom(remoteAgent), data,
					(long) message.length, NULL);
			NativeCalls.check(rc, "gen_notif", this.name, remoteAgent,
					"NIXL could not send the notification (is the agent's metadata loaded?)");
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "gen_notif", this.name, remoteAgent);
		}
	}

	int drainNotifications(NotificationSink sink) {
		try {
			check((int) Capi.GET_NOTIFS.invokeExact(this.agent, this.notifMap, NULL), "get_notifs", null);
			check((int) Capi.NOTIF_MAP_SIZE.invokeExact(this.notifMap, this.drainCount), "notif_map_size", null);
			long agents = this.drainCount.get(JAVA_LONG, 0);
			if (agents == 0) {
				return 0;
			}
			int delivered = 0;
			try {
				for (long i = 0; i < agents; i++) {
					check((int) Capi.NOTIF_MAP_GET_AGENT_AT.invokeExact(this.notifMap, i, this.drainPointer),
							"notif_map_get_agent_at", null);
					MemorySegment agentName = this.drainPointer.get(ADDRESS, 0);
					String remote = NativeCalls.cString(agentName);
					check((int) Capi.NOTIF_MAP_GET_NOTIFS_SIZE.invokeExact(this.notifMap, agentName, this.drainCount),
							"notif_map_get_notifs_size", remote);
					long count = this.drainCount.get(JAVA_LONG, 0);
					for (long j = 0; j < count; j++) {
						check((int) Capi.NOTIF_MAP_GET_NOTIF.invokeExact(this.notifMap, agentName, j, this.drainPointer,
								this.drainLength), "notif_map_get_notif", remote);
						long length = this.drainLength.get(JAVA_LONG, 0);
						byte[] message = (length == 0) ? new byte[0]
								: this.drainPointer.get(ADDRESS, 0).reinterpret(length).toArray(ValueLayout.JAVA_BYTE);
						sink.accept(remote, message);
						delivered++;
					}
				}
			}
			finally {
				int ignored = (int) Capi.NOTIF_MAP_CLEAR.invokeExact(this.notifMap);
			}
			return delivered;
		}
		catch (Throwable ex) {
			throw NativeCalls.failure(ex, "get_notifs", this.name, null);
		}
	}

	/**
	 * Destroys the notification map; the scratch memory is freed by {@link #freeScratch}
	 * once the agent is gone.
	 * @throws Throwable what the downcall threw
	 */
	void destroyMap() throws Throwable {
		int ignored = (int) Capi.DESTROY_NOTIF_MAP.invokeExact(this.notifMap);
	}

	void freeScratch() {
		this.drainArena.close();
	}

	private void check(int rc, String operation, @Nullable String remoteAgent) {
		NativeCalls.check(rc, operation, this.name, remoteAgent, "");
	}

}
