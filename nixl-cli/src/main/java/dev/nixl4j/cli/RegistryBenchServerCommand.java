package dev.nixl4j.cli;

import java.io.PrintStream;
import java.security.SecureRandom;
import java.util.HexFormat;

import dev.nixl4j.metadata.http.MetadataHttpServer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code nixl4j registry-bench-server}: the HTTP registry of {@code registry-bench},
 * started by it in a child JVM so that the registry has a process of its own, as it has
 * in a deployment. It serves a {@link MetadataHttpServer} (its own in-memory store, its
 * defaults but for the bounds below) on a free loopback port under a random shared token,
 * prints {@code READY <port> <token>}, and answers {@code QUIT} with {@code BYE}. End of
 * input also ends it.
 */
@Command(name = "registry-bench-server", hidden = true,
		description = "The HTTP registry of 'nixl4j registry-bench', which starts it; not meant to be run by hand.",
		exitCodeList = { "0:ended on QUIT or at the end of its input", "1:a failure", "2:usage error" })
final class RegistryBenchServerCommand extends Subcommand {

	@Option(names = "--max-entries", paramLabel = "N", converter = Counts.AtLeastOne.class, required = true,
			description = "the registry's cap on entries")
	private int maxEntries;

	@Option(names = "--max-total-bytes", paramLabel = "BYTES", converter = ByteSize.class, required = true,
			description = "the registry's cap on the bytes of all entries")
	private long maxTotalBytes;

	@Override
	public Integer call() throws Exception {
		PrintStream out = out();
		byte[] secret = new byte[24];
		new SecureRandom().nextBytes(secret);
		String token = HexFormat.of().formatHex(secret);
		try (MetadataHttpServer server = MetadataHttpServer.builder()
			.token(token)
			.maxEntries(this.maxEntries)
			.maxTotalBytes(this.maxTotalBytes)
			.start()) {
			out.println("READY " + server.port() + " " + token);
			out.flush();
			return serveCommands(out, (command) -> false);
		}
	}

}
