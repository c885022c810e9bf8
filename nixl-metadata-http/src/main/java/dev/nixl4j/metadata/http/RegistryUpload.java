package dev.nixl4j.metadata.http;

import dev.nixl4j.metadata.http.MetadataRegistryHandler.Response;

/**
 * A {@code PUT} a {@link MetadataRegistryHandler} admitted, whose body is still to be
 * read: room for it is reserved against the registry's bounds and the quota of the grant
 * it counts against until it is {@linkplain #complete completed} or
 * {@linkplain #release() released}.
 */
abstract class RegistryUpload {

	/** The most bytes the body may have; a longer one is refused. */
	final int limit;

	RegistryUpload(int limit) {
		this.limit = limit;
	}

	/**
	 * Stores the body, when the decision taken before it was read still holds, and
	 * releases the reservation.
	 * @param body the body, read up to {@link #limit} plus one byte
	 * @return the answer
	 */
	abstract Response complete(byte[] body);

	/** Gives the reserved room back; does nothing the second time. */
	abstract void release();

}
