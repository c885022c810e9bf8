package dev.nixl4j.metadata.http;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import dev.nixl4j.metadata.http.OwnerSecrets.Ownership;
import org.jspecify.annotations.Nullable;

/**
 * Keeps an {@link HttpMetadataExchange}'s entries alive at a registry that gives them a
 * TTL: records the owner secret of each entry it published and renews them all every
 * third of the TTL with a bodiless {@code POST}, on the thread the exchange shares with
 * its watches. A failed renewal is logged once and tried again at the next period; an
 * entry the registry no longer has is renewed no more until it is published again.
 */
final class EntryRenewal {

	/** The exchange's logger: the name its users configure covers all of its parts. */
	private static final System.Logger logger = System.getLogger(HttpMetadataExchange.class.getName());

	private static final long MIN_RENEWAL_PERIOD_NANOS = TimeUnit.MILLISECONDS.toNanos(30);

	private final RegistryClient client;

	private final OwnerSecrets secrets;

	private final ExchangeThread thread;

	private final Object lock = new Object();

	/** Guarded by {@link #lock}. */
	private @Nullable ScheduledFuture<?> renewal;

	/** Written under {@link #lock}; read by the renewals' log lines. */
	private volatile long periodNanos;

	EntryRenewal(RegistryClient client, OwnerSecrets secrets, ExchangeThread thread) {
		this.client = client;
		this.secrets = secrets;
		this.thread = thread;
	}

	/**
	 * Records the secret and TTL of a published entry, and renews it from then on. Called
	 * with the secrets' monitor held.
	 * @param agentName the entry's agent
	 * @param response the registry's answer to the publication
	 * @param previous the hold on the entry before, {@code null} for a new one
	 */
	void published(String agentName, HttpResponse<CappedBody> response, @Nullable Ownership previous) {
		String secret = response.headers().firstValue(MetadataRegistryHandler.OWNER_SECRET_HEADER).orElse(null);
		if (secret == null && previous != null) {
			secret = previous.secret;
		}
		if (secret == null) {
			// a registry without owners: nothing to send back, nothing to renew
			this.secrets.remove(agentName);
			return;
		}
		long ttlMillis = entryTtlMillis(response);
		this.secrets.put(agentName, new Ownership(secret));
		if (ttlMillis > 0) {
			renewEvery(TimeUnit.MILLISECONDS.toNanos(ttlMillis) / 3);
		}
	}

	/**
	 * The TTL the registry gave the entry, or 0 when it gave none or a value that is not
	 * a number.
	 */
	private static long entryTtlMillis(HttpResponse<CappedBody> response) {
		try {
			return response.headers().firstValueAsLong(MetadataRegistryHandler.ENTRY_TTL_HEADER).orElse(0);
		}
		catch (NumberFormatException ex) {
			logger.log(System.Logger.Level.WARNING, "The registry sent a " + MetadataRegistryHandler.ENTRY_TTL_HEADER
					+ " header that is not a number; the entry is not renewed");
			return 0;
		}
	}

	/** Renews every entry at least this often: the shortest period asked for wins. */
	private void renewEvery(long periodNanos) {
		synchronized (this.lock) {
			if (this.client.isClosing()) {
				return;
			}
			ScheduledFuture<?> current = this.renewal;
			if (current != null && this.periodNanos <= periodNanos) {
				return;
			}
			if (current != null) {
				current.cancel(false);
			}
			// a registry that asks for renewals more often than this does not get them
			long period = Math.max(periodNanos, MIN_RENEWAL_PERIOD_NANOS);
			this.periodNanos = period;
			this.renewal = this.thread.everyPeriod(this::renewAll, period);
		}
	}

	private void renewAll() {
		List<String> names;
		synchronized (this.secrets) {
			names = this.secrets.agentNames();
		}
		for (String agentName : names) {
			if (this.client.isClosing()) {
				return;
			}
			try {
				renew(agentName);
			}
			catch (Throwable ex) {
				logger.log(System.Logger.Level.WARNING, "Renewing the registry entry of agent '" + agentName + "' at "
						+ this.client.baseUri() + " failed unexpectedly; trying again in the next period", ex);
			}
		}
	}

	private void renew(String agentName) {
		synchronized (this.secrets) {
			Ownership ownership = this.secrets.get(agentName);
			if (ownership == null || ownership.withdrawn) {
				return;
			}
			HttpRequest request = this.client.metadataRequest(agentName)
				.header(MetadataRegistryHandler.OWNER_SECRET_HEADER, ownership.secret)
				.POST(HttpRequest.BodyPublishers.noBody())
				.build();
			String failure;
			try {
				int status = this.client.send(request).statusCode();
				if (status == 200 || status == 204) {
					if (ownership.failing) {
						ownership.failing = false;
						logger.log(System.Logger.Level.INFO, "The registry entry of agent '" + agentName + "' at "
								+ this.client.baseUri() + " is renewed again");
					}
					return;
				}
				if (status == 404 || status == 403) {
					this.secrets.remove(agentName);
					String why = (status == 404) ? "it expired or the registry restarted"
							: "it has another owner now: another process with this client's token reclaimed the name, "
									+ "or the serving application published it";
					logger.log(System.Logger.Level.WARNING,
							"The registry at " + this.client.baseUri() + " no longer holds the entry of agent '"
									+ agentName + "' for this exchange (HTTP " + status + "): " + why
									+ "; it is renewed no more until it is published again");
					return;
				}
				failure = "HTTP " + status;
			}
			catch (IOException ex) {
				failure = RegistryClient.describe(ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			if (!ownership.failing) {
				ownership.failing = true;
				String cause = failure;
				logger.log(System.Logger.Level.WARNING,
						() -> "Could not renew the registry entry of agent '" + agentName + "' at "
								+ this.client.baseUri() + " (" + cause + "); trying again every "
								+ Duration.ofNanos(this.periodNanos));
			}
		}
	}

}
