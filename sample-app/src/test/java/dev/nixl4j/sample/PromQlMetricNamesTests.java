package dev.nixl4j.sample;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link PromQlMetricNames}.
 */
class PromQlMetricNamesTests {

	@Test
	void aBareSelectorIsItsName() {
		assertThat(PromQlMetricNames.of("nixl_peers")).containsExactly("nixl_peers");
		assertThat(PromQlMetricNames.of("nixl_peers{agent=~\"$agent\"}")).containsExactly("nixl_peers");
	}

	@Test
	void functionsAggregationsAndGroupingLabelsAreNotNames() {
		assertThat(PromQlMetricNames
			.of("histogram_quantile(0.99, sum by (le, op) (rate(nixl_transfer_duration_seconds_bucket{instance=~\"$instance\", outcome=\"completed\"}[$__rate_interval])))"))
			.containsExactly("nixl_transfer_duration_seconds_bucket");
		assertThat(PromQlMetricNames.of("sum(rate(a_total[5m])) without (instance)")).containsExactly("a_total");
		assertThat(PromQlMetricNames.of("topk(5, max by(agent)(x))")).containsExactly("x");
	}

	@Test
	void bothSidesOfABinaryOperatorAreNames() {
		assertThat(PromQlMetricNames
			.of("sum by (op) (rate(d_sum[1m])) / on (op) group_left sum by (op) (rate(d_count[1m])) > bool 0.5"))
			.containsExactly("d_sum", "d_count");
		assertThat(PromQlMetricNames.of("a and b unless c or d offset 5m")).containsExactly("a", "b", "c", "d");
		assertThat(PromQlMetricNames.of("a>b")).containsExactly("a", "b");
	}

	@Test
	void labelMatchersStringsRangesAndVariablesAreSkipped() {
		assertThat(PromQlMetricNames
			.of("rate(x_total{op=\"read\", outcome!~\"completed|sum(y)\", agent=~\"${agent}\"}[$__range:1m]) * $scale + 1e3"))
			.containsExactly("x_total");
		assertThat(PromQlMetricNames.of("# a comment naming z\nabsent(w)")).containsExactly("w");
		assertThat(PromQlMetricNames.of("vector(1) + inf")).isEmpty();
	}

	@Test
	void namesWithColonsAreKept() {
		assertThat(PromQlMetricNames.of("job:nixl_transfers:rate5m")).containsExactly("job:nixl_transfers:rate5m");
	}

	@Test
	void variableQueriesNameTheirSelector() {
		assertThat(PromQlMetricNames.ofVariableQuery("label_values(nixl_peers{instance=~\"$instance\"}, agent)"))
			.containsExactly("nixl_peers");
		assertThat(PromQlMetricNames.ofVariableQuery("query_result(topk(3, nixl_peers))"))
			.containsExactly("nixl_peers");
		assertThat(PromQlMetricNames.ofVariableQuery("label_values(agent)")).isEmpty();
	}

	@Test
	void unclosedPartsAreRefusedWithTheirPosition() {
		assertThatIllegalArgumentException().isThrownBy(() -> PromQlMetricNames.of("rate(x{op=\"read}[5m])"))
			.withMessageContaining("a string not closed at position 10");
		assertThatIllegalArgumentException().isThrownBy(() -> PromQlMetricNames.of("rate(x[5m]"))
			.withMessageContaining("1 '(' not closed");
		assertThatIllegalArgumentException().isThrownBy(() -> PromQlMetricNames.of("x{a=\"b\""))
			.withMessageContaining("a '{' not closed by '}' at position 1");
		assertThatIllegalArgumentException().isThrownBy(() -> PromQlMetricNames.of("x)"))
			.withMessageContaining("a ')' that closes nothing");
	}

}
