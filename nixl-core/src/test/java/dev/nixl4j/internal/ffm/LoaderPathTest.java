package dev.nixl4j.internal.ffm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where the loader would find a library by name, found without loading it: the entries of
 * {@code LD_LIBRARY_PATH} first, then the loader's cache as {@code ldconfig -p} reads it,
 * then the system directories.
 */
class LoaderPathTest {

	@TempDir
	Path dir;

	@Test
	void theCacheIsReadAsLdconfigReadsIt() throws Exception {
		List<String[]> listed = ldconfig();
		String arch = System.getProperty("os.arch");
		String tag = arch.equals("aarch64") ? "(libc6,AArch64)" : "(libc6,x86-64)";
		LoaderPath loaderPath = new LoaderPath(List.of(), Path.of(LoaderPath.CACHE), arch);
		int compared = 0;
		for (String[] entry : listed) {
			if (!entry[1].equals(tag) || compared >= 50) {
				continue;
			}
			assertThat(loaderPath.cached(entry[0])).as(entry[0]).contains(Path.of(entry[2]));
			compared++;
		}
		assertThat(compared).as("entries of this architecture in " + LoaderPath.CACHE).isPositive();
		assertThat(loaderPath.cached("libnixl4j-test-absent.so.99")).isEmpty();
	}

	@Test
	void entriesOfLdLibraryPathComeFirstAndEachFileOnce() throws IOException {
		Path first = Files.createDirectories(this.dir.resolve("first"));
		Path second = Files.createDirectories(this.dir.resolve("second"));
		Files.writeString(second.resolve("libm.so.6"), "a stand-in");
		Path linked = Files.createSymbolicLink(this.dir.resolve("linked"), second);
		LoaderPath loaderPath = new LoaderPath(List.of(first.toString(), second.toString(), linked.toString()),
				Path.of(LoaderPath.CACHE), System.getProperty("os.arch"));
		List<LoaderPath.Found> found = loaderPath.find("libm.so.6");
		assertThat(found.get(0)).isEqualTo(new LoaderPath.Found("LD_LIBRARY_PATH", second.resolve("libm.so.6")));
		assertThat(found).extracting(LoaderPath.Found::file).doesNotContain(linked.resolve("libm.so.6"));
		assertThat(found.subList(1, found.size())).isNotEmpty()
			.allSatisfy((other) -> assertThat(other.origin()).isIn("ld.so.cache", "system directory"));
		assertThat(loaderPath.find("libnixl4j-test-absent.so.99")).isEmpty();
	}

	@Test
	void aCacheThatIsMissingOrInAnUnknownFormatGivesNothing() throws IOException {
		Path unknown = Files.writeString(this.dir.resolve("ld.so.cache"), "not a cache");
		String arch = System.getProperty("os.arch");
		assertThat(new LoaderPath(List.of(), unknown, arch).cached("libm.so.6")).isEmpty();
		assertThat(new LoaderPath(List.of(), this.dir.resolve("absent"), arch).cached("libm.so.6")).isEmpty();
	}

	/** {@code ldconfig -p}: name, tag, path. */
	private static List<String[]> ldconfig() throws Exception {
		Process process;
		try {
			process = new ProcessBuilder(Files.isExecutable(Path.of("/sbin/ldconfig")) ? "/sbin/ldconfig" : "ldconfig",
					"-p")
				.redirectErrorStream(true)
				.start();
		}
		catch (IOException ex) {
			Assumptions.abort("no ldconfig to compare with: " + ex.getMessage());
			return List.of();
		}
		String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
		Pattern line = Pattern.compile("^\\s+(\\S+) (\\([^)]*\\)) => (\\S+)$", Pattern.MULTILINE);
		List<String[]> entries = new ArrayList<>();
		Matcher matcher = line.matcher(output);
		while (matcher.find()) {
			String tag = matcher.group(2);
			// ldconfig adds hardware capabilities to the tag (", hwcap: ...")
			entries.add(new String[] { matcher.group(1), tag, matcher.group(3) });
		}
		return entries;
	}

}
