package dev.nixl4j.internal.engine;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.nixl4j.NixlException;
import dev.nixl4j.Transfer;
import dev.nixl4j.TransferListener;
import dev.nixl4j.TransferState;
import org.jspecify.annotations.Nullable;

/**
 * The transfer listeners of one agent and how a post is told to them: every listener is
 * asked before the post, those that accepted hear a refusal or the post's end, in the
 * order they were added.
 */
final class ListenerFanOut {

	// the transfer's logger: where listener failures were always logged
	private static final System.Logger logger = System.getLogger(TransferImpl.class.getName());

	private final List<TransferListener> listeners = new CopyOnWriteArrayList<>();

	void add(TransferListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	void remove(TransferListener listener) {
		this.listeners.remove(listener);
	}

	/**
	 * Asks every listener; when one refuses, those that accepted hear it and the refusal
	 * propagates.
	 */
	List<TransferListener> admit(Transfer transfer) {
		List<TransferListener> listeners = this.listeners;
		if (listeners.isEmpty()) {
			return List.of();
		}
		List<TransferListener> accepted = new ArrayList<>(listeners.size());
		for (TransferListener listener : listeners) {
			try {
				listener.beforePost(transfer);
			}
			catch (RuntimeException ex) {
				refuse(accepted, transfer, ex);
				throw ex;
			}
			accepted.add(listener);
		}
		return accepted;
	}

	static void refuse(List<TransferListener> accepted, Transfer transfer, RuntimeException reason) {
		for (TransferListener listener : accepted) {
			try {
				listener.postRefused(transfer, reason);
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "Transfer listener " + listener + " failed on a refused post", ex);
			}
		}
	}

	/**
	 * Tells the listeners that accepted a post its end. An {@link Error} from a listener
	 * must not keep the others or the waiter from hearing the end: the first one is
	 * returned, for the caller to throw once everyone has heard.
	 * @return the first error a listener threw, or {@code null}
	 */
	static @Nullable Error afterPost(List<TransferListener> listeners, Transfer transfer, TransferState state,
			long durationNanos, @Nullable NixlException failure) {
		Error thrown = null;
		for (TransferListener listener : listeners) {
			try {
				listener.afterPost(transfer, state, durationNanos, failure);
			}
			catch (RuntimeException ex) {
				logger.log(Level.WARNING, "Transfer listener " + listener + " failed after a post", ex);
			}
			catch (Error ex) {
				if (thrown == null) {
					thrown = ex;
				}
			}
		}
		return thrown;
	}

}
