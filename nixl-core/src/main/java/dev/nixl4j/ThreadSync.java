package dev.nixl4j;

/**
 * How NIXL guards an agent against concurrent calls.
 *
 * <p>
 * NIXL's own default is {@link #NONE}, which is unsafe for Java callers: transfers are
 * created on application threads while the agent's progress loop polls them. nixl4j
 * defaults to {@link #STRICT}.
 */
public enum ThreadSync {

	/** No locking: every call must come from one thread at a time. */
	NONE(0),
	/** One lock around every agent call. */
	STRICT(1),
	/**
	 * Reader/writer locking: concurrent data-path calls, exclusive control-path calls.
	 */
	RW(2);

	private final int code;

	ThreadSync(int code) {
		this.code = code;
	}

	/**
	 * Returns NIXL's code for this mode.
	 * @return the code of {@code nixl_thread_sync_t}
	 */
	public int code() {
		return this.code;
	}

}
