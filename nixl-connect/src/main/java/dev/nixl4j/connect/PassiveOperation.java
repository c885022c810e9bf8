package dev.nixl4j.connect;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Registration;
import org.jspecify.annotations.Nullable;

/**
 * The side that exposes memory: it registers the memory, publishes {@link #metadata()}
 * for the peer, and completes when the peer's notification carrying
 * {@link #notificationKey()} arrives. If none arrives within the lease, the operation
 * ends {@link OperationStatus#ERRORED} with a {@link NixlStatus#TIMEOUT} failure that
 * says the lease expired, and its memory is deregistered.
 */
public abstract sealed class PassiveOperation extends Operation permits ReadableOperation, WritableOperation {

	private final OperationKind kind;

	private final Duration lease;

	private final String notificationKey = UUID.randomUUID().toString().replace("-", "");

	private @Nullable List<Registration> registrations;

	private @Nullable RdmaMetadata metadata;

	private @Nullable CompletableFuture<Notification> notification;

	PassiveOperation(Connector connector, String name, OperationKind kind, List<Descriptor> localDescriptors,
			Duration lease) {
		super(connector, name, localDescriptors);
		this.kind = kind;
		this.lease = lease;
	}

	/**
	 * Registers the memory, builds the metadata and starts waiting; the connector calls
	 * it once.
	 */
	@Override
	synchronized void start() {
		requireNotEnded();
		Connector connector = connector();
		this.registrations = connector.register(operationName(), localDescriptors());
		advance(OperationStatus.INITIALIZED);
		this.metadata = new RdmaMetadata(localDescriptors(), connector.agent().localMetadata(), this.notificationKey,
				this.kind);
		CompletableFuture<Notification> waiter = connector.agent()
			.expectNotification(NotificationMatcher.exact(null, this.notificationKey), this.lease);
		this.notification = waiter;
		advance(OperationStatus.IN_PROGRESS);
		waiter.whenComplete(this::onNotification);
	}

	private void onNotification(@Nullable Notification received, @Nullable Throwable error) {
		if (received != null) {
			peer(received.remoteAgent());
			finish(OperationStatus.COMPLETE, null);
			return;
		}
		Throwable cause = (error instanceof CompletionException) ? error.getCause() : error;
		if (cause instanceof CancellationException) {
			return; // closed: close() ended the operation
		}
		if (cause instanceof NixlException nixl && nixl.status() == NixlStatus.TIMEOUT) {
			if (finish(OperationStatus.ERRORED,
					failure(NixlStatus.TIMEOUT, "lease expired: no peer completed the " + this.kind.name().toLowerCase()
							+ " within the lease of " + this.lease + "; the memory was deregistered"))) {
				// the peer may still come: its notification must not pile up in the
				// agent's mailbox
				connector().absorbLateNotification(this.notificationKey, this.lease);
			}
			return;
		}
		if (cause instanceof NixlException nixl && nixl.status() == NixlStatus.CLOSED) {
			finish(OperationStatus.CANCELLED, failure(NixlStatus.CANCELLED, "the agent was closed", nixl));
			return;
		}
		finish(OperationStatus.ERRORED,
				failure(NixlStatus.UNKNOWN, "waiting for the notification failed: " + cause, cause));
	}

	/**
	 * Returns what the peer needs to pair with this operation; send it as
	 * {@link RdmaMetadata#toJson()}. It carries the agent metadata: treat it as a secret.
	 * @return the metadata
	 */
	public synchronized RdmaMetadata metadata() {
		RdmaMetadata current = this.metadata;
		if (current == null) {
			throw failure(NixlStatus.ERROR_INVALID_STATE, "the operation was never started");
		}
		return current;
	}

	@Override
	public String notificationKey() {
		return this.notificationKey;
	}

	/**
	 * Returns how long the operation waits for its peer.
	 * @return the lease
	 */
	public Duration lease() {
		return this.lease;
	}

	@Override
	void release() {
		CompletableFuture<Notification> waiter = this.notification;
		if (waiter != null) {
			waiter.cancel(false);
		}
		List<Registration> held = this.registrations;
		this.registrations = null;
		if (held != null) {
			Connector.closeAll(held);
		}
	}

}
