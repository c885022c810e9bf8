package dev.nixl4j.internal.cuda;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.NixlStatus;
import dev.nixl4j.cuda.CudaException;
import dev.nixl4j.internal.ffm.LoaderPath;
import dev.nixl4j.internal.ffm.NativeAccess;
import dev.nixl4j.internal.ffm.PythonEnvironments;
import dev.nixl4j.internal.ffm.TrustedFiles;
import org.jspecify.annotations.Nullable;

/**
 * Finds and loads the CUDA runtime, {@code libcudart}, once per JVM, where Python users
 * have it.
 *
 * <p>
 * Places tried, in order, each labelled in what {@link #source()} and errors report:
 * <ol>
 * <li>system property {@value #LIBRARY_PROPERTY}: the file to load;
 * <li>the CUDA runtime wheels in Python environments ({@code nvidia-cuda-runtime} for
 * CUDA 13, {@code nvidia-cuda-runtime-cu12} for CUDA 12, as PyTorch installs them), in
 * the site-packages directories that NIXL's own search looks at (the active virtual or
 * conda environment first): {@code nvidia/cu13/lib/libcudart.so.13}, then
 * {@code nvidia/cuda_runtime/lib/libcudart.so.12} (the layouts of those wheels);
 * <li>a CUDA toolkit: {@code $CUDA_HOME}, then {@code $CUDA_PATH}, then
 * {@code /usr/local/cuda}, each in {@code lib64/} and {@code targets/<arch>-linux/lib/};
 * <li>the dynamic loader's own places ({@code LD_LIBRARY_PATH}, the {@code ldconfig}
 * cache, the system directories: {@link LoaderPath}): {@code libcudart.so.13},
 * {@code libcudart.so.12}, {@code libcudart.so}, each looked up there by nixl4j and
 * loaded by its path, never handed to {@code dlopen} as a bare name.
 * </ol>
 * Every file is checked before it is loaded ({@link TrustedFiles}): one that another user
 * could have changed, or whose directory another user can write to, is refused with the
 * place and the reason, and the search goes on; the file {@value #LIBRARY_PROPERTY} names
 * is checked too. The first file that loads and exports {@code cudaGetDeviceCount} wins.
 * A file that is there but does not load (not a library, a missing dependency, another
 * architecture) is reported with the loader's reason and the search goes on.
 */
public final class CudaLibrary {

	/** System property naming the {@code libcudart} file to load. */
	public static final String LIBRARY_PROPERTY = "nixl.cuda.library";

	/** The label of the file {@value #LIBRARY_PROPERTY} names. */
	static final String EXPLICIT = "system property " + LIBRARY_PROPERTY;

	/** The label of a name the dynamic loader's places are searched for. */
	static final String LOADER = "dynamic loader";

	private static final System.Logger logger = System.getLogger(CudaLibrary.class.getName());

	/** The runtime's file names, newest CUDA first. */
	static final List<String> FILE_NAMES = List.of("libcudart.so.13", "libcudart.so.12");

	private static @Nullable CudaLibrary loaded;

	private static @Nullable CudaException failure;

	private static List<String> failedAttempts = List.of();

	private final String file;

	private final String source;

	private final List<String> attempts;

	private final SymbolLookup lookup;

	private CudaLibrary(String file, String source, List<String> attempts, SymbolLookup lookup) {
		this.file = file;
		this.source = source;
		this.attempts = List.copyOf(attempts);
		this.lookup = lookup;
	}

	/**
	 * Returns the file loaded: a path, or the name the dynamic loader resolved.
	 * @return the file
	 */
	public String file() {
		return this.file;
	}

	/**
	 * Returns where the library was found, as the search labels it, for example
	 * {@code "Python environment /venv/lib/python3.12/site-packages (nvidia/cu13)"},
	 * {@code "CUDA_HOME"} or {@code "dynamic loader"}.
	 * @return the source
	 */
	public String source() {
		return this.source;
	}

	/**
	 * Returns the places tried before the one that loaded, with why each was refused.
	 * @return the attempts, in order
	 */
	public List<String> attempts() {
		return this.attempts;
	}

	SymbolLookup lookup() {
		return this.lookup;
	}

	/**
	 * Returns the loaded library, if {@link #load()} succeeded.
	 * @return the library or {@code null}
	 */
	static synchronized @Nullable CudaLibrary loadedLibrary() {
		return loaded;
	}

	/**
	 * Loads the runtime from the {@linkplain Search#defaults() default places}, or
	 * returns the one loaded earlier. A failure is remembered: the same JVM does not
	 * search again.
	 * @return the library
	 * @throws CudaException {@link NixlStatus#LIBRARY_UNAVAILABLE} listing every place
	 * tried, or {@link NixlStatus#NATIVE_ACCESS_DENIED}
	 */
	public static synchronized CudaLibrary load() {
		if (loaded != null) {
			return loaded;
		}
		if (failure != null) {
			throw failure;
		}
		List<String> attempts = new ArrayList<>();
		try {
			loaded = load(Search.defaults(), attempts);
			return loaded;
		}
		catch (CudaException ex) {
			failure = ex;
			failedAttempts = List.copyOf(attempts);
			throw ex;
		}
	}

	/**
	 * Returns the places {@link #load()} tried when it failed, with why each was refused.
	 * @return the attempts, empty unless the load failed
	 */
	public static synchronized List<String> failedAttempts() {
		return failedAttempts;
	}

	/**
	 * Loads the runtime from the given places, without remembering the outcome.
	 * @param search where to look
	 * @return the library
	 * @throws CudaException {@link NixlStatus#LIBRARY_UNAVAILABLE} listing every place
	 * tried, or {@link NixlStatus#NATIVE_ACCESS_DENIED}
	 */
	public static CudaLibrary load(Search search) {
		return load(search, new ArrayList<>());
	}

	private static CudaLibrary load(Search search, List<String> attempts) {
		if (NativeAccess.current() == NativeAccess.DENIED) {
			throw new CudaException(NixlStatus.NATIVE_ACCESS_DENIED, "load_cudart",
					"the JVM denies native access to nixl4j, which it needs to call CUDA: "
							+ NativeAccess.howToEnable(),
					CudaException.NO_CUDA_ERROR, null);
		}
		TrustedFiles trust = TrustedFiles.forThisProcess();
		for (Place place : search.places()) {
			Path path = place.path();
			if (path != null) {
				if (!Files.exists(path)) {
					attempts.add(place.label() + " " + path + ": no such file");
					continue;
				}
				CudaLibrary library = tryFile(trust, place.label(), place.label() + " " + path, path,
						setting(place.label()), attempts);
				if (library != null) {
					return library;
				}
				continue;
			}
			// A bare name is resolved here, not by dlopen: the loader would run the
			// constructors of the first file it finds before anything could check it.
			List<LoaderPath.Found> found = search.loaderPath().find(place.name());
			if (found.isEmpty()) {
				attempts.add(place.label() + " " + place.name() + ": not on the loader's path");
				continue;
			}
			for (LoaderPath.Found file : found) {
				CudaLibrary library = tryFile(trust, place.label() + " (" + file.origin() + ")",
						place.label() + " " + place.name() + " (" + file.origin() + ") " + file.file(), file.file(),
						file.origin().equals("LD_LIBRARY_PATH") ? "LD_LIBRARY_PATH" : null, attempts);
				if (library != null) {
					return library;
				}
			}
		}
		throw new CudaException(NixlStatus.LIBRARY_UNAVAILABLE, "load_cudart", "the CUDA runtime (libcudart) was not "
				+ "found. Tried:\n  - " + String.join("\n  - ", attempts) + "\nTo install it: pip install "
				+ "nvidia-cuda-runtime (CUDA 13) or nvidia-cuda-runtime-cu12 into the active Python environment, set "
				+ "CUDA_HOME to a CUDA toolkit, or set -D" + LIBRARY_PROPERTY + " to the libcudart file",
				CudaException.NO_CUDA_ERROR, null);
	}

	/**
	 * The setting that names a place, for a refusal to say: explicit places are checked
	 * too.
	 */
	private static @Nullable String setting(String label) {
		if (label.equals(EXPLICIT)) {
			return "-D" + LIBRARY_PROPERTY;
		}
		return (label.equals("CUDA_HOME") || label.equals("CUDA_PATH")) ? label : null;
	}

	/**
	 * Checks a file by the rule of {@link TrustedFiles}, then loads it: the library, or
	 * {@code null} with why not added to the attempts.
	 */
	private static @Nullable CudaLibrary tryFile(TrustedFiles trust, String source, String described, Path path,
			@Nullable String setting, List<String> attempts) {
		TrustedFiles.Refusal refusal = trust.library(path);
		if (refusal != null) {
			String why = (setting != null) ? trust.refusedConfigured(refusal, setting) : trust.refused(refusal);
			logger.log(Level.WARNING, "Not loading the CUDA runtime {0}: {1}", path, why);
			attempts.add(described + ": " + why);
			return null;
		}
		SymbolLookup lookup;
		try {
			lookup = SymbolLookup.libraryLookup(path, Arena.global());
		}
		catch (IllegalArgumentException ex) {
			attempts.add(described + ": cannot be loaded (" + ex.getMessage() + ")");
			return null;
		}
		if (lookup.find("cudaGetDeviceCount").isEmpty()) {
			attempts.add(described + ": not the CUDA runtime (no cudaGetDeviceCount)");
			return null;
		}
		return new CudaLibrary(path.toString(), source, attempts, lookup);
	}

	/**
	 * A place to try: a file, or (when {@code path} is {@code null}) a name for the
	 * dynamic loader to resolve.
	 *
	 * @param label where the place came from, as reports name it
	 * @param path the file, or {@code null}
	 * @param name the name for the loader, when {@code path} is {@code null}
	 */
	public record Place(String label, @Nullable Path path, String name) {

		static Place file(String label, Path path) {
			return new Place(label, path, path.getFileName().toString());
		}

		static Place loader(String name) {
			return new Place(LOADER, null, name);
		}

	}

	/**
	 * Where to look, as inputs, so that a test can give a layout of its own.
	 *
	 * @param explicit the file named by {@value #LIBRARY_PROPERTY}, or {@code null}
	 * @param sitePackages Python site-packages directories, in order
	 * @param toolkits CUDA toolkit directories, label to directory, in order
	 * @param loaderNames names for the dynamic loader, in order
	 * @param loaderPath where the loader's names are looked for
	 */
	public record Search(@Nullable Path explicit, List<Path> sitePackages, List<Toolkit> toolkits,
			List<String> loaderNames, LoaderPath loaderPath) {

		/**
		 * A search over the loader's places of this process.
		 * @param explicit the file named by {@value CudaLibrary#LIBRARY_PROPERTY}, or
		 * {@code null}
		 * @param sitePackages Python site-packages directories, in order
		 * @param toolkits CUDA toolkit directories, label to directory, in order
		 * @param loaderNames names for the dynamic loader, in order
		 */
		public Search(@Nullable Path explicit, List<Path> sitePackages, List<Toolkit> toolkits,
				List<String> loaderNames) {
			this(explicit, sitePackages, toolkits, loaderNames, LoaderPath.ofThisProcess());
		}

		/**
		 * The places nixl4j looks by default, from the system property, the environment
		 * and the file system.
		 * @return the search
		 */
		public static Search defaults() {
			String property = System.getProperty(LIBRARY_PROPERTY);
			Path explicit = (property != null && !property.isBlank()) ? Path.of(property) : null;
			List<Toolkit> toolkits = new ArrayList<>();
			for (String variable : List.of("CUDA_HOME", "CUDA_PATH")) {
				String value = System.getenv(variable);
				if (value != null && !value.isBlank()) {
					toolkits.add(new Toolkit(variable, Path.of(value)));
				}
			}
			toolkits.add(new Toolkit("/usr/local/cuda", Path.of("/usr/local/cuda")));
			return new Search(explicit, PythonEnvironments.sitePackages(), toolkits,
					List.of("libcudart.so.13", "libcudart.so.12", "libcudart.so"));
		}

		/**
		 * Lists the places to try, in order.
		 * @return the places
		 */
		public List<Place> places() {
			List<Place> places = new ArrayList<>();
			if (this.explicit != null) {
				places.add(Place.file(EXPLICIT, this.explicit));
			}
			for (Path directory : this.sitePackages) {
				String label = "Python environment " + directory;
				places.add(Place.file(label + " (nvidia/cu13)", directory.resolve("nvidia/cu13/lib/libcudart.so.13")));
				places.add(Place.file(label + " (nvidia/cuda_runtime)",
						directory.resolve("nvidia/cuda_runtime/lib/libcudart.so.12")));
			}
			String arch = System.getProperty("os.arch", "").equals("aarch64") ? "sbsa" : "x86_64";
			for (Toolkit toolkit : this.toolkits) {
				for (Path lib : List.of(toolkit.directory().resolve("lib64"),
						toolkit.directory().resolve("targets").resolve(arch + "-linux").resolve("lib"))) {
					for (String name : FILE_NAMES) {
						places.add(Place.file(toolkit.label(), lib.resolve(name)));
					}
				}
			}
			for (String name : this.loaderNames) {
				places.add(Place.loader(name));
			}
			return places;
		}

	}

	/**
	 * A CUDA toolkit directory to look in.
	 *
	 * @param label where it came from, for example {@code CUDA_HOME}
	 * @param directory the toolkit's root
	 */
	public record Toolkit(String label, Path directory) {
	}

}
