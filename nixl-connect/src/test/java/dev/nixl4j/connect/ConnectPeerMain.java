package dev.nixl4j.connect;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.Engine;
import dev.nixl4j.testsupport.PeerMain;

/**
 * A connector in its own JVM, driven by line commands on stdin; answers on stdout.
 * Started by {@link ConnectTwoProcessTest}. At start it prints
 * {@code READY <agent name>}. Commands: {@code READABLE <size> <seed>} prints
 * {@code JSON <rdma metadata>} and later, when the operation ends,
 * {@code ENDED <status> <peer or ->}; {@code READ <rdma metadata>} reads into a new
 * buffer and prints {@code READ <crc32c>} (or {@code FAILED <message>}); {@code QUIT}.
 */
public final class ConnectPeerMain {

	private ConnectPeerMain() {
	}

	/**
	 * Runs the peer.
	 * @param args agent name and engine
	 * @throws Exception on failure
	 */
	public static void main(String[] args) throws Exception {
		PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
		Duration wait = Duration.ofSeconds(60);
		try (Arena arena = Arena.ofShared();
				Connector connector = Connector
					.create(AgentConfig.builder(args[0]).engine(Engine.valueOf(args[1])).build())) {
			out.println("READY " + connector.name());
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null) {
				String[] command = line.split(" ", 2);
				switch (command[0]) {
					case "READABLE" -> {
						String[] size = command[1].split(" ");
						MemorySegment memory = Bytes.pattern(arena, Long.parseLong(size[0]), Long.parseLong(size[1]));
						ReadableOperation readable = connector.createReadable(java.util.List.of(Descriptor.of(memory)),
								wait);
						readable.completion()
							.whenComplete((done, failure) -> out
								.println("ENDED " + readable.status() + " " + readable.peer().orElse("-")));
						out.println("JSON " + readable.metadata().toJson());
					}
					case "READ" -> {
						try {
							RdmaMetadata remote = RdmaMetadata.fromJson(command[1]);
							MemorySegment buffer = arena.allocate(remote.descriptors().get(0).size(), 64);
							try (ReadOperation read = connector.beginRead(remote, Descriptor.of(buffer))) {
								read.await(wait);
							}
							out.println("READ " + PeerMain.crc(buffer));
						}
						catch (RuntimeException ex) {
							out.println("FAILED " + ex.getMessage().replace('\n', ' '));
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

}
