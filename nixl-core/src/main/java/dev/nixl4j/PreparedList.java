package dev.nixl4j;

/**
 * A descriptor list prepared once for repeated transfers (NIXL's {@code prepXferDlist});
 * a transfer then selects descriptors by index. A local list must lie in this agent's
 * registered memory; a remote list in memory the remote agent registered.
 */
public interface PreparedList extends AutoCloseable {

	/**
	 * Returns the agent whose memory the list describes, or {@code null} for the local
	 * agent.
	 * @return the remote agent name or {@code null}
	 */
	@org.jspecify.annotations.Nullable
	String remoteAgent();

	/**
	 * Returns the descriptors.
	 * @return the descriptors
	 */
	DescriptorList descriptors();

	/**
	 * Releases the prepared handle. Closing twice is harmless.
	 */
	@Override
	void close();

}
