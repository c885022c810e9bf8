package dev.nixl4j.internal.ffm;

import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which parameters nixl4j adds to a UCX backend's.
 */
class UcxDefaultsTest {

	@Test
	void ucxWithoutParametersGetsOneThreadPerProcessorAndTheSmallSplit() {
		assertThat(UcxDefaults.apply("UCX", Map.of(), 2, true))
			.isEqualTo(Map.of("num_threads", "2", "split_batch_size", "32"));
	}

	@Test
	void thePoolIsCappedAtFourThreads() {
		assertThat(UcxDefaults.apply("UCX", Map.of(), 64, true)).containsEntry("num_threads", "4");
	}

	@Test
	void oneProcessorGetsNoPool() {
		assertThat(UcxDefaults.apply("UCX", Map.of("num_workers", "2"), 1, true)).isEqualTo(Map.of("num_workers", "2"));
	}

	@Test
	void parametersTheCallerSetAreKept() {
		Map<String, String> parameters = UcxDefaults.apply("UCX",
				Map.of("num_threads", "3", "split_batch_size", "1024", "num_workers", "2"), 8, true);
		assertThat(parameters).isEqualTo(Map.of("num_threads", "3", "split_batch_size", "1024", "num_workers", "2"));
	}

	@Test
	void aSplitSizeAloneGetsTheDefaultThreads() {
		assertThat(UcxDefaults.apply("UCX", Map.of("split_batch_size", "1024"), 2, true))
			.isEqualTo(Map.of("num_threads", "2", "split_batch_size", "1024"));
	}

	@Test
	void noThreadsTurnsThePoolOffAndAddsNothing() {
		assertThat(UcxDefaults.apply("UCX", Map.of("num_threads", "0"), 2, true)).isEqualTo(Map.of("num_threads", "0"));
	}

	@Test
	void singleThreadedWorkersGetNoPool() {
		assertThat(UcxDefaults.apply("UCX", Map.of(), 2, false)).isEmpty();
		assertThat(UcxDefaults.apply("UCX", Map.of("num_threads", "2"), 2, false))
			.isEqualTo(Map.of("num_threads", "2"));
	}

	@Test
	void otherPluginsAreLeftAlone() {
		assertThat(UcxDefaults.apply("POSIX", Map.of(), 2, true)).isEmpty();
	}

}
