package dev.nixl4j.internal.ffm;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.jspecify.annotations.Nullable;
import dev.nixl4j.AgentConfig;

/**
 * Finds and loads {@code libnixl_capi.so} once per JVM.
 *
 * <p>
 * Places tried, in order, each labelled in what {@link #source()} and errors report:
 * <ol>
 * <li>explicit configuration: the agent configuration's directory, then system property
 * {@value #DIR_PROPERTY};
 * <li>the environment: {@code NIXL_LIB_DIR}, then
 * {@code $NIXL_PREFIX/lib/x86_64-linux-gnu} and {@code $NIXL_PREFIX/lib};
 * <li>a system install: {@code /opt/nvidia/nvda_nixl/lib/x86_64-linux-gnu} and
 * {@code /opt/nvidia/nvda_nixl/lib} (NIXL's default prefix, as in Dynamo's containers);
 * <li>NIXL installed in a Python environment from the {@code nixl-cu12} or
 * {@code nixl-cu13} wheel (as vLLM and Dynamo containers carry it): the active virtual
 * environment ({@code $VIRTUAL_ENV}, {@code $CONDA_PREFIX}), then the system
 * interpreters' and the user's site-packages, found by listing directories;
 * <li>a native artifact on the class path ({@code nixl-native-linux-x86_64},
 * {@code nixl-native-linux-x86_64-cu13}, {@code nixl-native-linux-aarch64}), the one that
 * matches the host as {@link VariantChoice} chooses it (an explicit
 * {@code nixl4j.native.variant}, else the architecture, then the CUDA major version the
 * NVIDIA driver runs), extracted once into {@code <cache>/native/} and verified against
 * its checksums before every load;
 * <li>the cache that {@code src/native/fetch-nixl.sh} fills, {@code <cache>/current/lib}.
 * </ol>
 * A NIXL the host already runs is built for its hardware and matches its Python peers'
 * version, so it wins over the one bundled with nixl4j. Before anything in a place is
 * loaded the place is checked ({@link #refusal(Path, Map)}, by the one rule of
 * {@link TrustedFiles}; configured places too): one that another user could change is
 * refused, with a warning naming it and why, and the search goes on. When nothing loads,
 * the error lists every place tried and why each was refused. Nothing is loaded unless
 * the JVM allows native access ({@link NativeAccess}).
 */
public final class NativeLibrary {

	/** System property naming a directory that holds {@code libnixl_capi.so}. */
	public static final String DIR_PROPERTY = AgentConfig.NATIVE_DIRECTORY_PROPERTY;

	/**
	 * System property naming nixl4j's cache directory, where the native artifact is
	 * extracted; it wins over {@code $NIXL4J_CACHE}.
	 */
	public static final String CACHE_PROPERTY = "nixl.native.cache";

	/**
	 * Variables NIXL reads when it creates an agent (its metadata exchange). Set through
	 * an agent's native environment, they apply to that agent only: they are put back as
	 * they were once it is created.
	 */
	public static final Set<String> AGENT_VARIABLES = Set.of("NIXL_ETCD_ENDPOINTS", "NIXL_ETCD_NAMESPACE",
			"NIXL_TCPSTORE_ENDPOINT");

	/** File name of NIXL's C API library. */
	public static final String LIBRARY_FILE = "libnixl_capi.so";

	/** How to install the native libraries, quoted in errors. */
	public static final String INSTALL_HINT = "add the dependency dev.nixl4j:" + ClassPathBundle.ARTIFACT
			+ " (the Spring Boot starter brings it; dev.nixl4j:nixl-native-linux-x86_64-cu13 for CUDA 13 hosts, "
			+ "dev.nixl4j:nixl-native-linux-aarch64 on aarch64), or point NIXL_LIB_DIR (or -D" + DIR_PROPERTY
			+ ") at the directory of an installed NIXL that holds " + LIBRARY_FILE
			+ " (in a checkout of nixl4j's sources, src/native/fetch-nixl.sh fills nixl4j's cache instead)";

	private static final System.Logger logger = System.getLogger(NativeLibrary.class.getName());

	private static @Nullable NativeLibrary loaded;

	private static @Nullable NixlException failure;

	private final Path path;

	private final String version;

	private final String source;

	private final SymbolLookup lookup;

	private NativeLibrary(Path path, String version, String source, SymbolLookup lookup) {
		this.path = path;
		this.version = version;
		this.source = source;
		this.lookup = lookup;
	}

	/**
	 * Returns the library's path.
	 * @return the path of {@code libnixl_capi.so}
	 */
	public Path path() {
		return this.path;
	}

	/**
	 * Returns the NIXL version, as recorded beside the library (or by the Python package
	 * or the native artifact it came from), or {@code "unknown"}.
	 * @return the version
	 */
	public String version() {
		return this.version;
	}

	/**
	 * Returns where the library was found, as the search labels it: for example
	 * {@code "NIXL_LIB_DIR"}, {@code "system install"},
	 * {@code "Python environment /venv/lib/python3.12/site-packages (nixl-cu12 1.5.1)"},
	 * {@code "class path (nixl-native-linux-x86_64 1.5.1), chosen: the only artifact for x86_64 on the class path"}
	 * or {@code "nixl4j cache"}. A native artifact's label says which was chosen and why.
	 * @return the source
	 */
	public String source() {
		return this.source;
	}

	SymbolLookup lookup() {
		return this.lookup;
	}

	/**
	 * Returns the loaded library, if {@link #load} succeeded.
	 * @return the library or {@code null}
	 */
	public static synchronized @Nullable NativeLibrary loadedLibrary() {
		return loaded;
	}

	/**
	 * Loads the library, or returns the one loaded earlier, and sets the environment. A
	 * failure is remembered: the same JVM will not retry a load that failed.
	 *
	 * <p>
	 * The environment is set on every call, not only the first: NIXL reads some variables
	 * when an agent is created ({@code NIXL_ETCD_ENDPOINTS}, {@code NIXL_ETCD_NAMESPACE})
	 * and UCX reads its own when a backend is created, so each agent sees what its
	 * configuration set. Variables stay set for the process (an agent whose configuration
	 * does not name a variable sees the value an earlier agent set), except
	 * {@link #AGENT_VARIABLES}, which {@link NativeDriver} puts back once the agent is
	 * created.
	 * @param directory a directory to try first, or {@code null}
	 * @param environment variables to set
	 * @return the library
	 * @throws NixlException {@link NixlStatus#LIBRARY_UNAVAILABLE} with every place
	 * tried, or {@link NixlStatus#NATIVE_ACCESS_DENIED} when the JVM denies nixl4j native
	 * access
	 */
	public static synchronized NativeLibrary load(@Nullable Path directory, Map<String, String> environment) {
		if (loaded != null) {
			if (!environment.isEmpty()) {
				// An agent's environment may name other directories to load from.
				String refusal = environmentRefusal(TrustedFiles.forThisProcess(), environment);
				if (refusal != null) {
					throw unavailable(refusal, null);
				}
				applyEnvironment(environment);
			}
			return loaded;
		}
		if (failure != null) {
			throw failure;
		}
		try {
			loaded = doLoad(directory, environment);
			return loaded;
		}
		catch (NixlException ex) {
			failure = ex;
			throw ex;
		}
	}

	private static NativeLibrary doLoad(@Nullable Path directory, Map<String, String> environment) {
		requireNativeAccess();
		List<String> attempts = new ArrayList<>();
		TrustedFiles trust = TrustedFiles.forThisProcess();
		for (Candidate candidate : search(directory)) {
			if (candidate.refusal() != null) {
				attempts.add(candidate.label() + ": " + candidate.refusal());
				continue;
			}
			Path libraries = Objects.requireNonNull(candidate.directory());
			ClassPathBundle bundle = candidate.bundle();
			if (bundle != null) {
				try {
					libraries = bundle.prepare().resolve("lib");
				}
				catch (ClassPathBundle.BundleException ex) {
					attempts.add(candidate.label() + ": " + ex.getMessage());
					continue;
				}
			}
			Path file = libraries.resolve(LIBRARY_FILE);
			if (!Files.isRegularFile(file)) {
				attempts.add(candidate.label() + " " + libraries + ": no " + LIBRARY_FILE);
				continue;
			}
			String refusal = refusal(trust, libraries, environment, candidate.setting());
			if (refusal != null) {
				logger.log(Level.WARNING, "Not loading NIXL from {0} ({1}): {2}; trying the next place", libraries,
						candidate.label(), refusal);
				attempts.add(candidate.label() + " " + libraries + ": " + refusal);
				continue;
			}
			applyEnvironment(withDefaults(environment));
			SymbolLookup lookup;
			try {
				lookup = SymbolLookup.libraryLookup(file, Arena.global());
			}
			catch (IllegalArgumentException | IllegalCallerException ex) {
				attempts.add(candidate.label() + " " + file + ": cannot be loaded (" + ex.getMessage()
						+ "); check its dependencies with ldd");
				continue;
			}
			if (lookup.find("nixl_capi_create_configured_agent").isEmpty()) {
				attempts.add(candidate.label() + " " + file
						+ ": not a compatible NIXL C API (no nixl_capi_create_configured_agent; NIXL 1.x needed)");
				continue;
			}
			String version = (candidate.version() != null) ? candidate.version() : readVersion(libraries);
			String source = (candidate.chosen() != null) ? candidate.label() + ", chosen: " + candidate.chosen()
					: candidate.label();
			NativeLibrary library = new NativeLibrary(file, version, source, lookup);
			if (isStub(lookup)) {
				throw unavailable(file + " is NIXL's stub library (nixl_capi_is_stub() is true): it has no transfer "
						+ "engine. Install the real library: " + INSTALL_HINT, null);
			}
			return library;
		}
		throw unavailable("NIXL's native library " + LIBRARY_FILE + " was not found. Tried:\n  - "
				+ String.join("\n  - ", attempts) + "\nTo install it: " + INSTALL_HINT, null);
	}

	/**
	 * Fails when the JVM denies nixl4j native access. It must run before nixl4j's first
	 * restricted call ({@link NativeAccess#current()}).
	 * @throws NixlException {@link NixlStatus#NATIVE_ACCESS_DENIED} saying how to enable
	 * it
	 */
	static void requireNativeAccess() {
		if (NativeAccess.current() == NativeAccess.DENIED) {
			throw new NixlException(NixlStatus.NATIVE_ACCESS_DENIED, "load_library", null, null,
					"the JVM denies native access to nixl4j (" + NativeAccess.class.getModule()
							+ "), which it needs to " + "call NIXL: " + NativeAccess.howToEnable(),
					null);
		}
	}

	/**
	 * A place to look: a directory, or the artifact on the class path (extracted when
	 * tried), or a place already known to be of no use, with why.
	 */
	private record Candidate(String label, @Nullable Path directory, @Nullable ClassPathBundle bundle,
			@Nullable String version, @Nullable String refusal, @Nullable String chosen, @Nullable String setting) {

		static Candidate directory(String label, Path directory) {
			return new Candidate(label, directory, null, null, null, null, null);
		}

		/** A directory the configuration names, through {@code setting}. */
		static Candidate configured(String label, Path directory, String setting) {
			return new Candidate(label, directory, null, null, null, null, setting);
		}

		static Candidate refused(String label, String refusal) {
			return new Candidate(label, null, null, null, refusal, null, null);
		}

	}

	/**
	 * Lists the places the locator tries that are directories, labelled with where each
	 * came from. The artifact on the class path appears as the directory it is extracted
	 * to; Python environments appear only where they hold NIXL.
	 * @param directory a configured directory, or {@code null}
	 * @return label to directory, in order
	 */
	public static Map<String, Path> candidates(@Nullable Path directory) {
		Map<String, Path> candidates = new LinkedHashMap<>();
		for (Candidate candidate : search(directory)) {
			if (candidate.directory() != null) {
				candidates.put(candidate.label(), candidate.directory());
			}
		}
		return candidates;
	}

	private static List<Candidate> search(@Nullable Path directory) {
		List<Candidate> candidates = new ArrayList<>();
		if (directory != null) {
			candidates.add(Candidate.configured("configured directory", directory,
					"the agent configuration's native library directory"));
		}
		String property = System.getProperty(DIR_PROPERTY);
		if (property != null && !property.isBlank()) {
			candidates
				.add(Candidate.configured("system property " + DIR_PROPERTY, Path.of(property), "-D" + DIR_PROPERTY));
		}
		String env = System.getenv("NIXL_LIB_DIR");
		if (env != null && !env.isBlank()) {
			candidates.add(Candidate.configured("NIXL_LIB_DIR", Path.of(env), "NIXL_LIB_DIR"));
		}
		String prefix = System.getenv("NIXL_PREFIX");
		if (prefix != null && !prefix.isBlank()) {
			candidates.add(Candidate.configured("NIXL_PREFIX (multiarch)", Path.of(prefix, "lib", "x86_64-linux-gnu"),
					"NIXL_PREFIX"));
			candidates.add(Candidate.configured("NIXL_PREFIX", Path.of(prefix, "lib"), "NIXL_PREFIX"));
		}
		candidates.add(Candidate.directory("system install (multiarch)",
				Path.of("/opt/nvidia/nvda_nixl/lib/x86_64-linux-gnu")));
		candidates.add(Candidate.directory("system install", Path.of("/opt/nvidia/nvda_nixl/lib")));
		List<PythonEnvironments.Installation> installations = PythonEnvironments.find();
		for (PythonEnvironments.Installation installation : installations) {
			String version = installation.version();
			candidates.add(new Candidate(
					"Python environment " + installation.sitePackages() + " (" + installation.wheel()
							+ ((version != null) ? " " + version : "") + ")",
					installation.libraries(), null, version, null, null, null));
		}
		if (installations.isEmpty()) {
			List<Path> searched = PythonEnvironments.sitePackages();
			candidates.add(Candidate.refused("Python environments", searched.isEmpty()
					? "no site-packages directory found" : "no nixl-cu12 or nixl-cu13 wheel installed in " + searched));
		}
		candidates.add(classPath());
		candidates.add(Candidate.directory("nixl4j cache", cacheDirectory().resolve("current").resolve("lib")));
		return candidates;
	}

	private static Candidate classPath() {
		String label = "class path";
		String os = System.getProperty("os.name", "");
		String arch = System.getProperty("os.arch", "");
		if (!os.equals("Linux")) {
			return Candidate.refused(label,
					"nixl4j's native artifacts serve Linux only; this JVM runs on " + os + " " + arch);
		}
		Map<NativeVariant, ClassLoader> present = ClassPathBundle.present(ClassPathBundle.loaders());
		VariantChoice.Choice choice = VariantChoice.choose(present.keySet(), arch, VariantChoice.Request.fromSystem(),
				VariantChoice.Driver.detect());
		NativeVariant variant = choice.variant();
		if (variant == null) {
			return Candidate.refused(label, choice.reason());
		}
		ClassPathBundle bundle;
		try {
			bundle = ClassPathBundle.open(variant, Objects.requireNonNull(present.get(variant)), cacheDirectory());
		}
		catch (ClassPathBundle.BundleException ex) {
			return Candidate.refused(label + " (" + variant.artifact() + ")", ex.getMessage());
		}
		return new Candidate(label + " (" + variant.artifact() + " " + bundle.version() + ")",
				bundle.directory().resolve("lib"), bundle, bundle.version(), null, choice.reason(), null);
	}

	/**
	 * Checks a place that holds {@code libnixl_capi.so} before anything there is loaded,
	 * by the rule of {@link TrustedFiles}: the library, every shared object beside it
	 * (what its {@code $ORIGIN} run path finds), the bundled dependencies NIXL's wheels
	 * keep beside that directory ({@code ../nixl_cu<N>.libs/}) with UCX's modules
	 * ({@code ucx/}), the plugin directory NIXL will load from ({@code NIXL_PLUGIN_DIR},
	 * else {@code plugins/} beside the library) and {@code UCX_MODULE_DIR} when set. The
	 * readiness report asks the same of every place it lists.
	 * @param libraries the directory holding {@code libnixl_capi.so}
	 * @param environment an agent's native environment, which may set
	 * {@code NIXL_PLUGIN_DIR} or {@code UCX_MODULE_DIR}
	 * @return {@code null} when NIXL may be loaded from there, else why not, beginning
	 * {@code "refused: "}
	 */
	public static @Nullable String refusal(Path libraries, Map<String, String> environment) {
		return refusal(TrustedFiles.forThisProcess(), libraries, environment, null);
	}

	private static @Nullable String refusal(TrustedFiles trust, Path libraries, Map<String, String> environment,
			@Nullable String setting) {
		TrustedFiles.Refusal refusal = trust.library(libraries.resolve(LIBRARY_FILE));
		if (refusal == null) {
			refusal = trust.libraryDirectory(libraries);
		}
		Path above = libraries.toAbsolutePath().getParent();
		if (refusal == null && above != null) {
			List<Path> bundled = new ArrayList<>();
			try (java.nio.file.DirectoryStream<Path> entries = Files.newDirectoryStream(above, "nixl_cu*.libs")) {
				entries.forEach(bundled::add);
			}
			catch (java.io.IOException | SecurityException ex) {
				// nothing bundled beside it
			}
			bundled.sort(null);
			for (Path directory : bundled) {
				refusal = trust.libraryDirectory(directory);
				if (refusal == null) {
					refusal = trust.libraryDirectory(directory.resolve("ucx"));
				}
				if (refusal != null) {
					break;
				}
			}
		}
		if (refusal == null && variable(environment, "NIXL_PLUGIN_DIR") == null) {
			refusal = trust.libraryDirectory(libraries.resolve("plugins"));
		}
		if (refusal != null) {
			return (setting != null) ? trust.refusedConfigured(refusal, setting) : trust.refused(refusal);
		}
		return environmentRefusal(trust, environment);
	}

	/**
	 * Checks the directories that variables make NIXL or UCX load from:
	 * {@code NIXL_PLUGIN_DIR} and {@code UCX_MODULE_DIR}, from an agent's native
	 * environment or the process's.
	 */
	private static @Nullable String environmentRefusal(TrustedFiles trust, Map<String, String> environment) {
		for (String name : List.of("NIXL_PLUGIN_DIR", "UCX_MODULE_DIR")) {
			String value = variable(environment, name);
			if (value != null) {
				TrustedFiles.Refusal refusal = trust.libraryDirectory(Path.of(value));
				if (refusal != null) {
					return trust.refusedConfigured(refusal, name) + " (" + name + " is " + value + ")";
				}
			}
		}
		return null;
	}

	private static @Nullable String variable(Map<String, String> environment, String name) {
		String value = environment.containsKey(name) ? environment.get(name) : System.getenv(name);
		return (value == null || value.isBlank()) ? null : value;
	}

	/**
	 * Returns the directory NIXL loads its plugins from: {@code NIXL_PLUGIN_DIR} as an
	 * agent's native environment or the process sets it, else {@code plugins/} beside the
	 * library.
	 * @param environment an agent's native environment
	 * @return the directory
	 */
	public Path pluginDirectory(Map<String, String> environment) {
		String configured = environment.get("NIXL_PLUGIN_DIR");
		String directory = (configured != null) ? configured : System.getenv("NIXL_PLUGIN_DIR");
		return (directory != null) ? Path.of(directory) : this.path.resolveSibling("plugins");
	}

	/**
	 * Returns nixl4j's cache directory: where {@code src/native/fetch-nixl.sh} puts NIXL
	 * and where the native artifact is extracted.
	 * @return system property {@value #CACHE_PROPERTY}, else {@code $NIXL4J_CACHE}, else
	 * {@code $XDG_CACHE_HOME/nixl4j}, else {@code ~/.cache/nixl4j}
	 */
	public static Path cacheDirectory() {
		String property = System.getProperty(CACHE_PROPERTY);
		if (property != null && !property.isBlank()) {
			return Path.of(property);
		}
		String cache = System.getenv("NIXL4J_CACHE");
		if (cache != null && !cache.isBlank()) {
			return Path.of(cache);
		}
		String xdg = System.getenv("XDG_CACHE_HOME");
		if (xdg != null && !xdg.isBlank()) {
			return Path.of(xdg, "nixl4j");
		}
		return Path.of(System.getProperty("user.home"), ".cache", "nixl4j");
	}

	private static String readVersion(Path directory) {
		Path file = directory.resolve("NIXL_VERSION");
		try {
			if (Files.isRegularFile(file)) {
				return Files.readString(file).strip();
			}
		}
		catch (java.io.IOException ex) {
			// fall through: the version is informational
		}
		return "unknown";
	}

	private static boolean isStub(SymbolLookup lookup) {
		MemorySegment symbol = lookup.find("nixl_capi_is_stub").orElse(null);
		if (symbol == null) {
			return false;
		}
		MethodHandle isStub = Linker.nativeLinker()
			.downcallHandle(symbol, FunctionDescriptor.of(ValueLayout.JAVA_BOOLEAN));
		try {
			return (boolean) isStub.invokeExact();
		}
		catch (Throwable ex) {
			throw unavailable("nixl_capi_is_stub failed: " + ex, ex);
		}
	}

	/**
	 * Adds nixl4j's defaults to the configured environment. On a host without RDMA
	 * devices UCX's InfiniBand modules serve nothing, yet loading them makes the wheel's
	 * own copy of libibverbs load the system's verbs providers, which bring a second
	 * libibverbs and libnl into the process; libnl's destructor then crashes the JVM at
	 * exit. So unless the user chose {@code UCX_MODULES}, they are left out there.
	 * @param configured the configured environment
	 * @return the environment to apply
	 */
	static Map<String, String> withDefaults(Map<String, String> configured) {
		Map<String, String> environment = new LinkedHashMap<>();
		if (System.getenv("UCX_MODULES") == null && !hasRdmaDevices()) {
			environment.put("UCX_MODULES", "^ib");
		}
		environment.putAll(configured);
		return environment;
	}

	private static boolean hasRdmaDevices() {
		Path devices = Path.of("/sys/class/infiniband");
		try (java.util.stream.Stream<Path> entries = Files.list(devices)) {
			return entries.findAny().isPresent();
		}
		catch (java.io.IOException ex) {
			return false;
		}
	}

	/**
	 * Sets environment variables through libc, where NIXL and UCX read them (Java's own
	 * view of the environment does not change).
	 */
	private static void applyEnvironment(Map<String, String> environment) {
		if (environment.isEmpty()) {
			return;
		}
		Linker linker = Linker.nativeLinker();
		MethodHandle setenv = linker.downcallHandle(linker.defaultLookup().findOrThrow("setenv"), FunctionDescriptor
			.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
		try (Arena arena = Arena.ofConfined()) {
			for (Map.Entry<String, String> entry : environment.entrySet()) {
				String name = Objects.requireNonNull(entry.getKey());
				if (name.isEmpty() || name.indexOf('=') >= 0 || name.indexOf('\0') >= 0
						|| entry.getValue().indexOf('\0') >= 0) {
					throw new IllegalArgumentException("invalid native environment variable '" + name + "'");
				}
				int rc = (int) setenv.invokeExact(arena.allocateFrom(name), arena.allocateFrom(entry.getValue()), 1);
				if (rc != 0) {
					throw unavailable("setenv(" + name + ") failed", null);
				}
			}
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Throwable ex) {
			throw unavailable("setenv failed: " + ex, ex);
		}
	}

	/**
	 * Reads the variables NIXL reads when it creates an agent ({@link #AGENT_VARIABLES}),
	 * through libc, so that {@link #restoreAgentVariables} can put them back once the
	 * agent exists.
	 * @return each variable's value, empty where it is not set
	 */
	static Map<String, Optional<String>> agentVariables() {
		requireNativeAccess();
		Linker linker = Linker.nativeLinker();
		MethodHandle getenv = linker.downcallHandle(linker.defaultLookup().findOrThrow("getenv"),
				FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS));
		Map<String, Optional<String>> values = new LinkedHashMap<>();
		try (Arena arena = Arena.ofConfined()) {
			for (String name : AGENT_VARIABLES) {
				MemorySegment value = (MemorySegment) getenv.invokeExact(arena.allocateFrom(name));
				values.put(name, value.equals(MemorySegment.NULL) ? Optional.empty()
						: Optional.of(value.reinterpret(Integer.MAX_VALUE).getString(0)));
			}
		}
		catch (Throwable ex) {
			throw unavailable("getenv failed: " + ex, ex);
		}
		return values;
	}

	/**
	 * Puts back what {@link #agentVariables} read: an agent's NIXL metadata settings
	 * apply to that agent only, not to every agent created after it.
	 * @param values the values to restore
	 */
	static void restoreAgentVariables(Map<String, Optional<String>> values) {
		Linker linker = Linker.nativeLinker();
		MethodHandle unsetenv = linker.downcallHandle(linker.defaultLookup().findOrThrow("unsetenv"),
				FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
		Map<String, String> set = new LinkedHashMap<>();
		try (Arena arena = Arena.ofConfined()) {
			for (Map.Entry<String, Optional<String>> entry : values.entrySet()) {
				if (entry.getValue().isPresent()) {
					set.put(entry.getKey(), entry.getValue().get());
				}
				else {
					int ignored = (int) unsetenv.invokeExact(arena.allocateFrom(entry.getKey()));
				}
			}
		}
		catch (Throwable ex) {
			throw unavailable("unsetenv failed: " + ex, ex);
		}
		applyEnvironment(set);
	}

	private static NixlException unavailable(String detail, @Nullable Throwable cause) {
		return new NixlException(NixlStatus.LIBRARY_UNAVAILABLE, "load_library", null, null, detail, cause);
	}

	@Override
	public String toString() {
		return "NIXL " + this.version + " (" + this.path + ", from " + this.source + ")";
	}

}
