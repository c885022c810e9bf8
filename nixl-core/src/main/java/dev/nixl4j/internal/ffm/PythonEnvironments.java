package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Finds NIXL installed in Python environments from NIXL's {@code nixl-cu12} and
 * {@code nixl-cu13} wheels (as vLLM and Dynamo containers carry them), by listing
 * directories: no interpreter is started. A wheel puts the libraries in
 * {@code site-packages/.nixl_cu12.mesonpy.libs/} (with {@code plugins/}) and their
 * bundled dependencies in {@code site-packages/nixl_cu12.libs/}, which the libraries find
 * through their {@code $ORIGIN}-relative run path.
 */
public final class PythonEnvironments {

	/** The wheels' flavours, newest CUDA first. */
	private static final List<String> FLAVOURS = List.of("cu13", "cu12");

	/**
	 * At most this many {@code python3*} directories are looked at under one
	 * {@code lib/}.
	 */
	private static final int MAX_INTERPRETERS = 32;

	private PythonEnvironments() {
	}

	/**
	 * An installed wheel.
	 *
	 * @param sitePackages the site-packages (or dist-packages) directory holding it
	 * @param wheel the distribution's name, for example {@code nixl-cu12}
	 * @param libraries the directory holding {@code libnixl_capi.so}
	 * @param version the installed version, from its {@code .dist-info} directory, or
	 * {@code null}
	 */
	record Installation(Path sitePackages, String wheel, Path libraries, @Nullable String version) {
	}

	/**
	 * Lists the site-packages directories looked at, in order: the active virtual
	 * environment ({@code $VIRTUAL_ENV}), the active conda environment
	 * ({@code $CONDA_PREFIX}), the system interpreters' ({@code /usr/local/lib/python3*},
	 * {@code /usr/lib/python3*}) and the user's ({@code ~/.local/lib/python3*}); newer
	 * interpreters first.
	 * @return the directories that exist
	 */
	public static List<Path> sitePackages() {
		Set<Path> directories = new LinkedHashSet<>();
		for (String variable : List.of("VIRTUAL_ENV", "CONDA_PREFIX")) {
			String prefix = System.getenv(variable);
			if (prefix != null && !prefix.isBlank()) {
				addInterpreters(directories, Path.of(prefix, "lib"), "site-packages");
			}
		}
		addInterpreters(directories, Path.of("/usr/local/lib"), "dist-packages", "site-packages");
		addIfDirectory(directories, Path.of("/usr/lib/python3/dist-packages"));
		addInterpreters(directories, Path.of("/usr/lib"), "dist-packages", "site-packages");
		String home = System.getProperty("user.home");
		if (home != null && !home.isBlank()) {
			addInterpreters(directories, Path.of(home, ".local", "lib"), "site-packages");
		}
		return List.copyOf(directories);
	}

	/**
	 * Finds the NIXL wheels installed in the {@linkplain #sitePackages() site-packages
	 * directories}.
	 * @return the installations, in search order
	 */
	static List<Installation> find() {
		List<Installation> found = new ArrayList<>();
		for (Path directory : sitePackages()) {
			for (String flavour : FLAVOURS) {
				Path libraries = directory.resolve(".nixl_" + flavour + ".mesonpy.libs");
				if (Files.isRegularFile(libraries.resolve(NativeLibrary.LIBRARY_FILE))) {
					found.add(new Installation(directory, "nixl-" + flavour, libraries, version(directory, flavour)));
				}
			}
		}
		return found;
	}

	private static void addInterpreters(Set<Path> directories, Path lib, String... kinds) {
		List<Path> interpreters = new ArrayList<>();
		try (DirectoryStream<Path> entries = Files.newDirectoryStream(lib, "python3*")) {
			for (Path entry : entries) {
				if (interpreters.size() >= MAX_INTERPRETERS) {
					break;
				}
				interpreters.add(entry);
			}
		}
		catch (IOException | SecurityException ex) {
			return;
		}
		interpreters.sort(Comparator.comparingInt(PythonEnvironments::minorVersion).reversed());
		for (Path interpreter : interpreters) {
			for (String kind : kinds) {
				addIfDirectory(directories, interpreter.resolve(kind));
			}
		}
	}

	private static int minorVersion(Path interpreter) {
		String name = interpreter.getFileName().toString();
		String minor = name.startsWith("python3.") ? name.substring("python3.".length()) : "";
		try {
			return minor.isEmpty() ? -1 : Integer.parseInt(minor);
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	private static void addIfDirectory(Set<Path> directories, Path directory) {
		if (Files.isDirectory(directory)) {
			directories.add(directory);
		}
	}

	/**
	 * Reads the version from {@code nixl_cu12-<version>.dist-info}, the name pip gives
	 * it.
	 */
	private static @Nullable String version(Path sitePackages, String flavour) {
		String prefix = "nixl_" + flavour + "-";
		try (DirectoryStream<Path> entries = Files.newDirectoryStream(sitePackages, prefix + "*.dist-info")) {
			for (Path entry : entries) {
				String name = entry.getFileName().toString();
				return name.substring(prefix.length(), name.length() - ".dist-info".length());
			}
		}
		catch (IOException | SecurityException ex) {
			// the version is informational
		}
		return null;
	}

}
