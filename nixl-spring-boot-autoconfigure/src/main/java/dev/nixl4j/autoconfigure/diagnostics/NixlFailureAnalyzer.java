package dev.nixl4j.autoconfigure.diagnostics;

import dev.nixl4j.BackendCreationException;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.cuda.CudaException;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@link NixlException} that stopped the application, by its status: NIXL's
 * native library not found or not loadable ({@link NixlStatus#LIBRARY_UNAVAILABLE}),
 * native access denied to nixl4j ({@link NixlStatus#NATIVE_ACCESS_DENIED}), or a backend
 * that NIXL could not create. Other failures are left to other analyzers.
 */
class NixlFailureAnalyzer extends AbstractFailureAnalyzer<NixlException> {

	private static final String OTHER_ENGINES = "Or run without native NIXL: set nixl.agent.engine=embedded (the pure-Java "
			+ "engine, DRAM only) or nixl.agent.engine=auto (native NIXL when it loads, else the embedded engine).";

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NixlException cause) {
		if (cause instanceof CudaException) {
			// CudaFailureAnalyzer's: its LIBRARY_UNAVAILABLE is CUDA's runtime, not
			// NIXL's
			return null;
		}
		if (cause.status() == NixlStatus.NATIVE_ACCESS_DENIED) {
			return nativeAccessDenied(cause);
		}
		if (cause.status() == NixlStatus.LIBRARY_UNAVAILABLE) {
			return libraryUnavailable(cause);
		}
		if (cause instanceof BackendCreationException || (cause.status() == NixlStatus.ERROR_NOT_FOUND
				&& NixlException.GET_PLUGIN_PARAMS.equals(cause.operation()))) {
			return backendUnavailable(cause);
		}
		return null;
	}

	private static FailureAnalysis nativeAccessDenied(NixlException cause) {
		return new FailureAnalysis(
				"The NIXL agent uses the native engine, but the JVM denies nixl4j native access (it runs with "
						+ "--illegal-native-access=deny, or nixl4j is a named module that was not granted access), "
						+ "which java.lang.foreign needs to call NIXL.",
				"Start the JVM with --enable-native-access=ALL-UNNAMED (or --enable-native-access=dev.nixl4j.core "
						+ "when nixl4j is on the module path). For an executable jar, a Spring Boot jar included, add "
						+ "the manifest entry 'Enable-Native-Access: ALL-UNNAMED' instead. " + OTHER_ENGINES,
				cause);
	}

	private static FailureAnalysis libraryUnavailable(NixlException cause) {
		return new FailureAnalysis(
				"The NIXL agent uses the native engine, but NIXL's native library (libnixl_capi.so) "
						+ "is not available: " + cause.getMessage(),
				"Add the dependency dev.nixl4j:nixl-native-linux-x86_64, which carries NIXL's native libraries "
						+ "(nixl-spring-boot-starter brings it), or point nixl.native.library-directory (or the "
						+ "NIXL_LIB_DIR environment variable) at the directory of an installed NIXL that holds "
						+ "libnixl_capi.so. " + OTHER_ENGINES,
				cause);
	}

	private static FailureAnalysis backendUnavailable(NixlException cause) {
		return new FailureAnalysis("A NIXL backend is not available: " + cause.getMessage(),
				"Name a plugin the engine offers in nixl.agent.backends[n].plugin (the embedded engine offers UCX "
						+ "only; native NIXL lists its plugins in NixlAgent.availablePlugins()). For native NIXL, make "
						+ "sure it finds the plugin (NIXL_PLUGIN_DIR, else plugins/ beside libnixl.so; settable as "
						+ "nixl.native.environment.NIXL_PLUGIN_DIR) and that the plugin's own dependencies, such as "
						+ "CUDA for GDS, are installed. Or set nixl.agent.engine=embedded.",
				cause);
	}

}
