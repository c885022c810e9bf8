package dev.nixl4j;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * Settings of the {@link Engine#EMBEDDED embedded engine}.
 *
 * <p>Each embedded agent listens on a TCP address for peers in other processes. Every request
 * that arrives there must carry the secret token of the agent's metadata, and every READ or
 * WRITE the key of the registration it touches, so only holders of the metadata reach the
 * memory; still, bind to loopback (the default) unless peers on other hosts need the agent.
 *
 * @param listenAddress the address and port the agent listens on; port 0 picks a free port
 * @param inProcessCopies whether transfers to an agent in the same JVM copy memory directly
 * instead of going through TCP (on by default; off exercises the TCP path in one JVM)
 */
public record EmbeddedOptions(InetSocketAddress listenAddress, boolean inProcessCopies) {

	/**
	 * Validates the options.
	 * @param listenAddress the listen address
	 * @param inProcessCopies whether in-process copies are used
	 */
	public EmbeddedOptions {
		Objects.requireNonNull(listenAddress, "listenAddress");
		if (listenAddress.isUnresolved()) {
			throw new IllegalArgumentException("embedded listen address " + listenAddress.getHostString()
					+ " could not be resolved");
		}
	}

	/**
	 * The defaults: loopback, a free port, in-process copies on.
	 * @return the default options
	 */
	public static EmbeddedOptions defaults() {
		return new EmbeddedOptions(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), true);
	}

	/**
	 * Returns these options with another listen address.
	 * @param address the address
	 * @return new options
	 */
	public EmbeddedOptions withListenAddress(InetSocketAddress address) {
		return new EmbeddedOptions(address, this.inProcessCopies);
	}

	/**
	 * Returns these options with in-process copies on or off.
	 * @param enabled whether agents in one JVM copy directly
	 * @return new options
	 */
	public EmbeddedOptions withInProcessCopies(boolean enabled) {
		return new EmbeddedOptions(this.listenAddress, enabled);
	}

}
