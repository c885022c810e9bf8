package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import org.jspecify.annotations.Nullable;

/**
 * The one rule for where nixl4j lets the dynamic loader open native code: NIXL's
 * libraries and plugins, UCX's modules, the CUDA runtime, and the cache the native
 * artifact is extracted into. A library is loaded only when no user but root and this
 * process's own could have changed it, or could change it before it loads:
 * <ul>
 * <li>the file is a regular file, owned by root or this process's user, not writable by
 * its group or by others;
 * <li>the directory that holds it, as named and after symbolic links are resolved, is
 * owned by root or this process's user and not writable by its group or by others, with
 * or without the sticky bit: anyone who may add a file there could add a library the
 * loaded one finds beside it ({@code $ORIGIN} in its run path, a plugin), so {@code /tmp}
 * is never a library's home;
 * <li>every directory above, up to {@code /}, and every directory on the way to a
 * symbolic link's target, is owned by root or this process's user and is not writable by
 * its group or by others unless it has the sticky bit (as {@code /tmp} has): there only
 * an entry's owner may rename or remove the entry, and every entry on the way is owned by
 * root or this process's user;
 * <li>every symbolic link on the way is owned by root or this process's user.
 * </ul>
 * The rule reads owners and mode bits, never {@code access(2)}: root may write anywhere,
 * so the question is who else could. ACL entries that grant write show in the group bits
 * (the ACL mask), so they are refused too. A directory that does not exist yet is trusted
 * only when nobody else could create it: its nearest existing parent must pass as a
 * library's home.
 *
 * <p>
 * A checker remembers the directories it checked; make one for each search.
 */
public final class TrustedFiles {

	/** Where the rule is described for operators, quoted in refusals. */
	public static final String DOCUMENTED = "docs/operations.md, \"Native libraries: which NIXL runs, and from where\"";

	private static final int STICKY = 01000;

	private static final int GROUP_WRITE = 0020;

	private static final int OTHER_WRITE = 0002;

	private final int uid;

	private final Map<Path, Optional<Refusal>> ancestors = new HashMap<>();

	private final Map<Path, Optional<Refusal>> homes = new HashMap<>();

	private TrustedFiles(int uid) {
		this.uid = uid;
	}

	/**
	 * Returns a checker for this process's user.
	 * @return the checker
	 */
	public static TrustedFiles forThisProcess() {
		return new TrustedFiles(processUid());
	}

	/**
	 * Returns a checker for a given user, for tests.
	 * @param uid the user, or -1 when unknown (then only root is trusted)
	 * @return the checker
	 */
	static TrustedFiles forUid(int uid) {
		return new TrustedFiles(uid);
	}

	/**
	 * Why a place is refused.
	 *
	 * @param place the file, link or directory at fault
	 * @param problem what is wrong with it, a phrase that follows the path (for example
	 * {@code "is writable by every user (mode 777)"})
	 */
	public record Refusal(Path place, String problem) {

		@Override
		public String toString() {
			return this.place + " " + this.problem;
		}

	}

	/**
	 * Checks a library about to be loaded: the file, the directory that holds it (as
	 * named and as resolved), and every directory and link on the way.
	 * @param file the library
	 * @return {@code null} when it may be loaded, else why not
	 */
	public @Nullable Refusal library(Path file) {
		Path absolute = file.toAbsolutePath();
		Path parent = absolute.getParent();
		if (parent == null) {
			return new Refusal(absolute, "is not a file");
		}
		// The homes first, so that a home is refused as one (no sticky bit helps there).
		Refusal refusal = home(parent);
		if (refusal != null) {
			return refusal;
		}
		Path real;
		try {
			real = absolute.toRealPath();
		}
		catch (IOException | SecurityException ex) {
			return new Refusal(absolute, "cannot be checked (" + ex + ")");
		}
		Path realParent = Objects.requireNonNull(real.getParent());
		refusal = home(realParent);
		if (refusal == null) {
			refusal = chain(absolute);
		}
		return (refusal != null) ? refusal : plainFile(real);
	}

	/**
	 * Checks a directory the loader loads libraries from without nixl4j naming each one
	 * (NIXL's plugin directory, UCX's module directory, the directory a library's run
	 * path names): the directory as a library's home, every directory and link on the
	 * way, and every shared object in it ({@code *.so*}) as a library. A directory that
	 * does not exist counts as trusted when its nearest existing parent does.
	 * @param directory the directory
	 * @return {@code null} when the loader may load from it, else why not
	 */
	public @Nullable Refusal libraryDirectory(Path directory) {
		Path absolute = directory.toAbsolutePath();
		if (!Files.exists(absolute)) {
			Path existing = absolute.getParent();
			while (existing != null && !Files.exists(existing)) {
				existing = existing.getParent();
			}
			if (existing == null) {
				return null;
			}
			Refusal refusal = chain(existing);
			return (refusal != null) ? refusal : home(existing);
		}
		Refusal refusal = chain(absolute);
		if (refusal == null) {
			refusal = home(absolute);
		}
		if (refusal != null) {
			return refusal;
		}
		List<Path> objects = new ArrayList<>();
		try (DirectoryStream<Path> entries = Files.newDirectoryStream(absolute, "*.so*")) {
			entries.forEach(objects::add);
		}
		catch (IOException | SecurityException ex) {
			return new Refusal(absolute, "cannot be listed (" + ex + ")");
		}
		objects.sort(null);
		for (Path object : objects) {
			BasicFileAttributes attributes;
			try {
				attributes = Files.readAttributes(object, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
			}
			catch (IOException | SecurityException ex) {
				return new Refusal(object, "cannot be checked (" + ex + ")");
			}
			if (attributes.isSymbolicLink()) {
				if (Files.isRegularFile(object)) {
					refusal = library(object);
				}
			}
			else if (attributes.isRegularFile()) {
				refusal = plainFile(object);
			}
			if (refusal != null) {
				return refusal;
			}
		}
		return null;
	}

	/**
	 * Checks a directory that lies above libraries but holds none itself (the cache
	 * directory): the directory and everything on the way, where a sticky directory
	 * writable by others is allowed.
	 * @param directory the directory
	 * @return {@code null} when it is trusted, else why not
	 */
	public @Nullable Refusal directory(Path directory) {
		Path absolute = directory.toAbsolutePath();
		Refusal refusal = chain(absolute);
		if (refusal != null) {
			return refusal;
		}
		try {
			return ancestor(absolute.toRealPath());
		}
		catch (IOException | SecurityException ex) {
			return new Refusal(absolute, "cannot be checked (" + ex + ")");
		}
	}

	/**
	 * Checks a directory as the home of libraries, without its entries: it and everything
	 * on the way, where the directory itself may not be writable by others even with the
	 * sticky bit.
	 * @param directory the directory
	 * @return {@code null} when it is trusted, else why not
	 */
	public @Nullable Refusal home(Path directory) {
		Path absolute = directory.toAbsolutePath();
		Optional<Refusal> known = this.homes.get(absolute);
		if (known != null) {
			return known.orElse(null);
		}
		Refusal refusal = chain(absolute);
		if (refusal == null) {
			try {
				Path real = absolute.toRealPath();
				refusal = strict(absolute);
				if (refusal == null && !real.equals(absolute)) {
					refusal = strict(real);
				}
			}
			catch (IOException | SecurityException ex) {
				refusal = new Refusal(absolute, "cannot be checked (" + ex + ")");
			}
		}
		this.homes.put(absolute, Optional.ofNullable(refusal));
		return refusal;
	}

	/**
	 * Checks the file itself: a regular file (links followed) owned by root or this
	 * process's user, writable by nobody else.
	 * @param file the file
	 * @return {@code null} when it is trusted, else why not
	 */
	public @Nullable Refusal plainFile(Path file) {
		try {
			if (!Files.isRegularFile(file)) {
				return new Refusal(file, "is not a regular file");
			}
			int mode = (Integer) Files.getAttribute(file, "unix:mode");
			int owner = (Integer) Files.getAttribute(file, "unix:uid");
			Refusal refusal = owner(file, owner, "");
			if (refusal != null) {
				return refusal;
			}
			if ((mode & OTHER_WRITE) != 0) {
				return new Refusal(file, "is writable by every user (mode " + octal(mode) + ")");
			}
			if ((mode & GROUP_WRITE) != 0) {
				return new Refusal(file, "is writable by its group (mode " + octal(mode) + ")");
			}
			return null;
		}
		catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException ex) {
			return new Refusal(file, "cannot be checked (" + ex + ")");
		}
	}

	/**
	 * Walks a path as the kernel does: every directory above each component and every
	 * symbolic link met, after resolving it, up to the path itself (not checked as a
	 * directory).
	 */
	private @Nullable Refusal chain(Path absolute) {
		Path root = absolute.getRoot();
		if (root == null) {
			return new Refusal(absolute, "is not an absolute path");
		}
		Refusal refusal = ancestor(root);
		if (refusal != null) {
			return refusal;
		}
		Path prefix = root;
		int count = absolute.getNameCount();
		for (int i = 0; i < count; i++) {
			prefix = prefix.resolve(absolute.getName(i));
			boolean last = i == count - 1;
			BasicFileAttributes attributes;
			try {
				attributes = Files.readAttributes(prefix, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
			}
			catch (NoSuchFileException ex) {
				return new Refusal(prefix, "does not exist");
			}
			catch (IOException | SecurityException ex) {
				return new Refusal(prefix, "cannot be checked (" + ex + ")");
			}
			if (attributes.isSymbolicLink()) {
				try {
					refusal = owner(prefix, (Integer) Files.getAttribute(prefix, "unix:uid", LinkOption.NOFOLLOW_LINKS),
							"a symbolic link ");
					if (refusal == null) {
						Path real = prefix.toRealPath();
						Path target = last ? real.getParent() : real;
						refusal = (target != null) ? realChain(target) : null;
					}
				}
				catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException ex) {
					refusal = new Refusal(prefix, "cannot be checked (" + ex + ")");
				}
			}
			else if (!last) {
				if (!attributes.isDirectory()) {
					return new Refusal(prefix, "is not a directory");
				}
				refusal = ancestor(prefix);
			}
			if (refusal != null) {
				return refusal;
			}
		}
		return null;
	}

	/** Checks a resolved directory and every directory above it. */
	private @Nullable Refusal realChain(Path real) {
		List<Path> directories = new ArrayList<>();
		for (Path directory = real; directory != null; directory = directory.getParent()) {
			directories.add(0, directory);
		}
		for (Path directory : directories) {
			Refusal refusal = ancestor(directory);
			if (refusal != null) {
				return refusal;
			}
		}
		return null;
	}

	/**
	 * A directory on the way: owned by root or this user, writable by nobody else unless
	 * sticky. Links are not followed: the caller resolves them.
	 */
	private @Nullable Refusal ancestor(Path directory) {
		Optional<Refusal> known = this.ancestors.get(directory);
		if (known != null) {
			return known.orElse(null);
		}
		Refusal refusal;
		try {
			int mode = (Integer) Files.getAttribute(directory, "unix:mode", LinkOption.NOFOLLOW_LINKS);
			int owner = (Integer) Files.getAttribute(directory, "unix:uid", LinkOption.NOFOLLOW_LINKS);
			refusal = owner(directory, owner, "");
			if (refusal == null && (mode & STICKY) == 0) {
				if ((mode & OTHER_WRITE) != 0) {
					refusal = new Refusal(directory,
							"is writable by every user and has no sticky bit (mode " + octal(mode) + ")");
				}
				else if ((mode & GROUP_WRITE) != 0) {
					refusal = new Refusal(directory,
							"is writable by its group and has no sticky bit (mode " + octal(mode) + ")");
				}
			}
		}
		catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException ex) {
			refusal = new Refusal(directory, "cannot be checked (" + ex + ")");
		}
		this.ancestors.put(directory, Optional.ofNullable(refusal));
		return refusal;
	}

	/** The directory that holds libraries: as {@link #ancestor}, and never sticky. */
	private @Nullable Refusal strict(Path directory) {
		try {
			if (!Files.isDirectory(directory)) {
				return new Refusal(directory, "is not a directory");
			}
			int mode = (Integer) Files.getAttribute(directory, "unix:mode");
			int owner = (Integer) Files.getAttribute(directory, "unix:uid");
			Refusal refusal = owner(directory, owner, "");
			if (refusal != null) {
				return refusal;
			}
			String sticky = ((mode & STICKY) != 0)
					? ": the sticky bit does not help where libraries are, since anyone could add one beside them" : "";
			if ((mode & OTHER_WRITE) != 0) {
				return new Refusal(directory, "is writable by every user (mode " + octal(mode) + ")" + sticky);
			}
			if ((mode & GROUP_WRITE) != 0) {
				return new Refusal(directory, "is writable by its group (mode " + octal(mode) + ")" + sticky);
			}
			return null;
		}
		catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException ex) {
			return new Refusal(directory, "cannot be checked (" + ex + ")");
		}
	}

	private @Nullable Refusal owner(Path path, int owner, String what) {
		if (owner == 0 || owner == this.uid) {
			return null;
		}
		String trusted = (this.uid >= 0) ? "only root or this process's user (uid " + this.uid + ") may own it"
				: "this process's user cannot be read from /proc/self, so only root may own it";
		return new Refusal(path, "is " + what + "owned by another user (uid " + owner + "; " + trusted + ")");
	}

	private static String octal(int mode) {
		return Integer.toOctalString(mode & 07777);
	}

	/**
	 * Says what a refusal means for a place the search found, and how to fix it.
	 * @param refusal the refusal
	 * @return {@code "refused: ..."}
	 */
	public String refused(Refusal refusal) {
		return "refused: " + refusal + "; another user could change what would load from there. nixl4j loads "
				+ "native code only where every directory up to / is owned by root or uid " + this.uid
				+ " and not writable by group or others (" + DOCUMENTED + ")";
	}

	/**
	 * Says what a refusal means for a place the configuration names, and how to fix it:
	 * explicit configuration is checked too.
	 * @param refusal the refusal
	 * @param setting what named the place, for example {@code NIXL_LIB_DIR}
	 * @return {@code "refused: ..."}
	 */
	public String refusedConfigured(Refusal refusal, String setting) {
		return refused(refusal) + "; a place named by " + setting + " is checked like any other: make it owned by "
				+ "root or this user and not writable by others (chown, chmod go-w), or point " + setting
				+ " elsewhere";
	}

	/**
	 * The process's user, as Linux shows it: the owner of {@code /proc/self}.
	 * @return the uid, or -1 when it cannot be read
	 */
	static int processUid() {
		try {
			return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
		}
		catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException ex) {
			return -1;
		}
	}

}
