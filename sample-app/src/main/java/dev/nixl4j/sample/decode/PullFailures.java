package dev.nixl4j.sample.decode;

import java.time.Duration;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.TransferRefusedException;
import dev.nixl4j.kv.KvIncompatibleException;
import dev.nixl4j.kv.KvIntegrityException;
import dev.nixl4j.kv.KvLeaseLostException;
import dev.nixl4j.kv.KvProducerUnavailableException;
import dev.nixl4j.kv.LeaseConfirmation;
import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.api.PrefillResponse;

import org.springframework.http.HttpStatus;

/**
 * What the decode worker answers when a pull fails, by the failure's type: the library's
 * KV consumer has already given the lease and the local blocks back (holding back those a
 * late READ may still write), reset the connection or noticed that the prefill worker is
 * gone; what is left is the HTTP status and the words.
 */
final class PullFailures {

	private PullFailures() {
	}

	static SampleException translate(RuntimeException failure, PrefillResponse prefilled, Duration timeout,
			Duration retryAfter) {
		String pulling = "pulling the blocks of request '" + prefilled.requestId() + "' from '"
				+ prefilled.producerAgent() + "'";
		return switch (failure) {
			case KvIntegrityException ex -> new SampleException(HttpStatus.BAD_GATEWAY, "KV blocks corrupted",
					pulling + " read blocks whose CRC32C differs from the prefill worker's: the data was discarded",
					ex);
			case KvLeaseLostException ex when ex.confirmation() == null -> new PrefillUnavailableException(pulling
					+ " got no confirmation of its lease within " + timeout
					+ " (sample.decode.transfer-timeout): the prefill worker may have stopped; the data was discarded",
					ex);
			case KvLeaseLostException ex ->
				new SampleException(HttpStatus.GONE, "Lease lost", "the blocks of request '" + prefilled.requestId()
						+ "' were read but the prefill worker did not confirm its lease (" + ex.confirmation()
						+ "): its blocks may have been reused, so the data was discarded"
						+ ((ex.confirmation() == LeaseConfirmation.EXPIRED) ? "; lease time "
								+ prefilled.leaseTtlMillis() + " ms (nixl.kv.lease-ttl of the prefill worker)" : ""),
						ex);
			case KvIncompatibleException ex -> new SampleException(HttpStatus.CONFLICT, "KV layout mismatch",
					ex.getMessage() + " (nixl.kv.* and nixl.kv.model-fingerprint of both workers)", ex);
			case KvProducerUnavailableException ex ->
				new PrefillUnavailableException(pulling + " failed: " + ex.detail(), ex);
			case TransferRefusedException ex -> switch (ex.reason()) {
				case PEER_SUSPENDED -> new PrefillUnavailableException(pulling
						+ " was refused: transfers to that agent are suspended after repeated failures (circuit breaker '"
						+ ex.limiter() + "' is open); they are tried again after its wait", ex);
				case TOO_MANY_IN_FLIGHT -> new SampleException(HttpStatus.SERVICE_UNAVAILABLE, "Too many transfers",
						pulling + " was refused: this worker has as many transfers in flight as it allows (bulkhead '"
								+ ex.limiter() + "')",
						ex);
			};
			case NixlException ex when ex.status() == NixlStatus.BUSY ->
				new SampleException(HttpStatus.SERVICE_UNAVAILABLE, "KV cache full",
						"the decode worker's KV cache cannot hold the " + prefilled.blockIds().size()
								+ " blocks of request '" + prefilled.requestId()
								+ "' now; its lease on the prefill worker was given back",
						ex, retryAfter);
			case NixlException ex when ex.status() == NixlStatus.ERROR_NOT_FOUND
					|| ex.status() == NixlStatus.UNAVAILABLE ->
				new PrefillUnavailableException(pulling + " failed: " + ex.getMessage(), ex);
			case NixlException ex -> new SampleException(HttpStatus.BAD_GATEWAY, "Transfer failed",
					pulling + " failed: " + ex.getMessage(), ex);
			default -> throw failure;
		};
	}

}
