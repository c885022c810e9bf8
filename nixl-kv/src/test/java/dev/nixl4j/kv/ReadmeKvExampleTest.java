package dev.nixl4j.kv;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.metadata.InMemoryMetadataExchange;
import dev.nixl4j.metadata.MetadataExchange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README.md's plain-Java KV example, as a user copies it: at most six nixl4j types and
 * twenty lines, compiled with javac and run between two embedded agents through an
 * in-memory exchange (the agents and the exchange are the example's free variables).
 */
@Timeout(120)
class ReadmeKvExampleTest {

	private static final String SECTION = "### KV-cache blocks under leases";

	/** The packages a user of the KV layer imports from. */
	private static final List<String> PACKAGES = List.of("dev.nixl4j", "dev.nixl4j.kv", "dev.nixl4j.metadata",
			"dev.nixl4j.metadata.http", "dev.nixl4j.connect", "dev.nixl4j.cuda");

	@TempDir
	Path temp;

	@Test
	void theExampleNamesAtMostSixTypesInTwentyLines() throws IOException {
		String example = example();
		long lines = example.lines().filter((line) -> !line.isBlank()).count();
		Set<String> types = nixlTypes(example);
		System.out.printf("README's KV example: %d lines, %d nixl4j types %s%n", lines, types.size(), types);
		assertThat(lines).as("lines of the example\n%s", example).isLessThanOrEqualTo(20);
		assertThat(types).as("nixl4j types the example names").hasSizeBetween(1, 6);
	}

	@Test
	void theExampleCompilesAndMovesTheBlocks() throws Exception {
		String example = example();
		String source = """
				import java.lang.foreign.*;
				import java.time.Duration;
				import dev.nixl4j.*;
				import dev.nixl4j.kv.*;
				import dev.nixl4j.metadata.*;

				public class ReadmeKvExample {
					public static void run(NixlAgent prefillAgent, NixlAgent decodeAgent, MetadataExchange exchange)
							throws Exception {
				%s
					}
				}
				""".formatted(example);
		Path sources = Files.createDirectories(this.temp.resolve("src"));
		Path classes = Files.createDirectories(this.temp.resolve("classes"));
		Path file = Files.writeString(sources.resolve("ReadmeKvExample.java"), source);
		JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
		int status = javac.run(null, null, null, "-d", classes.toString(), "-cp", System.getProperty("java.class.path"),
				file.toString());
		assertThat(status).as("javac of README's example\n%s", source).isZero();
		try (URLClassLoader loader = new URLClassLoader(new URL[] { classes.toUri().toURL() },
				getClass().getClassLoader());
				MetadataExchange exchange = new InMemoryMetadataExchange();
				NixlAgent prefill = agent("readme-prefill");
				NixlAgent decode = agent("readme-decode")) {
			Method run = loader.loadClass("ReadmeKvExample")
				.getMethod("run", NixlAgent.class, NixlAgent.class, MetadataExchange.class);
			try {
				run.invoke(null, prefill, decode, exchange);
			}
			catch (InvocationTargetException ex) {
				throw new AssertionError("README's example failed", ex.getCause());
			}
		}
	}

	private static NixlAgent agent(String name) {
		return NixlAgent.create(AgentConfig.builder(name + "-" + System.nanoTime()).engine(Engine.EMBEDDED).build());
	}

	/** The first Java block of README's KV section. */
	private static String example() throws IOException {
		String readme = Files.readString(readme());
		int section = readme.indexOf(SECTION);
		assertThat(section).as("README has a section '%s'", SECTION).isNotNegative();
		int start = readme.indexOf("```java\n", section);
		int end = readme.indexOf("```", start + 8);
		assertThat(start).as("a java block in README's KV section").isPositive();
		return readme.substring(start + 8, end);
	}

	private static Path readme() {
		Path dir = Path.of("").toAbsolutePath();
		while (dir != null) {
			if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("nixl-kv"))) {
				return dir.resolve("README.md");
			}
			dir = dir.getParent();
		}
		throw new AssertionError("no README.md above " + Path.of("").toAbsolutePath());
	}

	private static Set<String> nixlTypes(String example) {
		Set<String> types = new TreeSet<>();
		Matcher identifiers = Pattern.compile("\\b[A-Z][A-Za-z0-9]*\\b").matcher(example.replaceAll("//.*", ""));
		while (identifiers.find()) {
			for (String pkg : PACKAGES) {
				try {
					Class.forName(pkg + "." + identifiers.group(), false, ReadmeKvExampleTest.class.getClassLoader());
					types.add(identifiers.group());
				}
				catch (ClassNotFoundException ex) {
					// not a type of that package
				}
			}
		}
		return types;
	}

}
