package dev.nixl4j.kv;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The W3C trace context a KV hand-off carries: checked strictly, and dropped (never
 * repeated) when it is not well formed.
 */
class KvTraceContextTest {

	private static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

	@Test
	void aW3CTraceparentIsKeptWithItsIds() {
		KvTraceContext context = KvTraceContext.parse(TRACEPARENT, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");

		assertThat(context).isNotNull();
		assertThat(context.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
		assertThat(context.parentId()).isEqualTo("00f067aa0ba902b7");
		assertThat(context.tracestate()).isEqualTo("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
			"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
			"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
			"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
			"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
			"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
			"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
			"00-4bf92f3577b34da6a3ce929d0e0e473\n-00f067aa0ba902b7-01" })
	void aMalformedTraceparentDropsTheContext(String traceparent) {
		assertThat(KvTraceContext.parse(traceparent, "a=b")).isNull();
		assertThatIllegalArgumentException().isThrownBy(() -> new KvTraceContext(traceparent, ""))
			.withMessageNotContaining(traceparent.isEmpty() ? "\u0000" : traceparent);
	}

	@ParameterizedTest
	@ValueSource(strings = { "Upper=x", "a=b,c", "=b", "a=b\u0001", "a=b,c=d=e", "a=", "a b=c" })
	void aMalformedTracestateIsDroppedAndTheTraceparentKept(String tracestate) {
		KvTraceContext context = KvTraceContext.parse(TRACEPARENT, tracestate);

		assertThat(context).isNotNull();
		assertThat(context.tracestate()).isEmpty();
	}

	@Test
	void aTracestateIsBoundedInLengthAndMembers() {
		String members = String.join(",", java.util.Collections.nCopies(33, "k=v"));
		assertThat(KvTraceContext.isTracestate(members)).isFalse();
		assertThat(KvTraceContext.isTracestate("k=" + "v".repeat(KvTraceContext.MAX_TRACESTATE_LENGTH))).isFalse();
		assertThat(KvTraceContext.isTracestate(" a=b , tenant@sys=v ,")).isTrue();
	}

	@Test
	void theTransferParametersDropAMalformedContextAndKeepAWellFormedOne() {
		KvTransferParams bad = new KvTransferParams("p", "req", List.of(1), "f", 1, 1, 0, List.of(), "", "00-zz",
				"a=b");
		KvTransferParams good = bad.withTraceContext(KvTraceContext.parse(TRACEPARENT, "a=b"));

		assertThat(bad.traceparent()).isEmpty();
		assertThat(bad.tracestate()).isEmpty();
		assertThat(bad.traceContext()).isNull();
		assertThat(good.traceContext()).isEqualTo(new KvTraceContext(TRACEPARENT, "a=b"));
		assertThat(good.withTraceContext(null).traceparent()).isEmpty();
	}

}
