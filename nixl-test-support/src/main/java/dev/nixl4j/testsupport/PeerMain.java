package dev.nixl4j.testsupport;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;

import dev.nixl4j.readiness.Patterns;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Notification;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Engine;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.AgentConfig;
import dev.nixl4j.BackendConfig;
import dev.nixl4j.ShareableMemory;

/**
 * A peer agent in its own JVM, driven by line commands on stdin; answers on stdout.
 * Started by {@link PeerProcess}. Commands: {@code LOAD <base64 metadata>}, {@code CRC},
 * {@code FILL <seed>}, {@code EXPECT <tag> <millis>}, {@code NOTIFY <agent> <base64
 * message>} (a standalone notification), {@code POLL <prefix>} (takes every notification
 * waiting whose text starts with the prefix, and counts them), {@code QUIT}. At start it
 * prints {@code READY <base64 metadata>
 * <address> <length>}.
 *
 * <p>
 * With the environment variable {@value #SAME_HOST} set to {@code true}, an embedded peer
 * creates its EMBEDDED backend with {@code same_host=true} and registers
 * {@link ShareableMemory} (ordinary memory when {@value #MEMORY} is {@code plain}); with
 * {@value #HOST_IDENTITY} set, it claims that host identity instead of its own.
 */
public final class PeerMain {

	/** The environment variable that turns on the embedded engine's same-host path. */
	public static final String SAME_HOST = "NIXL4J_PEER_SAME_HOST";

	/**
	 * The environment variable that keeps the region in ordinary memory ({@code plain}).
	 */
	public static final String MEMORY = "NIXL4J_PEER_MEMORY";

	/** The environment variable whose value replaces the peer's host identity. */
	public static final String HOST_IDENTITY = "NIXL4J_PEER_HOST_IDENTITY";

	private PeerMain() {
	}

	/**
	 * Runs the peer.
	 * @param args name, region size in bytes, pattern seed, and optionally the engine
	 * (default AUTO)
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		String name = args[0];
		long size = Long.parseLong(args[1]);
		long seed = Long.parseLong(args[2]);
		Engine engine = (args.length > 3) ? Engine.valueOf(args[3]) : Engine.AUTO;
		PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
				StandardCharsets.UTF_8);
		boolean sameHost = "true".equals(System.getenv(SAME_HOST));
		String identity = System.getenv(HOST_IDENTITY);
		if (identity != null) {
			System.setProperty("nixl4j.embedded.host-identity", identity);
		}
		AgentConfig.Builder config = AgentConfig.builder(name).engine(engine);
		if (sameHost) {
			config.backends(new BackendConfig("EMBEDDED", Map.of("same_host", "true")));
		}
		try (Arena arena = Arena.ofShared(); NixlAgent agent = NixlAgent.create(config.build())) {
			MemorySegment region;
			if (sameHost && !"plain".equals(System.getenv(MEMORY))) {
				region = ShareableMemory.allocate(arena, size);
				Bytes.fill(region, seed);
			}
			else {
				region = Bytes.pattern(arena, size, seed);
			}
			agent.register(region);
			out.println("READY " + Base64.getEncoder().encodeToString(agent.localMetadata().toByteArray()) + " "
					+ region.address() + " " + size);
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null) {
				String[] command = line.split(" ");
				switch (command[0]) {
					case "LOAD" -> out.println("LOADED "
							+ agent.loadRemoteMetadata(AgentMetadata.of(Base64.getDecoder().decode(command[1]))));
					case "CRC" -> out.println("CRC " + crc(region));
					case "FILL" -> {
						Bytes.fill(region, Long.parseLong(command[1]));
						out.println("FILLED");
					}
					case "EXPECT" -> {
						try {
							Notification notification = agent
								.expectNotification(NotificationMatcher.exact(null, command[1]),
										Duration.ofMillis(Long.parseLong(command[2])))
								.join();
							out.println("NOTIF " + notification.text() + " " + crc(region));
						}
						catch (RuntimeException ex) {
							out.println("NONE "
									+ Objects.requireNonNullElse(ex.getMessage(), ex.toString()).replace('\n', ' '));
						}
					}
					case "NOTIFY" -> {
						try {
							agent.sendNotification(command[1], Base64.getDecoder().decode(command[2]));
							out.println("NOTIFIED");
						}
						catch (RuntimeException ex) {
							out.println("NOTIFIED "
									+ Objects.requireNonNullElse(ex.getMessage(), ex.toString()).replace('\n', ' '));
						}
					}
					case "POLL" -> {
						NotificationMatcher matcher = NotificationMatcher.prefix(null, command[1]);
						int taken = 0;
						while (agent.pollNotification(matcher).isPresent()) {
							taken++;
						}
						out.println("POLLED " + taken);
					}
					case "QUIT" -> {
						out.println("BYE");
						return;
					}
					default -> out.println("ERROR unknown command " + command[0]);
				}
			}
		}
	}

	/**
	 * Checksums a segment.
	 * @param segment the segment
	 * @return its CRC32C
	 */
	public static long crc(MemorySegment segment) {
		return Patterns.crc(segment);
	}

}
