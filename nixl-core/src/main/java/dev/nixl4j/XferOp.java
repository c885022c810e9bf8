package dev.nixl4j;

/**
 * Direction of a transfer, seen from the agent that initiates it.
 */
public enum XferOp {

	/** Pull: remote memory is copied into local memory. */
	READ(0),
	/** Push: local memory is copied into remote memory. */
	WRITE(1);

	private final int code;

	XferOp(int code) {
		this.code = code;
	}

	/**
	 * Returns NIXL's code for this operation.
	 * @return the code of {@code nixl_xfer_op_t}
	 */
	public int code() {
		return this.code;
	}

}
