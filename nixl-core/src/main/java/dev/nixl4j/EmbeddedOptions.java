package dev.nixl4j;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the {@link Engine#EMBEDDED embedded engine}.
 *
 * <p>
 * Each embedded agent listens on a TCP address for peers in other processes. Every
 * request that arrives there must carry the secret token of the agent's metadata, and
 * every READ or WRITE the key of the registration it touches, so only holders of the
 * metadata reach the memory; still, bind to loopback (the default) unless peers on other
 * hosts need the agent.
 *
 * <p>
 * Everything that arrives from outside is bounded: the listener holds at most
 * {@code maxConnections} connections, a connection that has not said hello within
 * {@code helloTimeout} is closed, and so is one that sends part of a request and then
 * stalls for {@code frameTimeout}. Connections still saying hello use no thread; each
 * connection of a peer that presented the token is served by a thread of its own.
 *
 * @param listenAddress the address and port the agent listens on; port 0 picks a free
 * port
 * @param inProcessCopies whether transfers to an agent in the same JVM copy memory
 * directly instead of going through TCP (on by default; off exercises the TCP path in one
 * JVM)
 * @param maxConnections most connections the listener holds at once (default 256). At the
 * limit, a new connection replaces the oldest one still saying hello, or is closed at
 * once when every connection belongs to a peer that presented the token
 * @param helloTimeout how long a new connection may take to present its hello (default 5
 * s)
 * @param frameTimeout how long a request's header may take to arrive once its first byte
 * came, and how long the data of a request or a response may stall without a byte moving
 * (default 10 s); a 64 MiB block at 10 MB/s still moves bytes every millisecond
 * @param responseTimeout how long a connection to a peer may move no byte while a request
 * to it is outstanding (being sent, or sent and not yet answered) before it is declared
 * dropped and its transfers fail (default 5 s). A live peer answers within milliseconds;
 * this catches one that stopped (for example SIGSTOP) or whose host vanished without
 * closing the connection
 * @param sameHost whether the agent offers and uses the same-host path (default off):
 * peers in other processes of this host (same boot id and pid namespace) that also have
 * it on map the agent's {@link ShareableMemory} after presenting a registration's key,
 * instead of moving its bytes over TCP. The EMBEDDED backend parameter
 * {@code same_host=true} turns it on too. What it exposes: see {@link ShareableMemory}
 */
public record EmbeddedOptions(InetSocketAddress listenAddress, boolean inProcessCopies, int maxConnections,
		Duration helloTimeout, Duration frameTimeout, Duration responseTimeout, boolean sameHost) {

	/** The default of {@link #inProcessCopies()}. */
	public static final boolean DEFAULT_IN_PROCESS_COPIES = true;

	/** The default of {@link #sameHost()}. */
	public static final boolean DEFAULT_SAME_HOST = false;

	/** The default of {@link #maxConnections()}. */
	public static final int DEFAULT_MAX_CONNECTIONS = 256;

	/** The default of {@link #helloTimeout()}. */
	public static final Duration DEFAULT_HELLO_TIMEOUT = Duration.ofSeconds(5);

	/** The default of {@link #frameTimeout()}. */
	public static final Duration DEFAULT_FRAME_TIMEOUT = Duration.ofSeconds(10);

	/** The default of {@link #responseTimeout()}. */
	public static final Duration DEFAULT_RESPONSE_TIMEOUT = Duration.ofSeconds(5);

	private static final Duration LONGEST_TIMEOUT = Duration.ofDays(1);

	/**
	 * Validates the options.
	 * @param listenAddress the listen address
	 * @param inProcessCopies whether in-process copies are used
	 * @param maxConnections most connections held at once, at least 1
	 * @param helloTimeout deadline of a hello, positive
	 * @param frameTimeout deadline of a request's header and longest stall of its data,
	 * positive
	 * @param responseTimeout longest silence of a peer with requests outstanding,
	 * positive
	 * @param sameHost whether the same-host path is on
	 */
	public EmbeddedOptions {
		Objects.requireNonNull(listenAddress, "listenAddress");
		if (listenAddress.isUnresolved()) {
			throw new IllegalArgumentException(
					"embedded listen address " + listenAddress.getHostString() + " could not be resolved");
		}
		if (maxConnections < 1) {
			throw new IllegalArgumentException("embedded maxConnections must be at least 1, not " + maxConnections);
		}
		requireTimeout(helloTimeout, "helloTimeout");
		requireTimeout(frameTimeout, "frameTimeout");
		requireTimeout(responseTimeout, "responseTimeout");
	}

	private static void requireTimeout(Duration timeout, String name) {
		SettingChecks.requirePositive(timeout, "embedded " + name);
		if (timeout.compareTo(LONGEST_TIMEOUT) > 0) {
			throw new IllegalArgumentException(
					"embedded " + name + " must be at most " + LONGEST_TIMEOUT + ", was " + timeout);
		}
	}

	/**
	 * The defaults: loopback, a free port, in-process copies on, 256 connections, a hello
	 * within 5 s, request headers within and data stalls of at most 10 s, peers silent
	 * for at most 5 s, the same-host path off.
	 * @return the default options
	 */
	public static EmbeddedOptions defaults() {
		return new EmbeddedOptions(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
				DEFAULT_IN_PROCESS_COPIES, DEFAULT_MAX_CONNECTIONS, DEFAULT_HELLO_TIMEOUT, DEFAULT_FRAME_TIMEOUT,
				DEFAULT_RESPONSE_TIMEOUT, DEFAULT_SAME_HOST);
	}

	/**
	 * Starts building options from the {@linkplain #defaults() defaults}.
	 * @return a builder
	 */
	public static Builder builder() {
		return new Builder(defaults());
	}

	/**
	 * Starts building options from these.
	 * @return a builder holding these options
	 */
	public Builder toBuilder() {
		return new Builder(this);
	}

	/**
	 * Builds {@link EmbeddedOptions}; {@link #build()} checks them.
	 */
	public static final class Builder {

		private InetSocketAddress listenAddress;

		private boolean inProcessCopies;

		private int maxConnections;

		private Duration helloTimeout;

		private Duration frameTimeout;

		private Duration responseTimeout;

		private boolean sameHost;

		private Builder(EmbeddedOptions from) {
			this.listenAddress = from.listenAddress;
			this.inProcessCopies = from.inProcessCopies;
			this.maxConnections = from.maxConnections;
			this.helloTimeout = from.helloTimeout;
			this.frameTimeout = from.frameTimeout;
			this.responseTimeout = from.responseTimeout;
			this.sameHost = from.sameHost;
		}

		/**
		 * Sets the listen address.
		 * @param address the address
		 * @return this builder
		 */
		public Builder listenAddress(InetSocketAddress address) {
			this.listenAddress = address;
			return this;
		}

		/**
		 * Turns in-process copies on or off.
		 * @param enabled whether agents in one JVM copy directly
		 * @return this builder
		 */
		public Builder inProcessCopies(boolean enabled) {
			this.inProcessCopies = enabled;
			return this;
		}

		/**
		 * Sets the connection limit.
		 * @param connections most connections the listener holds at once
		 * @return this builder
		 */
		public Builder maxConnections(int connections) {
			this.maxConnections = connections;
			return this;
		}

		/**
		 * Sets the hello deadline.
		 * @param timeout how long a new connection may take to present its hello
		 * @return this builder
		 */
		public Builder helloTimeout(Duration timeout) {
			this.helloTimeout = timeout;
			return this;
		}

		/**
		 * Sets the frame deadline.
		 * @param timeout how long a request header may take once begun, and the longest
		 * stall of data
		 * @return this builder
		 */
		public Builder frameTimeout(Duration timeout) {
			this.frameTimeout = timeout;
			return this;
		}

		/**
		 * Sets the response deadline.
		 * @param timeout how long a peer with requests outstanding may stay silent
		 * @return this builder
		 */
		public Builder responseTimeout(Duration timeout) {
			this.responseTimeout = timeout;
			return this;
		}

		/**
		 * Turns the same-host path on or off.
		 * @param enabled whether the agent offers and uses the same-host path
		 * @return this builder
		 */
		public Builder sameHost(boolean enabled) {
			this.sameHost = enabled;
			return this;
		}

		/**
		 * Builds the options.
		 * @return the options
		 * @throws IllegalArgumentException naming the option that is out of range
		 */
		public EmbeddedOptions build() {
			return new EmbeddedOptions(this.listenAddress, this.inProcessCopies, this.maxConnections, this.helloTimeout,
					this.frameTimeout, this.responseTimeout, this.sameHost);
		}

	}

}
