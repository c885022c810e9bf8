package dev.nixl4j.testsupport;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Backend;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.PluginInfo;
import dev.nixl4j.TransferTelemetry;
import dev.nixl4j.XferOp;
import dev.nixl4j.internal.engine.AgentCore;
import dev.nixl4j.internal.engine.EngineDriver;
import dev.nixl4j.internal.engine.EngineDrivers;
import org.jspecify.annotations.Nullable;

/**
 * A real engine's driver (native or embedded) through which tests make the engine throw
 * where it would under memory pressure: in a notification drain or a transfer's status
 * poll, both called by the agent's progress loop. Everything else goes to the real
 * engine, so transfers move real bytes.
 *
 * <p>
 * It reaches the engines through {@link EngineDrivers}, the seam that nixl-core's
 * {@code module-info} exports to this module only.
 */
public final class FaultInjectingDriver implements EngineDriver {

	private static final int SUCCESS = 0;

	private static final int IN_PROGRESS = 1;

	private final EngineDriver engine;

	private final AtomicInteger drainFaults = new AtomicInteger();

	private final AtomicInteger statusFaults = new AtomicInteger();

	private final AtomicInteger releaseFaults = new AtomicInteger();

	private final AtomicInteger postFaults = new AtomicInteger();

	private volatile Error drainError = new OutOfMemoryError();

	private volatile Error statusError = new OutOfMemoryError();

	private volatile Error releaseError = new OutOfMemoryError();

	private volatile Error postError = new OutOfMemoryError();

	private volatile boolean deferPosts;

	private final AtomicInteger postStatusFaults = new AtomicInteger();

	private volatile int postStatus;

	private final AtomicInteger lostTransfers = new AtomicInteger();

	private volatile int lostStatus;

	/**
	 * Requests posted as lost: never handed to the engine, failing at their first poll.
	 */
	private final Set<Long> lost = ConcurrentHashMap.newKeySet();

	private volatile boolean holdTransfers;

	private final AtomicInteger notificationDrops = new AtomicInteger();

	private volatile byte[] dropPrefix = new byte[0];

	private final List<byte[]> droppedNotifications = new CopyOnWriteArrayList<>();

	private FaultInjectingDriver(EngineDriver engine) {
		this.engine = engine;
	}

	/**
	 * Opens the driver of the configured engine ({@link Engine#NATIVE} or
	 * {@link Engine#EMBEDDED}) and wraps it.
	 * @param config the agent's configuration
	 * @return the driver
	 */
	public static FaultInjectingDriver open(AgentConfig config) {
		if (config.engine() == Engine.AUTO) {
			throw new IllegalArgumentException("choose NATIVE or EMBEDDED");
		}
		return new FaultInjectingDriver(EngineDrivers.open(config));
	}

	/**
	 * Creates an agent over this driver.
	 * @param config the configuration the driver was opened with
	 * @return the agent, which owns the driver
	 */
	public NixlAgent agent(AgentConfig config) {
		return new AgentCore(config, this);
	}

	/**
	 * Makes the next drains throw.
	 * @param error what they throw
	 * @param times how many drains throw ({@link Integer#MAX_VALUE}: every one from now
	 * on)
	 */
	public void failDrains(Error error, int times) {
		this.drainError = error;
		this.drainFaults.set(times);
	}

	/**
	 * Makes the next status polls of transfers throw.
	 * @param error what they throw
	 * @param times how many polls throw
	 */
	public void failStatus(Error error, int times) {
		this.statusError = error;
		this.statusFaults.set(times);
	}

	/**
	 * Makes the next posts of transfer requests throw.
	 * @param error what they throw
	 * @param times how many posts throw
	 */
	public void failPosts(Error error, int times) {
		this.postError = error;
		this.postFaults.set(times);
	}

	/**
	 * Makes the next releases of transfer requests throw.
	 * @param error what they throw
	 * @param times how many releases throw ({@link Integer#MAX_VALUE}: every one from now
	 * on)
	 */
	public void failReleases(Error error, int times) {
		this.releaseError = error;
		this.releaseFaults.set(times);
	}

	/**
	 * Makes a post that the engine finished at once answer "in progress", as native
	 * engines do for all but the smallest transfers, so that the progress loop polls it
	 * and runs the listeners (the embedded engine copies between agents of one process
	 * during the post).
	 * @param defer whether to defer
	 */
	public void deferPosts(boolean defer) {
		this.deferPosts = defer;
	}

	/**
	 * Makes every transfer's status poll answer "in progress" while set, so that
	 * transfers stay in flight (combine with {@link #deferPosts}). The engine is still
	 * asked, so its transfers make progress and send their notifications.
	 * @param hold whether to hold
	 */
	public void holdTransfers(boolean hold) {
		this.holdTransfers = hold;
	}

	/**
	 * Makes the next posts answer a status of the backend without reaching the engine, as
	 * NIXL does when it cannot post a request (a connection it knows to be broken, for
	 * example): nothing is transferred and no notification is sent.
	 * @param status the native status code, for example {@code -2}
	 * ({@code NIXL_ERR_BACKEND})
	 * @param times how many posts fail
	 */
	public void failPostsWithStatus(int status, int times) {
		this.postStatus = status;
		this.postStatusFaults.set(times);
	}

	/**
	 * Makes the next posts look accepted without reaching the engine, and fail with a
	 * status of the backend at their first status poll, as a transfer whose connection
	 * drops while it is in flight: nothing is transferred and no notification is sent.
	 * @param status the native status code, for example {@code -2}
	 * ({@code NIXL_ERR_BACKEND})
	 * @param times how many transfers fail so
	 */
	public void loseTransfers(int status, int times) {
		this.lostStatus = status;
		this.lostTransfers.set(times);
	}

	/**
	 * Makes the next received notifications whose message starts with a prefix vanish, as
	 * a notification lost on the way would: the engine delivered them, the agent never
	 * sees them. Others pass.
	 * @param prefix the start of the messages to drop (UTF-8)
	 * @param times how many to drop
	 */
	public void dropNotifications(String prefix, int times) {
		this.dropPrefix = prefix.getBytes(StandardCharsets.UTF_8);
		this.notificationDrops.set(times);
	}

	/**
	 * Returns the received notifications that were dropped ({@link #dropNotifications}).
	 * @return their messages, oldest first
	 */
	public List<byte[]> droppedNotifications() {
		return List.copyOf(this.droppedNotifications);
	}

	private static boolean take(AtomicInteger faults) {
		return faults.getAndUpdate(left -> (left == Integer.MAX_VALUE || left == 0) ? left : left - 1) > 0;
	}

	@Override
	public int drainNotifications(NotificationSink sink) {
		if (take(this.drainFaults)) {
			throw this.drainError;
		}
		// Every message is checked when it arrives, not once per drain: an engine's drain
		// hands over what arrives while it runs, so a drop armed after a drain began
		// still
		// applies to the messages that drain delivers later.
		return this.engine.drainNotifications(new NotificationSink() {

			@Override
			public void accept(String remoteAgent, byte[] message) {
				if (FaultInjectingDriver.this.notificationDrops.get() > 0
						&& startsWith(message, FaultInjectingDriver.this.dropPrefix)
						&& take(FaultInjectingDriver.this.notificationDrops)) {
					FaultInjectingDriver.this.droppedNotifications.add(message.clone());
					return;
				}
				sink.accept(remoteAgent, message);
			}

			@Override
			public boolean hasRoom() {
				return sink.hasRoom();
			}

			@Override
			public void peerLost(String remoteAgent, String detail) {
				sink.peerLost(remoteAgent, detail);
			}

		});
	}

	private static boolean startsWith(byte[] message, byte[] prefix) {
		return message.length >= prefix.length && Arrays.equals(message, 0, prefix.length, prefix, 0, prefix.length);
	}

	@Override
	public int status(long request) {
		if (this.lost.remove(request)) {
			return this.lostStatus;
		}
		if (take(this.statusFaults)) {
			throw this.statusError;
		}
		int status = this.engine.status(request);
		return (this.holdTransfers && status == SUCCESS) ? IN_PROGRESS : status;
	}

	@Override
	public int post(long request, byte @Nullable [] notification) {
		if (take(this.postFaults)) {
			throw this.postError;
		}
		if (take(this.postStatusFaults)) {
			return this.postStatus;
		}
		if (take(this.lostTransfers)) {
			this.lost.add(request);
			return IN_PROGRESS;
		}
		int status = this.engine.post(request, notification);
		return (this.deferPosts && status == SUCCESS) ? IN_PROGRESS : status;
	}

	@Override
	public Engine engine() {
		return this.engine.engine();
	}

	@Override
	public String description() {
		return this.engine.description();
	}

	@Override
	public List<String> availablePlugins() {
		return this.engine.availablePlugins();
	}

	@Override
	public PluginInfo pluginInfo(String plugin) {
		return this.engine.pluginInfo(plugin);
	}

	@Override
	public Backend createBackend(String plugin, Map<String, String> parameters) {
		return this.engine.createBackend(plugin, parameters);
	}

	@Override
	public long register(DescriptorList regions, List<MemorySegment> segments) {
		return this.engine.register(regions, segments);
	}

	@Override
	public void deregister(long registration) {
		this.engine.deregister(registration);
	}

	@Override
	public byte[] localMetadata() {
		return this.engine.localMetadata();
	}

	@Override
	public byte[] localPartialMetadata(DescriptorList regions) {
		return this.engine.localPartialMetadata(regions);
	}

	@Override
	public String loadRemoteMetadata(byte[] metadata) {
		return this.engine.loadRemoteMetadata(metadata);
	}

	@Override
	public boolean hasRemoteMetadata(String remoteAgent) {
		return this.engine.hasRemoteMetadata(remoteAgent);
	}

	@Override
	public void invalidateRemoteMetadata(String remoteAgent) {
		this.engine.invalidateRemoteMetadata(remoteAgent);
	}

	@Override
	public long createRequest(XferOp op, DescriptorList local, DescriptorList remote, String remoteAgent) {
		return this.engine.createRequest(op, local, remote, remoteAgent);
	}

	@Override
	public long prepare(@Nullable String remoteAgent, DescriptorList descriptors) {
		return this.engine.prepare(remoteAgent, descriptors);
	}

	@Override
	public void releasePrepared(long prepared) {
		this.engine.releasePrepared(prepared);
	}

	@Override
	public long makeRequest(XferOp op, long local, int[] localIndices, long remote, int[] remoteIndices) {
		return this.engine.makeRequest(op, local, localIndices, remote, remoteIndices);
	}

	@Override
	public @Nullable String failureDetail(long request) {
		return this.engine.failureDetail(request);
	}

	@Override
	public void progressListener(Runnable wakeUp) {
		this.engine.progressListener(wakeUp);
	}

	@Override
	public void faultListener(FaultListener faults) {
		this.engine.faultListener(faults);
	}

	@Override
	public int release(long request) {
		if (take(this.releaseFaults)) {
			throw this.releaseError;
		}
		return this.engine.release(request);
	}

	@Override
	public TransferTelemetry telemetry(long request) {
		return this.engine.telemetry(request);
	}

	@Override
	public void sendNotification(String remoteAgent, byte[] message) {
		this.engine.sendNotification(remoteAgent, message);
	}

	@Override
	public void close() {
		this.engine.close();
	}

}
