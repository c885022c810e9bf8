package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Stand-in libraries for the tests of where native code may load from: shared objects
 * built with {@code cc} whose constructor appends a line to a marker file, so that a test
 * sees whether the dynamic loader ever opened them. They export
 * {@code nixl_capi_create_configured_agent} and {@code cudaGetDeviceCount} (answering no
 * device), enough to pass for NIXL's C API or the CUDA runtime.
 */
final class StandIns {

	/** The uid another user's files get: {@code nobody}. */
	static final int NOBODY = 65534;

	private StandIns() {
	}

	/**
	 * Builds a stand-in library. Without a C compiler the test is skipped, and fails in
	 * CI ({@code CI=true}), where the compiler is required.
	 * @param library the file to write
	 * @param marker the file its constructor appends to when it is loaded
	 * @throws Exception when it cannot be built
	 */
	static void compile(Path library, Path marker) throws Exception {
		Files.createDirectories(library.getParent());
		Path source = Files.createTempFile(marker.getParent(), "stand-in-", ".c");
		Files.writeString(source, """
				#include <stdio.h>
				__attribute__((constructor)) static void nixl4j_stand_in_loaded(void) {
					FILE *marker = fopen("%s", "a");
					if (marker != NULL) {
						fputs("constructor ran\\n", marker);
						fclose(marker);
					}
				}
				int nixl_capi_create_configured_agent(const char *n, const void *c, void **a) { return -4; }
				int cudaGetDeviceCount(int *count) { *count = 0; return 100; }
				""".formatted(marker));
		List<String> command = new ArrayList<>(
				List.of("cc", "-shared", "-fPIC", "-o", library.toString(), source.toString()));
		Process cc;
		try {
			cc = new ProcessBuilder(command).inheritIO().start();
		}
		catch (IOException ex) {
			String message = "no C compiler (cc) to build the stand-in libraries: " + ex.getMessage();
			if ("true".equalsIgnoreCase(System.getenv("CI"))) {
				throw new AssertionError(message + "; it is required in CI", ex);
			}
			Assumptions.abort(message);
			return;
		}
		assertThat(cc.waitFor(60, TimeUnit.SECONDS)).isTrue();
		assertThat(cc.exitValue()).as("cc " + library).isZero();
		Files.setPosixFilePermissions(library, PosixFilePermissions.fromString("rwxr-xr-x"));
	}

	/**
	 * Whether this process runs as root, which alone can give files to another user.
	 * @return whether it does
	 */
	static boolean root() {
		try {
			return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Makes a hostile tree: every directory writable by everyone (mode 777), and, when
	 * this process is root, everything owned by another user.
	 * @param root the tree
	 * @throws IOException when it cannot be changed
	 */
	static void giveAway(Path root) throws IOException {
		List<Path> entries;
		try (Stream<Path> walk = Files.walk(root)) {
			entries = walk.toList();
		}
		for (Path entry : entries) {
			if (Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS)) {
				Files.setPosixFilePermissions(entry, PosixFilePermissions.fromString("rwxrwxrwx"));
			}
			if (root()) {
				Files.setAttribute(entry, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
			}
		}
	}

	/**
	 * The reason a tree given away is refused for: another owner when this process could
	 * give it one, else everyone's write permission.
	 * @return the start of the reason
	 */
	static String givenAwayReason() {
		return root() ? "is owned by another user (uid " + NOBODY : "is writable by every user";
	}

}
