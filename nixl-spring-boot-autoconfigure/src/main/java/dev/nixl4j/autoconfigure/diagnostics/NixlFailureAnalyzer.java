package dev.nixl4j.autoconfigure.diagnostics;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains a {@link NixlException} that stopped the application: NIXL's native library not
 * found or not loadable, native access not enabled for nixl4j, or a backend that NIXL could not
 * create. Other failures are left to other analyzers.
 */
class NixlFailureAnalyzer extends AbstractFailureAnalyzer<NixlException> {

	private static final String OTHER_ENGINES = "Or run without native NIXL: set nixl.agent.engine=embedded (the pure-Java "
			+ "engine, DRAM only) or nixl.agent.engine=auto (native NIXL when it loads, else the embedded engine).";

	@Override
	protected @Nullable FailureAnalysis analyze(Throwable rootFailure, NixlException cause) {
		if (cause.status() == NixlStatus.LIBRARY_UNAVAILABLE) {
			return isNativeAccessDisabled(cause) ? nativeAccessDisabled(cause) : libraryUnavailable(cause);
		}
		if ("create_backend".equals(cause.operation())
				|| (cause.status() == NixlStatus.ERROR_NOT_FOUND && "get_plugin_params".equals(cause.operation()))) {
			return backendUnavailable(cause);
		}
		return null;
	}

	private static boolean isNativeAccessDisabled(NixlException cause) {
		return cause.getMessage().contains("native access is not enabled");
	}

	private static FailureAnalysis nativeAccessDisabled(NixlException cause) {
		return new FailureAnalysis(
				"The NIXL agent uses the native engine, but the JVM does not allow nixl4j to call native code "
						+ "(java.lang.foreign needs native access to be enabled for it).",
				"Start the JVM with --enable-native-access=ALL-UNNAMED (or --enable-native-access=dev.nixl4j.core "
						+ "when nixl4j is on the module path). For an executable jar, add the manifest entry "
						+ "'Enable-Native-Access: ALL-UNNAMED' instead. " + OTHER_ENGINES,
				cause);
	}

	private static FailureAnalysis libraryUnavailable(NixlException cause) {
		return new FailureAnalysis("The NIXL agent uses the native engine, but NIXL's native library (libnixl_capi.so) "
				+ "is not available: " + cause.getMessage(),
				"Install NIXL's native libraries, for example with src/native/fetch-nixl.sh from the nixl4j sources "
						+ "(it unpacks NIXL's nixl-cu12 wheel into ~/.cache/nixl4j), or point "
						+ "nixl.native.library-directory (or the NIXL_LIB_DIR environment variable) at the directory "
						+ "holding libnixl_capi.so and the rest of NIXL. " + OTHER_ENGINES,
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
