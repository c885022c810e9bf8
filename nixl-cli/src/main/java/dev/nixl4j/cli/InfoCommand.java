package dev.nixl4j.cli;

import java.io.PrintStream;
import java.util.TreeMap;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.Engine;
import dev.nixl4j.NativeLibraryInfo;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.PluginInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code nixl4j info}: which NIXL is loaded from where, and what each of its plugins
 * offers.
 */
@Command(name = "info", description = {
		"NIXL library path and version, plugins with their parameters and memory types.", "",
		"Loads NIXL's native library and prints its path and version, the plugin directory, and for every "
				+ "plugin its default parameters and memory types, or why it cannot be loaded here (the dynamic "
				+ "loader's own message)." },
		exitCodeList = { "0:printed", "1:a failure while reading the plugins", "2:usage error",
				"3:NIXL's native library cannot be loaded" })
final class InfoCommand extends Subcommand {

	@Mixin
	private NativeOptions nativeOptions = new NativeOptions();

	@Override
	public Integer call() {
		PrintStream out = out();
		AgentConfig config = this.nativeOptions
			.apply(AgentConfig.builder("nixl4j-info-" + ProcessHandle.current().pid()))
			.engine(Engine.NATIVE)
			.backends()
			.build();
		try (NixlAgent agent = NixlAgent.create(config)) {
			NativeLibraryInfo library = agent.nativeLibrary()
				.orElseThrow(() -> new IllegalStateException("a native agent without a native library"));
			out.println("NIXL " + library.version());
			out.println("library: " + library.path());
			out.println("loaded from: " + library.source());
			out.println("plugin directory: " + library.pluginDirectory());
			if (!config.nativeEnvironment().isEmpty()) {
				out.println("native environment: " + new TreeMap<>(config.nativeEnvironment()));
			}
			out.println("plugins:");
			for (String plugin : agent.availablePlugins()) {
				out.println("  " + describe(agent, plugin));
			}
			CudaLines.print(out);
		}
		return Nixl4jCli.EXIT_OK;
	}

	private static String describe(NixlAgent agent, String plugin) {
		try {
			PluginInfo info = agent.pluginInfo(plugin);
			return plugin + ": memory types " + info.memoryTypes().stream().sorted().toList() + ", parameters "
					+ new TreeMap<>(info.parameters());
		}
		catch (NixlException ex) {
			return plugin + ": cannot be loaded here: " + ex.getMessage();
		}
	}

}
