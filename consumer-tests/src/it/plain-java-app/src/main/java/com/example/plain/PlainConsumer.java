package com.example.plain;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Notification;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.http.HttpMetadataExchange;
import dev.nixl4j.metadata.http.MetadataHttpServer;

/**
 * Two processes moving one MiB through NIXL, without Spring.
 *
 * <p>{@code serve DIR} registers a buffer filled with {@link #patternByte(long)}, serves its
 * metadata with nixl4j's HTTP registry and writes where to find it (registry, token, agent,
 * buffer) to {@code DIR/peer.properties}, readable by its owner only; it exits 0 once the reader
 * notified it. {@code read DIR} waits for that file, loads the server's metadata, READs the
 * buffer, notifies the server and checks every byte; it exits 0 when all match. Both print the
 * engine and the library behind their agent. Every wait has a deadline.
 */
public final class PlainConsumer {

	private static final int SIZE = 1 << 20;

	private static final Duration DEADLINE = Duration.ofSeconds(60);

	private static final String DONE = "plain-consumer:done";

	private PlainConsumer() {
	}

	/**
	 * Runs one side.
	 * @param args {@code serve DIR} or {@code read DIR}
	 * @throws Exception when a step fails; the process then exits non-zero
	 */
	public static void main(String[] args) throws Exception {
		if (args.length != 2 || !(args[0].equals("serve") || args[0].equals("read"))) {
			System.err.println("usage: java -jar plain-consumer.jar serve|read DIR");
			System.exit(2);
		}
		Path dir = Path.of(args[1]);
		int status = args[0].equals("serve") ? serve(dir) : read(dir);
		System.exit(status);
	}

	/**
	 * The byte at an offset of the served buffer; the consumer tests compute the same.
	 * @param offset the offset
	 * @return the byte
	 */
	static byte patternByte(long offset) {
		return (byte) ((offset * 31 + (offset >>> 11)) ^ 0x5A);
	}

	private static int serve(Path dir) throws IOException {
		byte[] secret = new byte[24];
		new SecureRandom().nextBytes(secret);
		String token = HexFormat.of().formatHex(secret);
		String name = "plain-serve-" + ProcessHandle.current().pid();
		try (Arena arena = Arena.ofShared();
				NixlAgent agent = NixlAgent.create(AgentConfig.builder(name).build());
				MetadataHttpServer registry = MetadataHttpServer.builder().token(token).start();
				HttpMetadataExchange exchange = HttpMetadataExchange.builder(registry.baseUri()).token(token).build()) {
			describe(agent);
			MemorySegment buffer = arena.allocate(SIZE, 4096);
			for (long i = 0; i < SIZE; i++) {
				buffer.set(ValueLayout.JAVA_BYTE, i, patternByte(i));
			}
			try (Registration registration = agent.register(buffer)) {
				exchange.publish(agent);
				CompletableFuture<Notification> done = agent.expectNotification(NotificationMatcher.exact(null, DONE),
						DEADLINE);
				Properties peer = new Properties();
				peer.setProperty("registry", registry.baseUri().toString());
				peer.setProperty("token", token);
				peer.setProperty("agent", name);
				peer.setProperty("address", Long.toString(buffer.address()));
				peer.setProperty("length", Long.toString(buffer.byteSize()));
				writeOwnerOnly(dir.resolve("peer.properties"), peer);
				System.out.println("serving " + SIZE + " bytes as " + name);
				String reader = done.join().remoteAgent();
				System.out.println("read by " + reader);
				return 0;
			}
		}
	}

	private static int read(Path dir) throws IOException, InterruptedException {
		Properties peer = awaitPeer(dir.resolve("peer.properties"));
		String server = peer.getProperty("agent");
		long address = Long.parseLong(peer.getProperty("address"));
		int length = Integer.parseInt(peer.getProperty("length"));
		String name = "plain-read-" + ProcessHandle.current().pid();
		try (Arena arena = Arena.ofShared();
				NixlAgent agent = NixlAgent.create(AgentConfig.builder(name).build());
				HttpMetadataExchange exchange = HttpMetadataExchange
					.builder(URI.create(peer.getProperty("registry")))
					.token(peer.getProperty("token"))
					.build()) {
			describe(agent);
			agent.loadRemoteMetadata(exchange.fetch(server, Duration.ofSeconds(10)));
			MemorySegment local = arena.allocate(length, 4096);
			DescriptorList remote = DescriptorList.of(MemoryType.DRAM, new MemoryDescriptor(address, length, 0));
			try (Registration registration = agent.register(local);
					Transfer transfer = agent.transfer(XferOp.READ, DescriptorList.of(local), remote, server,
							DONE.getBytes(StandardCharsets.UTF_8))) {
				transfer.await(Duration.ofSeconds(30));
			}
			for (long i = 0; i < length; i++) {
				byte got = local.get(ValueLayout.JAVA_BYTE, i);
				if (got != patternByte(i)) {
					System.out.println("MISMATCH at byte " + i + ": read " + got + ", expected " + patternByte(i));
					return 1;
				}
			}
			System.out.println("VERIFIED " + length + " bytes from " + server);
			return 0;
		}
	}

	private static void describe(NixlAgent agent) {
		System.out.println("engine: " + agent.engine());
		System.out.println("library: " + agent.engineDescription());
	}

	private static void writeOwnerOnly(Path file, Properties properties) throws IOException {
		Path temp = Files.createTempFile(file.getParent(), "peer", ".tmp",
				PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
		try (OutputStream out = Files.newOutputStream(temp, StandardOpenOption.TRUNCATE_EXISTING)) {
			properties.store(out, null);
		}
		Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
	}

	private static Properties awaitPeer(Path file) throws IOException, InterruptedException {
		long deadline = System.nanoTime() + DEADLINE.toNanos();
		while (true) {
			try (InputStream in = Files.newInputStream(file)) {
				Properties properties = new Properties();
				properties.load(in);
				return properties;
			}
			catch (NoSuchFileException ex) {
				if (System.nanoTime() - deadline > 0) {
					throw new IOException("no " + file + " within " + DEADLINE + ": the serving process did not start", ex);
				}
				Thread.sleep(50);
			}
		}
	}

}
