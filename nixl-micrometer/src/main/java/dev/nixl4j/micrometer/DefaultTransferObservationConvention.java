package dev.nixl4j.micrometer;

import dev.nixl4j.TransferState;
import io.micrometer.common.KeyValues;

/**
 * The default names of transfer observations: {@code nixl.transfer}, contextual name
 * {@code nixl read} or {@code nixl write}.
 *
 * <p>
 * Low-cardinality keys (they become meter tags): {@code agent}, {@code op} ({@code read},
 * {@code write}) and {@code outcome} ({@code completed}, {@code failed}, {@code stalled},
 * {@code cancelled}, {@code refused}, or {@code unknown} while the post runs).
 * High-cardinality keys (spans only): {@code remote.agent}, whose values grow with the
 * peers a process ever talks to (restarted peers often come back under new names), and
 * {@code bytes}.
 */
public class DefaultTransferObservationConvention implements TransferObservationConvention {

	/** The observation name. */
	public static final String NAME = "nixl.transfer";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(TransferObservationContext context) {
		return "nixl " + NixlAgentMetrics.tagValue(context.getTransfer().op());
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(TransferObservationContext context) {
		return KeyValues.of("agent", context.getAgentName(), "op",
				NixlAgentMetrics.tagValue(context.getTransfer().op()), "outcome", outcome(context));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(TransferObservationContext context) {
		return KeyValues.of("remote.agent", context.getTransfer().remoteAgent(), "bytes",
				Long.toString(context.getTransfer().byteSize()));
	}

	private static String outcome(TransferObservationContext context) {
		if (context.isRefused()) {
			return "refused";
		}
		TransferState outcome = context.getOutcome();
		return (outcome != null) ? NixlAgentMetrics.tagValue(outcome) : "unknown";
	}

}
