package dev.nixl4j.testsupport;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Objects;

import dev.nixl4j.readiness.Patterns;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Notification;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Engine;
import dev.nixl4j.AgentMetadata;
import dev.nixl4j.AgentConfig;

/**
 * A peer agent in its own JVM, driven by line commands on stdin; answers on stdout.
 * Started by {@link PeerProcess}. Commands: {@code LOAD <base64 metadata>}, {@code CRC},
 * {@code FILL <seed>}, {@code EXPECT <tag> <millis>}, {@code QUIT}. At start it prints
 * {@code READY <base64 metadata>
 * <address> <length>}.
 */
public final class PeerMain {

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
		try (Arena arena = Arena.ofShared();
				NixlAgent agent = NixlAgent.create(AgentConfig.builder(name).engine(engine).build())) {
			MemorySegment region = Bytes.pattern(arena, size, seed);
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
