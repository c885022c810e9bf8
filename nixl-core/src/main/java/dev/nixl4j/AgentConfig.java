package dev.nixl4j;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Everything needed to create a {@link NixlAgent}. Build one with
 * {@link #builder(String)}.
 *
 * @param name the agent's name; peers address it by this name
 * @param engine which engine backs the agent
 * @param backends backends created at start, in order
 * @param threadSync NIXL's locking mode (default {@link ThreadSync#STRICT})
 * @param nativeProgressThread whether NIXL runs its own progress thread; backends that
 * emulate one-sided transfers (UCX over TCP) only make progress for the target while it
 * is on
 * @param nativeProgressDelay delay between passes of NIXL's progress thread
 * @param listener whether NIXL's peer-to-peer metadata listener runs; it is
 * unauthenticated and binds every interface, so it is off unless asked for
 * @param listenerPort the listener's port
 * @param telemetry whether NIXL captures per-transfer telemetry
 * @param stallTimeout how long a transfer may stay in progress before it is reported
 * stalled and cancelled
 * @param mailboxCapacity how many unclaimed notifications the mailbox holds in total (and
 * at most 64 MiB of them); over it, the oldest message of the sender holding the most is
 * dropped and counted
 * @param mailboxPerSender how many unclaimed notifications the mailbox holds from one
 * sender (and at most the same share of 64 MiB); over it, that sender's oldest message is
 * dropped and counted
 * @param nativeLibraryDirectory a directory holding {@code libnixl_capi.so}, tried first
 * @param nativeEnvironment environment variables (for example {@code UCX_TLS},
 * {@code NIXL_PLUGIN_DIR}) set before the native library loads and again before each
 * native agent is created; NIXL's metadata-exchange variables ({@code NIXL_ETCD_*}) apply
 * to this agent only
 * @param embedded settings of the embedded engine (its TCP listener)
 */
public record AgentConfig(String name, Engine engine, List<BackendConfig> backends, ThreadSync threadSync,
		boolean nativeProgressThread, Duration nativeProgressDelay, boolean listener, int listenerPort,
		boolean telemetry, Duration stallTimeout, int mailboxCapacity, int mailboxPerSender,
		@Nullable Path nativeLibraryDirectory, Map<String, String> nativeEnvironment, EmbeddedOptions embedded) {

	/** The default {@linkplain #engine() engine}. */
	public static final Engine DEFAULT_ENGINE = Engine.AUTO;

	/** The plugin of the one backend created at start by default. */
	public static final String DEFAULT_BACKEND_PLUGIN = "UCX";

	/** The default {@linkplain #threadSync() locking mode}. */
	public static final ThreadSync DEFAULT_THREAD_SYNC = ThreadSync.STRICT;

	/** Whether NIXL's progress thread runs by default. */
	public static final boolean DEFAULT_NATIVE_PROGRESS_THREAD = true;

	/**
	 * The default {@linkplain #nativeProgressDelay() delay of NIXL's progress thread}: it
	 * waits in poll() up to this long unless UCX signals work; with 0 it spins, and two
	 * spinning agents halve bandwidth on a small host (docs/benchmarks.md).
	 */
	public static final Duration DEFAULT_NATIVE_PROGRESS_DELAY = Duration.ofMillis(1);

	/** The default {@linkplain #listenerPort() port of NIXL's listener}. */
	public static final int DEFAULT_LISTENER_PORT = 8888;

	/** The default {@linkplain #stallTimeout() stall limit}. */
	public static final Duration DEFAULT_STALL_TIMEOUT = Duration.ofSeconds(30);

	/** The default {@linkplain #mailboxCapacity() mailbox capacity}. */
	public static final int DEFAULT_MAILBOX_CAPACITY = 4096;

	/** The default {@linkplain #mailboxPerSender() bound per sender of the mailbox}. */
	public static final int DEFAULT_MAILBOX_PER_SENDER = 1024;

	/**
	 * System property naming a directory that holds {@code libnixl_capi.so}, tried after
	 * an agent's configured {@link #nativeLibraryDirectory()} and before the other places
	 * the library is searched.
	 */
	public static final String NATIVE_DIRECTORY_PROPERTY = "nixl.native.dir";

	/**
	 * Validates and copies the configuration.
	 * @param name agent name
	 * @param engine engine
	 * @param backends backends
	 * @param threadSync locking mode
	 * @param nativeProgressThread NIXL progress thread on or off
	 * @param nativeProgressDelay delay of NIXL's progress thread
	 * @param listener listener on or off
	 * @param listenerPort listener port
	 * @param telemetry telemetry on or off
	 * @param stallTimeout stall limit
	 * @param mailboxCapacity mailbox capacity
	 * @param mailboxPerSender mailbox bound per sender
	 * @param nativeLibraryDirectory library directory or {@code null}
	 * @param nativeEnvironment native environment
	 * @param embedded embedded engine settings
	 */
	public AgentConfig {
		Objects.requireNonNull(name, "name");
		if (name.isBlank()) {
			throw new IllegalArgumentException("agent name must not be blank");
		}
		if (name.indexOf('\0') >= 0) {
			throw new IllegalArgumentException("agent name must not contain NUL characters");
		}
		Objects.requireNonNull(engine, "engine");
		Objects.requireNonNull(threadSync, "threadSync");
		backends = List.copyOf(backends);
		SettingChecks.requireNotNegative(nativeProgressDelay, "nativeProgressDelay");
		SettingChecks.requirePositive(stallTimeout, "stallTimeout");
		if (listenerPort < 0 || listenerPort > 65535) {
			throw new IllegalArgumentException("listenerPort must be within 0..65535, was " + listenerPort);
		}
		if (mailboxCapacity < 1) {
			throw new IllegalArgumentException("mailboxCapacity must be at least 1, was " + mailboxCapacity);
		}
		if (mailboxPerSender < 1) {
			throw new IllegalArgumentException("mailboxPerSender must be at least 1, was " + mailboxPerSender);
		}
		nativeEnvironment = Map.copyOf(nativeEnvironment);
		Objects.requireNonNull(embedded, "embedded");
	}

	/**
	 * Starts a configuration with nixl4j's defaults: engine {@link Engine#AUTO}, one UCX
	 * backend, {@link ThreadSync#STRICT}, NIXL's progress thread on with a 1 ms poll
	 * delay, listener off, telemetry off, a 30 s stall limit and a mailbox of 4096
	 * notifications, at most 1024 of them from one sender.
	 * @param name the agent's name
	 * @return a builder
	 */
	public static Builder builder(String name) {
		return new Builder(name);
	}

	/**
	 * Returns a builder that starts from this configuration.
	 * @return a builder
	 */
	public Builder toBuilder() {
		Builder builder = new Builder(this.name).engine(this.engine)
			.threadSync(this.threadSync)
			.nativeProgressThread(this.nativeProgressThread)
			.nativeProgressDelay(this.nativeProgressDelay)
			.listener(this.listener, this.listenerPort)
			.telemetry(this.telemetry)
			.stallTimeout(this.stallTimeout)
			.mailboxCapacity(this.mailboxCapacity)
			.mailboxPerSender(this.mailboxPerSender)
			.nativeLibraryDirectory(this.nativeLibraryDirectory)
			.embedded(this.embedded);
		builder.backends.clear();
		builder.backends.addAll(this.backends);
		builder.nativeEnvironment.putAll(this.nativeEnvironment);
		return builder;
	}

	/**
	 * Builds an {@link AgentConfig}.
	 */
	public static final class Builder {

		private String name;

		private Engine engine = DEFAULT_ENGINE;

		private final List<BackendConfig> backends = new ArrayList<>(List.of(BackendConfig.of(DEFAULT_BACKEND_PLUGIN)));

		private ThreadSync threadSync = DEFAULT_THREAD_SYNC;

		private boolean nativeProgressThread = DEFAULT_NATIVE_PROGRESS_THREAD;

		private Duration nativeProgressDelay = DEFAULT_NATIVE_PROGRESS_DELAY;

		private boolean listener;

		private int listenerPort = DEFAULT_LISTENER_PORT;

		private boolean telemetry;

		private Duration stallTimeout = DEFAULT_STALL_TIMEOUT;

		private int mailboxCapacity = DEFAULT_MAILBOX_CAPACITY;

		private int mailboxPerSender = DEFAULT_MAILBOX_PER_SENDER;

		private @Nullable Path nativeLibraryDirectory;

		private final Map<String, String> nativeEnvironment = new LinkedHashMap<>();

		private EmbeddedOptions embedded = EmbeddedOptions.defaults();

		private Builder(String name) {
			this.name = name;
		}

		/**
		 * Sets the agent name.
		 * @param name the name
		 * @return this builder
		 */
		public Builder name(String name) {
			this.name = name;
			return this;
		}

		/**
		 * Sets the engine.
		 * @param engine the engine
		 * @return this builder
		 */
		public Builder engine(Engine engine) {
			this.engine = engine;
			return this;
		}

		/**
		 * Replaces the backends created at start.
		 * @param backends the backends (none to create them later)
		 * @return this builder
		 */
		public Builder backends(BackendConfig... backends) {
			this.backends.clear();
			this.backends.addAll(List.of(backends));
			return this;
		}

		/**
		 * Sets NIXL's thread synchronisation mode.
		 * @param threadSync the mode
		 * @return this builder
		 */
		public Builder threadSync(ThreadSync threadSync) {
			this.threadSync = threadSync;
			return this;
		}

		/**
		 * Turns NIXL's own progress thread on or off.
		 * @param enabled whether it runs
		 * @return this builder
		 */
		public Builder nativeProgressThread(boolean enabled) {
			this.nativeProgressThread = enabled;
			return this;
		}

		/**
		 * Sets the delay between passes of NIXL's progress thread.
		 * @param delay the delay (microsecond resolution)
		 * @return this builder
		 */
		public Builder nativeProgressDelay(Duration delay) {
			this.nativeProgressDelay = delay;
			return this;
		}

		/**
		 * Turns NIXL's peer-to-peer metadata listener on or off.
		 * @param enabled whether it runs
		 * @param port its port
		 * @return this builder
		 */
		public Builder listener(boolean enabled, int port) {
			this.listener = enabled;
			this.listenerPort = port;
			return this;
		}

		/**
		 * Turns per-transfer telemetry on or off.
		 * @param enabled whether NIXL captures it
		 * @return this builder
		 */
		public Builder telemetry(boolean enabled) {
			this.telemetry = enabled;
			return this;
		}

		/**
		 * Sets how long a transfer may stay in progress before it is reported stalled.
		 * @param stallTimeout the limit
		 * @return this builder
		 */
		public Builder stallTimeout(Duration stallTimeout) {
			this.stallTimeout = stallTimeout;
			return this;
		}

		/**
		 * Sets how many unclaimed notifications are held.
		 * @param capacity the capacity
		 * @return this builder
		 */
		public Builder mailboxCapacity(int capacity) {
			this.mailboxCapacity = capacity;
			return this;
		}

		/**
		 * Sets how many unclaimed notifications are held from one sender; a bound above
		 * the capacity acts as the capacity.
		 * @param perSender the bound per sender
		 * @return this builder
		 */
		public Builder mailboxPerSender(int perSender) {
			this.mailboxPerSender = perSender;
			return this;
		}

		/**
		 * Sets a directory holding {@code libnixl_capi.so}, tried before the standard
		 * places.
		 * @param directory the directory, or {@code null}
		 * @return this builder
		 */
		public Builder nativeLibraryDirectory(@Nullable Path directory) {
			this.nativeLibraryDirectory = directory;
			return this;
		}

		/**
		 * Sets an environment variable for NIXL or UCX before the native library loads.
		 * @param name the variable, for example {@code UCX_TLS}
		 * @param value its value
		 * @return this builder
		 */
		public Builder nativeEnvironment(String name, String value) {
			this.nativeEnvironment.put(name, value);
			return this;
		}

		/**
		 * Sets the embedded engine's options (listen address, in-process copies).
		 * @param options the options
		 * @return this builder
		 */
		public Builder embedded(EmbeddedOptions options) {
			this.embedded = options;
			return this;
		}

		/**
		 * Builds the configuration.
		 * @return the configuration
		 */
		public AgentConfig build() {
			return new AgentConfig(this.name, this.engine, this.backends, this.threadSync, this.nativeProgressThread,
					this.nativeProgressDelay, this.listener, this.listenerPort, this.telemetry, this.stallTimeout,
					this.mailboxCapacity, this.mailboxPerSender, this.nativeLibraryDirectory, this.nativeEnvironment,
					this.embedded);
		}

	}

}
