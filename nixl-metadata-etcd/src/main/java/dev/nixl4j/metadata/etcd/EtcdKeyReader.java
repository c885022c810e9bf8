package dev.nixl4j.metadata.etcd;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.metadata.etcd.EtcdConnection.LeaseLost;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.WatchOption;
import org.jspecify.annotations.Nullable;

import static dev.nixl4j.metadata.etcd.EtcdConnection.MAX_PAUSE;
import static dev.nixl4j.metadata.etcd.EtcdConnection.MIN_PAUSE;
import static dev.nixl4j.metadata.etcd.EtcdConnection.deadline;

/**
 * Reads a peer's key until it holds a value or the caller's deadline passes, watching the
 * key meanwhile and reading again with a growing pause: {@link NixlStatus#TIMEOUT} when
 * the value did not appear, {@link NixlStatus#UNAVAILABLE} when etcd could not be reached
 * at all.
 */
final class EtcdKeyReader {

	private final EtcdConnection connection;

	EtcdKeyReader(EtcdConnection connection) {
		this.connection = connection;
	}

	/** A value read from etcd and the store's revision when it was read. */
	record Found(byte[] value, long revision) {
	}

	/**
	 * Reads a key until it holds a value or the deadline passes, watching it meanwhile.
	 * {@code emptyAllowed}: whether an empty value counts as present (never for metadata:
	 * NIXL treats it as absent).
	 */
	Found awaitValue(String operation, String agentName, String keyName, Duration timeout, boolean emptyAllowed,
			String what) {
		long deadline = deadline(timeout);
		// A zero timeout makes one read, as with the http exchange: it gets the operation
		// timeout, since no read could answer within a deadline that has passed already.
		boolean once = timeout.isZero() || timeout.isNegative();
		ByteSequence key = EtcdConnection.bytes(keyName);
		Semaphore changed = new Semaphore(0);
		Watch.@Nullable Watcher watcher = null;
		NixlException unreachable = null;
		long pause = MIN_PAUSE;
		try {
			while (true) {
				try {
					long callDeadline = once ? this.connection.operationDeadline()
							: Math.min(deadline, this.connection.operationDeadline());
					GetResponse response = this.connection.await(this.connection.client().getKVClient().get(key),
							callDeadline, operation, null, agentName);
					unreachable = null;
					List<KeyValue> kvs = response.getKvs();
					if (!kvs.isEmpty() && (emptyAllowed || !kvs.get(0).getValue().isEmpty())) {
						return new Found(kvs.get(0).getValue().getBytes(), response.getHeader().getRevision());
					}
					if (watcher == null) {
						WatchOption from = WatchOption.builder()
							.withRevision(response.getHeader().getRevision() + 1)
							.withNoDelete(true)
							.build();
						watcher = this.connection.client()
							.getWatchClient()
							.watch(key, from, Watch.listener(event -> changed.release(), error -> changed.release()));
					}
				}
				catch (NixlException ex) {
					if (ex.status() != NixlStatus.UNAVAILABLE) {
						throw ex;
					}
					// a read cut short by the caller's own deadline says nothing about
					// etcd
					if (ex.getCause() != null || once || deadline - System.nanoTime() > 0) {
						unreachable = ex;
					}
				}
				catch (LeaseLost ex) {
					throw this.connection.unavailable(operation, null, agentName, "unexpected answer from etcd",
							ex.getCause());
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0) {
					if (unreachable != null) {
						throw new NixlException(NixlStatus.UNAVAILABLE, operation, null, agentName,
								"etcd at " + this.connection.endpoints() + " could not be reached within " + timeout
										+ " to fetch the " + what + ": " + EtcdConnection.rootMessage(unreachable),
								unreachable);
					}
					throw new NixlException(NixlStatus.TIMEOUT, operation, null, agentName,
							"the " + what + " did not appear under " + keyName + " within " + timeout);
				}
				if (changed.tryAcquire(Math.min(remaining, pause), TimeUnit.NANOSECONDS)) {
					pause = MIN_PAUSE;
				}
				else {
					pause = Math.min(pause * 2, MAX_PAUSE);
				}
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new NixlException(NixlStatus.CANCELLED, operation, null, agentName, "interrupted while waiting", ex);
		}
		finally {
			if (watcher != null) {
				watcher.close();
			}
		}
	}

}
