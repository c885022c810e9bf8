package dev.nixl4j.connect;

/**
 * What the peer of a passive operation may do, as carried in {@link RdmaMetadata}'s
 * {@code operation_kind}: a {@link ReadableOperation} publishes {@link #READ} and pairs
 * only with a {@link ReadOperation}; a {@link WritableOperation} publishes {@link #WRITE}
 * and pairs only with a {@link WriteOperation}.
 */
public enum OperationKind {

	/** The memory may be read (wire value 1). */
	READ(1),
	/** The memory may be written (wire value 2). */
	WRITE(2);

	private final int code;

	OperationKind(int code) {
		this.code = code;
	}

	/**
	 * Returns the value on the wire.
	 * @return 1 for READ, 2 for WRITE
	 */
	public int code() {
		return this.code;
	}

}
