package dev.nixl4j.kv;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;

/**
 * A producer whose cache cannot exchange blocks with the consumer's: their layouts or
 * model fingerprints differ. Nothing was read, and the lease is given back. Status
 * {@link NixlStatus#ERROR_INVALID_PARAM}; the message names both
 * {@linkplain RemoteCacheHandle#compatibility() compatibility fingerprints}.
 */
public class KvIncompatibleException extends NixlException {

	private static final long serialVersionUID = 1L;

	private final String producerFingerprint;

	private final String consumerFingerprint;

	/**
	 * Creates the exception.
	 * @param agent the consumer's agent
	 * @param producer the producer's agent
	 * @param producerFingerprint the producer's compatibility fingerprint
	 * @param consumerFingerprint the consumer's
	 */
	public KvIncompatibleException(String agent, String producer, String producerFingerprint,
			String consumerFingerprint) {
		super(NixlStatus.ERROR_INVALID_PARAM, "kv_resolve", agent, producer,
				"producer '" + producer + "' serves KV cache " + producerFingerprint + " but this consumer's is "
						+ consumerFingerprint + ": both must serve the same model with the same layout");
		this.producerFingerprint = producerFingerprint;
		this.consumerFingerprint = consumerFingerprint;
	}

	/**
	 * Returns the producer's compatibility fingerprint.
	 * @return the fingerprint
	 */
	public String producerFingerprint() {
		return this.producerFingerprint;
	}

	/**
	 * Returns the consumer's compatibility fingerprint.
	 * @return the fingerprint
	 */
	public String consumerFingerprint() {
		return this.consumerFingerprint;
	}

}
