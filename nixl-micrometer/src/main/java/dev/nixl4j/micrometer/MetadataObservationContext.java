package dev.nixl4j.micrometer;

import io.micrometer.observation.Observation;

/**
 * What an observation of a metadata exchange call knows: the operation and the peer. It
 * never holds the metadata itself.
 */
public class MetadataObservationContext extends Observation.Context {

	private final Operation operation;

	private final String remoteAgent;

	/**
	 * Creates the context of a call.
	 * @param operation the call
	 * @param remoteAgent the peer whose metadata is fetched or loaded
	 */
	public MetadataObservationContext(Operation operation, String remoteAgent) {
		this.operation = operation;
		this.remoteAgent = remoteAgent;
	}

	/**
	 * Returns the call.
	 * @return the operation
	 */
	public Operation getOperation() {
		return this.operation;
	}

	/**
	 * Returns the peer.
	 * @return its agent name
	 */
	public String getRemoteAgent() {
		return this.remoteAgent;
	}

	/**
	 * The observed calls of a {@link dev.nixl4j.metadata.MetadataExchange}.
	 */
	public enum Operation {

		/**
		 * {@link dev.nixl4j.metadata.MetadataExchange#fetch}: the peer's metadata is
		 * fetched.
		 */
		FETCH,

		/**
		 * {@link dev.nixl4j.metadata.MetadataExchange#load}: the peer's metadata is
		 * fetched, loaded into the agent and watched.
		 */
		LOAD

	}

}
