package dev.nixl4j.autoconfigure.tracing;

import dev.nixl4j.Engine;
import dev.nixl4j.autoconfigure.tracing.KvTracingCostBench.Mode;
import dev.nixl4j.autoconfigure.tracing.KvTracingCostBench.Round;
import dev.nixl4j.autoconfigure.tracing.KvTracingCostBench.Traces;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The modes of {@link KvTracingCostBench} measure what they say, on real hand-offs
 * (embedded engine, the last request's blocks compared byte for byte): without an
 * observer no lease carries a trace context and nothing is exported; traced and sampled,
 * each request exports its five spans in one trace of its own, nested as documented; with
 * the sampler off every lease carries a context and no span is exported. No timing is
 * asserted.
 */
class KvTracingCostBenchTests {

	private static final int REQUESTS = 20;

	@Test
	void eachModeTracesAsItSays() throws Exception {
		try (KvTracingCostBench bench = new KvTracingCostBench(Engine.EMBEDDED, 1, REQUESTS)) {
			Round none = bench.round(Mode.NONE, REQUESTS);
			Round traced = bench.round(Mode.TRACED, REQUESTS);
			Round unsampled = bench.round(Mode.UNSAMPLED, REQUESTS);
			Round tracedAgain = bench.round(Mode.TRACED, REQUESTS);

			assertThat(none.withContext()).isZero();
			assertThat(none.traces()).isEqualTo(Traces.NONE);
			assertThat(traced.withContext()).isEqualTo(REQUESTS);
			for (Round round : new Round[] { traced, tracedAgain }) {
				// a done message resent under load adds a confirm span to its trace
				Traces traces = round.traces();
				assertThat(traces.traces()).as("one trace per request, cleared after each round").isEqualTo(REQUESTS);
				assertThat(traces.complete()).as("five spans per request, nested").isEqualTo(REQUESTS);
				assertThat(traces.spans()).isEqualTo(5 * REQUESTS + traces.repeatedConfirms() + traces.strays());
			}
			assertThat(unsampled.withContext()).isEqualTo(REQUESTS);
			assertThat(unsampled.traces().traces()).isZero();
			for (Round round : new Round[] { none, traced, unsampled, tracedAgain }) {
				assertThat(round.completed()).as("mode %s", round.mode()).isEqualTo(REQUESTS);
				assertThat(round.verified()).as("mode %s", round.mode()).isTrue();
				assertThat(round.problems()).as("mode %s", round.mode()).isEmpty();
				assertThat(round.nanos()).hasSize(REQUESTS).doesNotContain(0L);
				assertThat(round.allocated()).as("mode %s", round.mode()).isPositive();
			}
		}
	}

	@Test
	void badOptionsAreNamed() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> KvTracingCostBench.Options.parse(new String[] { "--blocks", "0" }))
			.withMessageContaining("--blocks must be within 1..1024");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> KvTracingCostBench.Options.parse(new String[] { "--engine", "gpu" }))
			.withMessageContaining("--engine");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> KvTracingCostBench.Options.parse(new String[] { "--requests" }))
			.withMessageContaining("--requests needs a value");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> KvTracingCostBench.Options.parse(new String[] { "--help" }))
			.withMessageContaining("unknown option --help");
		assertThat(KvTracingCostBench.Options.parse(new String[] { "--engine", "embedded", "--rounds", "3" }))
			.isEqualTo(new KvTracingCostBench.Options(Engine.EMBEDDED, 1, 3, 2000, 1000));
	}

}
