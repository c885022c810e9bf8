package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rule for where native code may load from, over real files: owners and mode bits as
 * the tests set them (as root, files are also given to another user), never what
 * {@code access(2)} says, since root may write anywhere.
 */
class TrustedFilesTest {

	@TempDir
	Path dir;

	private final TrustedFiles trust = TrustedFiles.forThisProcess();

	@Test
	void thePlacesNixl4jLoadsFromInCiAndHereAreTrusted() throws IOException {
		Path fetched = NativeFixtures.fetchedNixl();
		Path libraries = fetched.resolve("lib");
		assertThat(this.trust.library(libraries.resolve(NativeLibrary.LIBRARY_FILE))).isNull();
		assertThat(NativeLibrary.refusal(libraries, java.util.Map.of())).isNull();
		assertThat(this.trust.directory(NativeLibrary.cacheDirectory())).isNull();
		// The venv that src/python/install-python-nixl.sh makes, where it is
		Path venv = NativeLibrary.cacheDirectory().resolve("python-venv");
		try (var interpreters = Files.newDirectoryStream(venv.resolve("lib"), "python3*")) {
			for (Path interpreter : interpreters) {
				Path wheel = interpreter.resolve("site-packages/.nixl_cu12.mesonpy.libs");
				if (Files.isDirectory(wheel)) {
					assertThat(NativeLibrary.refusal(wheel, java.util.Map.of())).isNull();
				}
			}
		}
		catch (java.nio.file.NoSuchFileException ex) {
			// no venv here
		}
		// the system's libraries and the JDK's
		for (LoaderPath.Found found : LoaderPath.ofThisProcess().find("libm.so.6")) {
			assertThat(this.trust.library(found.file())).as(found.toString()).isNull();
		}
		Path jdk = Path.of(System.getProperty("java.home"), "lib", "libjava.so");
		assertThat(this.trust.library(jdk)).isNull();
	}

	@Test
	void aLibraryInAPrivateDirectoryUnderTmpIsTrusted() throws IOException {
		// /tmp is sticky and writable by everyone: it may lie above a library's home
		Path library = file(this.dir.resolve("lib/libx.so"));
		assertThat(this.trust.library(library)).isNull();
		assertThat(this.trust.libraryDirectory(library.getParent())).isNull();
	}

	@Test
	void aDirectoryOthersCanWriteToIsRefusedNamingItAndTheMode() throws IOException {
		Path library = file(this.dir.resolve("shared/lib/libx.so"));
		Path shared = library.getParent().getParent();
		mode(shared, "rwxrwxrwx");
		assertThat(this.trust.library(library))
			.hasToString(shared + " is writable by every user and has no sticky " + "bit (mode 777)");
		mode(shared, "rwxrwxr-x");
		assertThat(TrustedFiles.forThisProcess().library(library))
			.hasToString(shared + " is writable by its group and has no sticky bit (mode 775)");
		mode(shared, "rwxr-xr-x");
		mode(library.getParent(), "rwxrwxr-x");
		assertThat(TrustedFiles.forThisProcess().library(library))
			.hasToString(library.getParent() + " is writable by its group (mode 775)");
	}

	@Test
	void aStickyDirectoryMayLieAboveALibraryButNeverHoldIt() throws IOException {
		Path sticky = Files.createDirectories(this.dir.resolve("sticky"));
		Path below = file(sticky.resolve("private/libx.so"));
		Path inside = file(sticky.resolve("libx.so"));
		mode(sticky, "rwxrwxrwt");
		assertThat(this.trust.library(below)).isNull();
		assertThat(TrustedFiles.forThisProcess().library(inside)).hasToString(sticky + " is writable by every user "
				+ "(mode 1777): the sticky bit does not help where libraries are, since anyone could add one beside them");
	}

	@Test
	void aLibraryOthersCanWriteIsRefused() throws IOException {
		Path library = file(this.dir.resolve("lib/libx.so"));
		mode(library, "rw-rw-rw-");
		assertThat(this.trust.library(library)).hasToString(library + " is writable by every user (mode 666)");
		mode(library, "rw-rw-r--");
		assertThat(this.trust.library(library)).hasToString(library + " is writable by its group (mode 664)");
	}

	@Test
	void aLinkIsFollowedAndWhereItLeadsIsCheckedToo() throws IOException {
		Path target = file(this.dir.resolve("elsewhere/lib/libx.so"));
		Path home = Files.createDirectories(this.dir.resolve("home"));
		Path link = Files.createSymbolicLink(home.resolve("libx.so"), target);
		Path linkedDirectory = Files.createSymbolicLink(this.dir.resolve("linked"), target.getParent());
		assertThat(this.trust.library(link)).isNull();
		assertThat(this.trust.library(linkedDirectory.resolve("libx.so"))).isNull();
		mode(target.getParent().getParent(), "rwxrwxrwx");
		TrustedFiles fresh = TrustedFiles.forThisProcess();
		assertThat(fresh.library(link)).hasToString(
				target.getParent().getParent() + " is writable by every user and " + "has no sticky bit (mode 777)");
		assertThat(fresh.library(linkedDirectory.resolve("libx.so"))).isNotNull();
	}

	@Test
	void aDirectoryThatDoesNotExistIsTrustedOnlyWhereNobodyElseCouldCreateIt() throws IOException {
		Path parent = Files.createDirectories(this.dir.resolve("parent"));
		assertThat(this.trust.libraryDirectory(parent.resolve("plugins"))).isNull();
		mode(parent, "rwxrwxrwt");
		assertThat(TrustedFiles.forThisProcess().libraryDirectory(parent.resolve("plugins"))).hasToString(
				parent + " is writable by every user (mode 1777): the sticky bit does not help where libraries "
						+ "are, since anyone could add one beside them");
	}

	@Test
	void everySharedObjectInALibraryDirectoryIsChecked() throws IOException {
		Path plugins = Files.createDirectories(this.dir.resolve("plugins"));
		file(plugins.resolve("libplugin_A.so"));
		Path other = file(plugins.resolve("libplugin_B.so"));
		Files.writeString(plugins.resolve("README"), "not a library");
		mode(plugins.resolve("README"), "rw-rw-rw-");
		assertThat(this.trust.libraryDirectory(plugins)).isNull();
		mode(other, "rw-rw-rw-");
		assertThat(TrustedFiles.forThisProcess().libraryDirectory(plugins))
			.hasToString(other + " is writable by every user (mode 666)");
	}

	@Test
	void filesDirectoriesAndLinksOfAnotherUserAreRefused() throws IOException {
		requireRoot();
		Path library = file(this.dir.resolve("theirs/lib/libx.so"));
		Path theirs = library.getParent().getParent();
		owner(theirs, StandIns.NOBODY);
		assertThat(this.trust.library(library)).hasToString(theirs + " is owned by another user (uid 65534; only root "
				+ "or this process's user (uid 0) may own it)");
		owner(theirs, 0);
		owner(library, StandIns.NOBODY);
		assertThat(TrustedFiles.forThisProcess().library(library)).hasToString(
				library + " is owned by another user (uid 65534; only root or this process's user (uid 0) may own it)");
		owner(library, 0);
		// In a sticky directory the owner of a link may swap it for another
		Path sticky = Files.createDirectories(this.dir.resolve("sticky"));
		mode(sticky, "rwxrwxrwt");
		Path link = Files.createSymbolicLink(sticky.resolve("lib"), library.getParent());
		owner(link, StandIns.NOBODY);
		assertThat(TrustedFiles.forThisProcess().library(link.resolve("libx.so"))).hasToString(link
				+ " is a symbolic link owned by another user (uid 65534; only root or this process's user (uid 0) may "
				+ "own it)");
	}

	@Test
	void whenThisProcesssUserIsUnknownOnlyRootIsTrusted() throws IOException {
		requireRoot();
		Path library = file(this.dir.resolve("lib/libx.so"));
		assertThat(TrustedFiles.forUid(-1).library(library)).isNull();
		owner(library.getParent(), StandIns.NOBODY);
		assertThat(TrustedFiles.forUid(-1).library(library)).hasToString(library.getParent() + " is owned by another "
				+ "user (uid 65534; this process's user cannot be read from /proc/self, so only root may own it)");
	}

	private static Path file(Path path) throws IOException {
		Files.createDirectories(path.getParent());
		for (Path directory = path.getParent(); directory != null && !directory.equals(path.getRoot())
				&& directory.toString().length() > 1; directory = directory.getParent()) {
			if (directory.getFileName().toString().startsWith("junit")) {
				break;
			}
			mode(directory, "rwxr-xr-x");
		}
		Files.writeString(path, "a stand-in: the rule reads owners and modes, not contents");
		mode(path, "rw-r--r--");
		return path;
	}

	private static void mode(Path path, String mode) throws IOException {
		if (mode.endsWith("t")) {
			// sticky: PosixFilePermission has no bit for it
			Files.setAttribute(path, "unix:mode",
					01000 | PosixFilePermissions.fromString(mode.substring(0, 8) + "x")
						.stream()
						.mapToInt((permission) -> 0400 >> permission.ordinal())
						.sum());
			return;
		}
		Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
	}

	private static void owner(Path path, int uid) throws IOException {
		Files.setAttribute(path, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
	}

	private static void requireRoot() {
		if (!StandIns.root()) {
			String message = "giving files to another user needs root";
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError(message);
			}
			Assumptions.abort(message);
		}
	}

}
