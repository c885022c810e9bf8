package dev.nixl4j.internal.readiness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Backend;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.MemoryType;
import dev.nixl4j.cuda.Cuda;
import dev.nixl4j.cuda.CudaReport;
import dev.nixl4j.cuda.UcxCudaSupport;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.PluginInfo;
import dev.nixl4j.internal.ffm.NativeAccess;
import dev.nixl4j.internal.ffm.NativeLibrary;
import dev.nixl4j.internal.ffm.PluginFiles;
import dev.nixl4j.readiness.Readiness;
import dev.nixl4j.readiness.ReadinessReport;
import org.jspecify.annotations.Nullable;

/**
 * One run of the readiness check: environment first (native access, library), then each
 * configured backend (installed, loadable, creatable, memory types), then a loopback
 * transfer. The first failure decides the classification; everything looked at until then
 * is evidence.
 */
final class ReadinessCheck {

	private static final AtomicInteger runs = new AtomicInteger();

	private final AgentConfig config;

	private final Set<MemoryType> memoryTypes;

	private final List<String> evidence = new ArrayList<>();

	ReadinessCheck(AgentConfig config, Set<MemoryType> memoryTypes) {
		this.config = config;
		this.memoryTypes = Set.copyOf(memoryTypes);
	}

	ReadinessReport run() {
		this.evidence.add("java " + Runtime.version() + " (" + System.getProperty("java.vendor") + "), "
				+ System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
				+ System.getProperty("os.arch"));
		describeEnvironment();
		NativeAccess access = NativeAccess.current();
		this.evidence.add("native access: " + switch (access) {
			case ENABLED -> "enabled";
			case ALLOWED_WITH_WARNING ->
				"NOT enabled, allowed with the JVM's warning (to enable it: " + NativeAccess.howToEnable() + ")";
			case DENIED -> "DENIED";
		} + " for " + ReadinessCheck.class.getModule());
		listPlaces();
		if (access == NativeAccess.DENIED) {
			return report(Readiness.ENVIRONMENT_NOT_READY,
					"the JVM denies native access to nixl4j: " + NativeAccess.howToEnable());
		}
		NativeLibrary library;
		try {
			library = NativeLibrary.load(this.config.nativeLibraryDirectory(), this.config.nativeEnvironment());
		}
		catch (NixlException ex) {
			for (String line : String.valueOf(ex.getMessage()).split("\n")) {
				this.evidence.add("load error: " + line.strip());
			}
			this.evidence.add("install: " + NativeLibrary.INSTALL_HINT);
			return report(Readiness.ENVIRONMENT_NOT_READY,
					"NIXL's native library could not be loaded: " + firstLine(ex.getMessage()));
		}
		this.evidence
			.add("library: " + library.path() + " (NIXL " + library.version() + ", from " + library.source() + ")");
		return checkBackends(library);
	}

	private void describeEnvironment() {
		Map<String, String> shown = new TreeMap<>();
		System.getenv().forEach((name, value) -> {
			if (name.startsWith("UCX_") || name.equals("NIXL_PLUGIN_DIR") || name.equals("NIXL_LIB_DIR")
					|| name.equals("NIXL_PREFIX") || name.equals("NIXL4J_CACHE")) {
				shown.put(name, value);
			}
		});
		this.evidence.add("process environment: " + (shown.isEmpty() ? "no UCX_* or NIXL_* variables" : shown));
		if (!this.config.nativeEnvironment().isEmpty()) {
			this.evidence
				.add("native environment from the configuration: " + new TreeMap<>(this.config.nativeEnvironment()));
		}
	}

	private void listPlaces() {
		for (Map.Entry<String, Path> place : NativeLibrary.candidates(this.config.nativeLibraryDirectory())
			.entrySet()) {
			Path file = place.getValue().resolve(NativeLibrary.LIBRARY_FILE);
			String state = "(absent)";
			if (Files.isRegularFile(file)) {
				String refusal = NativeLibrary.refusal(place.getValue(), this.config.nativeEnvironment());
				state = (refusal != null) ? "(present, " + refusal + ")" : "(present)";
			}
			this.evidence.add("searched " + place.getKey() + ": " + file + " " + state);
		}
	}

	private ReadinessReport checkBackends(NativeLibrary library) {
		String base = this.config.name() + "-doctor-" + ProcessHandle.current().pid() + "-" + runs.incrementAndGet();
		NixlAgent initiator;
		try {
			// No backends yet: they are created one by one below, so that a failure names
			// its backend.
			initiator = NixlAgent.create(this.config.toBuilder().name(base + "-a").backends().build());
		}
		catch (NixlException ex) {
			return report(Readiness.ENVIRONMENT_NOT_READY,
					"NIXL loaded but could not create an agent: " + firstLine(ex.getMessage()));
		}
		try (initiator) {
			List<String> plugins = initiator.availablePlugins();
			Path pluginDirectory = PluginFiles.directory(this.config, library);
			this.evidence.add("plugin directory: " + pluginDirectory);
			this.evidence.add("plugins: " + plugins);
			if (this.config.backends().isEmpty()) {
				return report(Readiness.BACKEND_NOT_READY,
						"the configuration names no backend, so no agent can move data");
			}
			Set<MemoryType> supported = EnumSet.noneOf(MemoryType.class);
			for (BackendConfig backend : this.config.backends()) {
				String problem = createBackend(initiator, backend, plugins, pluginDirectory, supported);
				if (problem != null) {
					return report(Readiness.BACKEND_NOT_READY, problem);
				}
			}
			for (MemoryType type : this.memoryTypes) {
				if (!supported.contains(type)) {
					return report(Readiness.BACKEND_NOT_READY, "no configured backend supports " + type + " memory; "
							+ "the backends support " + supported);
				}
			}
			if (this.memoryTypes.contains(MemoryType.VRAM)) {
				ReadinessReport gpu = checkGpu();
				if (gpu != null) {
					return gpu;
				}
			}
			return loopback(initiator, base + "-b", library);
		}
	}

	/**
	 * VRAM needs more than a backend that names it: the CUDA runtime and a device, and,
	 * for UCX, its CUDA modules loading. Returns what is wrong, or {@code null}.
	 */
	private @Nullable ReadinessReport checkGpu() {
		CudaReport cuda = Cuda.report();
		this.evidence.add("cuda: " + cuda.summary());
		// Places refused on the way (to the runtime that loaded, or to none) are listed:
		// the summary does not name them.
		for (String attempt : cuda.attempts()) {
			if (attempt.contains(": refused: ")) {
				this.evidence.add("cuda: " + attempt);
			}
		}
		if (!cuda.usable()) {
			return report(Readiness.ENVIRONMENT_NOT_READY, "VRAM was asked for, but CUDA is not usable here: "
					+ Objects.requireNonNullElse(cuda.problem(), "no device"));
		}
		if (this.config.backends().stream().anyMatch((backend) -> backend.plugin().equals("UCX"))) {
			UcxCudaSupport ucx = Cuda.ucxCudaSupport();
			this.evidence.add("UCX CUDA transports: " + ucx.summary());
			if (!ucx.loadable()) {
				return report(Readiness.BACKEND_NOT_READY,
						"VRAM was asked for, but UCX's CUDA transports do not load: " + ucx.summary());
			}
		}
		return null;
	}

	private ReadinessReport loopback(NixlAgent initiator, String targetName, NativeLibrary library) {
		try (NixlAgent target = NixlAgent.create(this.config.toBuilder().name(targetName).build())) {
			this.evidence.addAll(LoopbackProbe.run(initiator, target));
		}
		catch (NixlException | LoopbackProbe.Failure ex) {
			this.evidence.add("loopback: " + ex.getMessage());
			return report(Readiness.BACKEND_NOT_READY, "the backends were created but a loopback transfer between "
					+ "two agents failed: " + firstLine(ex.getMessage()));
		}
		return report(Readiness.READY, "NIXL " + library.version() + " with " + backendNames()
				+ " moved data between two agents, verified byte for byte");
	}

	/** Creates one backend on the probe agent; returns what is wrong, or {@code null}. */
	private @Nullable String createBackend(NixlAgent agent, BackendConfig backend, List<String> plugins,
			Path pluginDirectory, Set<MemoryType> supported) {
		String plugin = backend.plugin();
		if (!plugins.contains(plugin)) {
			return "plugin '" + plugin + "' is not installed: there is no " + PluginFiles.file(pluginDirectory, plugin)
					+ "; available: " + plugins;
		}
		PluginInfo info;
		try {
			info = agent.pluginInfo(plugin);
		}
		catch (NixlException ex) {
			String reason = PluginFiles.loadError(pluginDirectory, plugin);
			this.evidence.add("plugin " + plugin + ": cannot be loaded: " + reason);
			return "plugin '" + plugin + "' is installed but cannot be loaded here: " + reason;
		}
		this.evidence.add("plugin " + plugin + ": default parameters " + new TreeMap<>(info.parameters())
				+ ", memory types " + sorted(info.memoryTypes()));
		Backend created;
		try {
			created = agent.createBackend(plugin, backend.parameters());
		}
		catch (NixlException ex) {
			this.evidence.add("backend " + plugin + " with parameters " + new TreeMap<>(backend.parameters())
					+ ": creation failed: " + firstLine(ex.getMessage()));
			return "NIXL could not create a '" + plugin + "' backend here (status " + ex.status() + "); NIXL's "
					+ "log on stderr tells why";
		}
		this.evidence.add("backend " + plugin + " created with parameters " + new TreeMap<>(backend.parameters())
				+ "; it reports parameters " + new TreeMap<>(created.parameters()) + ", memory types "
				+ sorted(created.memoryTypes()));
		supported.addAll(created.memoryTypes());
		return null;
	}

	private String backendNames() {
		return this.config.backends().stream().map(BackendConfig::plugin).toList().toString();
	}

	private static List<MemoryType> sorted(Set<MemoryType> types) {
		return types.stream().sorted().toList();
	}

	private static String firstLine(@Nullable String message) {
		if (message == null) {
			return "no detail";
		}
		int newline = message.indexOf('\n');
		return (newline < 0) ? message : message.substring(0, newline);
	}

	private ReadinessReport report(Readiness readiness, String summary) {
		return new ReadinessReport(readiness, summary, this.evidence);
	}

}
