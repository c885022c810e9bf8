package dev.nixl4j.internal.cuda;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.cuda.UcxCudaSupport;
import dev.nixl4j.internal.ffm.LoaderPath;
import dev.nixl4j.internal.ffm.NativeAccess;
import dev.nixl4j.internal.ffm.NativeLibrary;
import dev.nixl4j.internal.ffm.TrustedFiles;
import org.jspecify.annotations.Nullable;

/**
 * Checks UCX's CUDA modules beside a NIXL library. NIXL's wheels (and nixl4j's native
 * artifact, unpacked from them) keep UCX's modules in {@code nixl_cu<N>.libs/ucx/},
 * beside the directory of {@code libnixl_capi.so}: {@code lib/} in the artifact,
 * {@code .nixl_cu<N>.mesonpy.libs/} in a Python environment. Each module, and each
 * library they need from the driver, is checked before it is loaded
 * ({@link TrustedFiles}).
 */
final class UcxCudaModules {

	/** What the CUDA modules need from the GPU driver, besides the CUDA runtime. */
	private static final List<String> DRIVER_LIBRARIES = List.of("libcuda.so.1", "libnvidia-ml.so.1");

	private UcxCudaModules() {
	}

	/**
	 * Checks the modules beside the NIXL library nixl4j loaded.
	 * @return the result
	 */
	static UcxCudaSupport check() {
		NativeLibrary library = NativeLibrary.loadedLibrary();
		if (library == null) {
			return new UcxCudaSupport(List.of(), false, List.of(), "NIXL's native library is not loaded");
		}
		return check(library.path());
	}

	/**
	 * Checks the modules beside a NIXL library.
	 * @param capi the path of {@code libnixl_capi.so}
	 * @return the result
	 */
	static UcxCudaSupport check(Path capi) {
		Path root = capi.toAbsolutePath().getParent();
		root = (root != null) ? root.getParent() : null;
		if (root == null) {
			return new UcxCudaSupport(List.of(), false, List.of(), "no directory above " + capi);
		}
		List<Path> modules = new ArrayList<>();
		int cudaMajor = 0;
		try (DirectoryStream<Path> bundles = Files.newDirectoryStream(root, "nixl_cu*.libs")) {
			for (Path bundle : bundles) {
				String name = bundle.getFileName().toString();
				cudaMajor = major(name.substring("nixl_cu".length(), name.length() - ".libs".length()));
				modules.addAll(modules(bundle.resolve("ucx")));
			}
		}
		catch (IOException | SecurityException ex) {
			return new UcxCudaSupport(List.of(), false, List.of(), "cannot list " + root + ": " + ex.getMessage());
		}
		if (modules.isEmpty()) {
			return new UcxCudaSupport(List.of(), false, List.of(),
					"no UCX CUDA modules (libuct_cuda*.so, libucm_cuda.so) in " + root + "/nixl_cu*.libs/ucx");
		}
		if (NativeAccess.current() == NativeAccess.DENIED) {
			return new UcxCudaSupport(modules, false, List.of(), "the JVM denies nixl4j native access");
		}
		TrustedFiles trust = TrustedFiles.forThisProcess();
		List<String> refused = new ArrayList<>();
		List<String> failed = new ArrayList<>();
		for (Path module : modules) {
			TrustedFiles.Refusal refusal = trust.library(module);
			if (refusal != null) {
				refused.add(module.getFileName() + " (" + trust.refused(refusal) + ")");
				continue;
			}
			try (Arena arena = Arena.ofConfined()) {
				SymbolLookup.libraryLookup(module, arena);
			}
			catch (IllegalArgumentException ex) {
				failed.add(module.getFileName().toString());
			}
		}
		if (!refused.isEmpty()) {
			return new UcxCudaSupport(modules, false, List.of(), "not loaded: " + String.join(", ", refused));
		}
		if (failed.isEmpty()) {
			return new UcxCudaSupport(modules, true, List.of(), null);
		}
		List<String> needed = new ArrayList<>(DRIVER_LIBRARIES);
		if (cudaMajor > 0) {
			needed.add("libcudart.so." + cudaMajor);
		}
		LoaderPath loaderPath = LoaderPath.ofThisProcess();
		List<String> missing = new ArrayList<>();
		for (String name : needed) {
			if (!loads(trust, loaderPath, name)) {
				missing.add(name);
			}
		}
		return new UcxCudaSupport(modules, false, missing,
				"the loader refused " + String.join(", ", failed) + "; check them with ldd");
	}

	private static List<Path> modules(Path ucx) {
		List<Path> modules = new ArrayList<>();
		try (DirectoryStream<Path> entries = Files.newDirectoryStream(ucx, "lib{uct_cuda,ucm_cuda}*.so*")) {
			for (Path entry : entries) {
				modules.add(entry);
			}
		}
		catch (IOException | SecurityException ex) {
			// no ucx directory: no modules
		}
		modules.sort(null);
		return modules;
	}

	/**
	 * Whether a library the modules need loads from the loader's places: looked up there
	 * and checked first ({@link TrustedFiles}), then loaded by its path, never as a bare
	 * name.
	 */
	private static boolean loads(TrustedFiles trust, LoaderPath loaderPath, String name) {
		for (LoaderPath.Found found : loaderPath.find(name)) {
			if (trust.library(found.file()) != null) {
				continue;
			}
			try (Arena arena = Arena.ofConfined()) {
				SymbolLookup.libraryLookup(found.file(), arena);
				return true;
			}
			catch (IllegalArgumentException ex) {
				// the next file
			}
		}
		return false;
	}

	private static int major(@Nullable String text) {
		try {
			return (text == null) ? 0 : Integer.parseInt(text);
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

}
