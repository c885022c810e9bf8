package dev.nixl4j.metadata.etcd;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManagerFactory;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import org.jspecify.annotations.Nullable;

/**
 * The exchange's jetcd client, its authentication and TLS, and how a jetcd call becomes a
 * bounded wait with a typed outcome: {@link NixlStatus#UNAVAILABLE} naming the endpoints
 * and the cause, {@link NixlStatus#ERROR_INVALID_PARAM} when etcd refused the request,
 * {@link LeaseLost} when the lease is gone.
 */
final class EtcdConnection implements AutoCloseable {

	/** The first pause between two tries; it doubles up to {@link #MAX_PAUSE}. */
	static final long MIN_PAUSE = TimeUnit.MILLISECONDS.toNanos(20);

	static final long MAX_PAUSE = TimeUnit.MILLISECONDS.toNanos(500);

	private final List<URI> endpoints;

	private final Duration operationTimeout;

	private final boolean authenticated;

	private final Client client;

	EtcdConnection(List<URI> endpoints, Duration operationTimeout, @Nullable String user, @Nullable String password,
			@Nullable KeyManagerFactory keyManagers, @Nullable TrustManagerFactory trustManagers) {
		this.endpoints = List.copyOf(endpoints);
		this.operationTimeout = operationTimeout;
		this.authenticated = user != null;
		ClientBuilder client = Client.builder()
			.endpoints(this.endpoints.toArray(URI[]::new))
			.connectTimeout(operationTimeout)
			// fail fast while disconnected: every call here has its own deadline and
			// retries itself
			.waitForReady(false)
			.retryMaxDuration(operationTimeout);
		if (user != null && password != null) {
			client.user(bytes(user)).password(bytes(password));
		}
		if (trustManagers != null) {
			try {
				client.sslContext(ssl -> {
					ssl.trustManager(trustManagers);
					if (keyManagers != null) {
						ssl.keyManager(keyManagers);
					}
				});
			}
			catch (SSLException ex) {
				throw new IllegalArgumentException("the TLS material for etcd cannot be used: " + ex.getMessage(), ex);
			}
			// jetcd's resolver gives the channel no authority of its own, and TLS
			// verifies the
			// server's certificate against it: the first endpoint's host names the
			// cluster
			client.authority(this.endpoints.get(0).getAuthority());
		}
		this.client = client.build();
	}

	/**
	 * Returns the jetcd client.
	 * @return the client
	 */
	Client client() {
		return this.client;
	}

	List<URI> endpoints() {
		return this.endpoints;
	}

	/**
	 * Returns a deadline one operation timeout from now.
	 * @return the deadline, in {@link System#nanoTime()}'s terms
	 */
	long operationDeadline() {
		return deadline(this.operationTimeout);
	}

	static long deadline(Duration timeout) {
		return System.nanoTime() + Math.max(0, timeout.toNanos());
	}

	static ByteSequence bytes(String text) {
		return ByteSequence.from(text, StandardCharsets.UTF_8);
	}

	/**
	 * Makes a jetcd call and waits for it until the deadline, calling again while etcd
	 * cannot be reached yet: just after etcd came back, gRPC may still fail calls at once
	 * from its reconnect back-off, and the caller's deadline, not that back-off, decides
	 * when to give up.
	 */
	<T> T awaitReachable(Supplier<CompletableFuture<T>> call, long deadline, String operation, @Nullable String agent) {
		long pause = MIN_PAUSE;
		while (true) {
			try {
				return await(call.get(), deadline, operation, agent, null);
			}
			catch (NixlException ex) {
				long left = deadline - System.nanoTime();
				if (ex.status() != NixlStatus.UNAVAILABLE || ex.getCause() == null
						|| Status.fromThrowable(ex.getCause()).getCode() != Status.Code.UNAVAILABLE || left <= pause) {
					throw ex;
				}
				LockSupport.parkNanos(pause);
				if (Thread.interrupted()) {
					Thread.currentThread().interrupt();
					throw ex;
				}
				pause = Math.min(pause * 2, MAX_PAUSE);
			}
		}
	}

	/**
	 * Waits for a jetcd call until the deadline. A lost lease is told apart
	 * ({@link LeaseLost}) so that callers can grant a new one; everything else becomes
	 * {@link NixlStatus#UNAVAILABLE}.
	 */
	<T> T await(CompletableFuture<T> future, long deadline, String operation, @Nullable String agent,
			@Nullable String remoteAgent) {
		try {
			return future.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			future.cancel(true);
			throw unavailable(operation, agent, remoteAgent, "no answer before the deadline", null);
		}
		catch (ExecutionException ex) {
			Throwable cause = (ex.getCause() != null) ? ex.getCause() : ex;
			if (isLeaseNotFound(cause)) {
				throw new LeaseLost(cause);
			}
			if (isRefused(cause)) {
				throw new NixlException(NixlStatus.ERROR_INVALID_PARAM, operation, agent, remoteAgent,
						"etcd at " + this.endpoints + " refused the request: " + rootMessage(cause)
								+ (this.authenticated ? " (check the user name, password and the user's roles)"
										: " (if etcd has authentication enabled, configure a user name and password)"),
						cause);
			}
			throw unavailable(operation, agent, remoteAgent, rootMessage(cause), cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			future.cancel(true);
			throw new NixlException(NixlStatus.CANCELLED, operation, agent, remoteAgent,
					"interrupted while waiting for etcd", ex);
		}
	}

	/**
	 * Whether etcd refused the request rather than failed to answer it: missing or wrong
	 * credentials (etcd answers those as invalid arguments), a role without the
	 * permission, or another invalid request. Retrying cannot help then.
	 */
	private static boolean isRefused(Throwable error) {
		for (Throwable t = error; t != null; t = (t.getCause() != t) ? t.getCause() : null) {
			if (t instanceof EtcdException etcd) {
				ErrorCode code = etcd.getErrorCode();
				if (code == ErrorCode.PERMISSION_DENIED || code == ErrorCode.UNAUTHENTICATED
						|| code == ErrorCode.INVALID_ARGUMENT) {
					return true;
				}
			}
			Status.Code code = Status.fromThrowable(t).getCode();
			if (code == Status.Code.PERMISSION_DENIED || code == Status.Code.UNAUTHENTICATED
					|| code == Status.Code.INVALID_ARGUMENT) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether etcd answered that a lease is not found: the only "not found" its KV and
	 * lease calls give (an absent key is an empty answer, not an error).
	 */
	private static boolean isLeaseNotFound(Throwable error) {
		for (Throwable t = error; t != null; t = (t.getCause() != t) ? t.getCause() : null) {
			if (t instanceof EtcdException etcd && etcd.getErrorCode() == ErrorCode.NOT_FOUND) {
				return true;
			}
			if (Status.fromThrowable(t).getCode() == Status.Code.NOT_FOUND) {
				return true;
			}
		}
		return false;
	}

	NixlException unavailable(String operation, @Nullable String agent, @Nullable String remoteAgent, String reason,
			@Nullable Throwable cause) {
		return new NixlException(NixlStatus.UNAVAILABLE, operation, agent, remoteAgent,
				"etcd at " + this.endpoints + " could not be reached: " + reason, cause);
	}

	static String rootMessage(Throwable error) {
		Throwable root = error;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		String message = (error instanceof EtcdException etcd) ? etcd.getErrorCode() + " " + etcd.getMessage()
				: error.getMessage();
		if (root != error && root.getMessage() != null && (message == null || !message.contains(root.getMessage()))) {
			message = ((message != null) ? message + ": " : "") + root.getClass().getSimpleName() + " "
					+ root.getMessage();
		}
		return (message != null) ? message : error.getClass().getName();
	}

	@Override
	public void close() {
		this.client.close();
	}

	/** etcd answered that the lease is gone (expired, revoked, or etcd lost its data). */
	static final class LeaseLost extends RuntimeException {

		private static final long serialVersionUID = 1L;

		LeaseLost(Throwable cause) {
			super("etcd lease not found", cause, false, false);
		}

	}

}
