package dev.nixl4j.autoconfigure.diagnostics;

import java.util.Map;

import dev.nixl4j.BackendCreationException;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The analyzer decides by the failure's type and status only: failures whose message is
 * empty or says something else get the same analysis, and words alone get none.
 */
class NixlFailureAnalyzerFactsTests {

	private final NixlFailureAnalyzer analyzer = new NixlFailureAnalyzer();

	@Test
	void aBackendFailureWithoutWordsIsExplained() {
		BackendCreationException failure = new BackendCreationException(NixlStatus.ERROR_BACKEND, "a", "GDS", Map.of(),
				0, "", null);
		FailureAnalysis analysis = this.analyzer.analyze(new BeanCreationException("nixlAgent", "failed", failure));
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).startsWith("A NIXL backend is not available");
		assertThat(analysis.getAction()).contains("nixl.agent.backends[n].plugin");
	}

	@Test
	void deniedNativeAccessIsExplainedWhateverTheWords() {
		NixlException failure = new NixlException(NixlStatus.NATIVE_ACCESS_DENIED, "create_agent", "a", null,
				"reworded");
		FailureAnalysis analysis = this.analyzer.analyze(failure);
		assertThat(analysis).isNotNull();
		assertThat(analysis.getAction()).contains("--enable-native-access=ALL-UNNAMED");
	}

	@Test
	void aMissingLibraryIsExplainedWhateverTheWords() {
		NixlException failure = new NixlException(NixlStatus.LIBRARY_UNAVAILABLE, "load", null, null, "");
		FailureAnalysis analysis = this.analyzer.analyze(failure);
		assertThat(analysis).isNotNull();
		assertThat(analysis.getAction()).contains("dev.nixl4j:nixl-native-linux-x86_64");
	}

	@Test
	void wordsAloneAreNotAnalyzed() {
		NixlException failure = new NixlException(NixlStatus.ERROR_INVALID_PARAM, "register_mem", "a", null,
				"create_backend of 'UCX' failed: native access is not enabled; libnixl_capi.so is not available");
		assertThat(this.analyzer.analyze(failure)).isNull();
	}

}
