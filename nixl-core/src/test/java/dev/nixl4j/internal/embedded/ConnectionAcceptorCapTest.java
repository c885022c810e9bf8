package dev.nixl4j.internal.embedded;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.Engine;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.Parsed;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The listener's connection cap when a hello completes in the same turn of the accepting
 * thread as new connections arrive: the greeted connection still counts, so the listener
 * never holds more than {@link EmbeddedOptions#maxConnections()} connections.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ConnectionAcceptorCapTest {

	private static final int MAX_CONNECTIONS = 2;

	/**
	 * Rounds of the race; the accepting thread handles the two ready keys in either
	 * order.
	 */
	private static final int ROUNDS = 10;

	private Arena arena;

	private EmbeddedDriver driver;

	private Parsed metadata;

	/**
	 * While set, the accepting thread waits here when it starts the next serving thread.
	 */
	private final AtomicReference<CountDownLatch[]> gate = new AtomicReference<>();

	@BeforeEach
	void startDriver() {
		this.arena = Arena.ofShared();
		this.driver = EmbeddedDriver.open(AgentConfig.builder("cap-target-" + System.nanoTime())
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.builder()
				.inProcessCopies(false)
				.maxConnections(MAX_CONNECTIONS)
				.helloTimeout(Duration.ofSeconds(20))
				.build())
			.build());
		this.driver.createBackend("EMBEDDED", Map.of());
		MemorySegment memory = Bytes.pattern(this.arena, 4096, 5);
		this.driver.register(DescriptorList.of(memory), List.of(memory));
		this.metadata = EmbeddedMetadata.read(this.driver.localMetadata());
		this.driver.serveThreads(task -> {
			CountDownLatch[] held = this.gate.getAndSet(null);
			if (held != null) {
				held[0].countDown();
				try {
					held[1].await(10, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			return Thread.ofPlatform().daemon(true).unstarted(task);
		});
	}

	@AfterEach
	void stop() {
		this.driver.close();
		this.arena.close();
	}

	@Test
	void aHelloCompletingWhileConnectionsArriveDoesNotLetTheListenerExceedItsCap() throws Exception {
		for (int round = 0; round < ROUNDS; round++) {
			List<SocketChannel> open = new ArrayList<>();
			try {
				// A is accepted and says nothing yet
				SocketChannel a = connect();
				open.add(a);
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
				// C is greeted; the accepting thread is held while it starts C's serving
				// thread
				CountDownLatch entered = new CountDownLatch(1);
				CountDownLatch release = new CountDownLatch(1);
				this.gate.set(new CountDownLatch[] { entered, release });
				SocketChannel c = connect();
				open.add(c);
				writeHello(c);
				assertThat(entered.await(10, TimeUnit.SECONDS)).as("the accepting thread starts C's thread").isTrue();
				// the listener holds its cap (C served, A greeting): A's hello and B's
				// connection arrive together
				writeHello(a);
				SocketChannel b = connect();
				open.add(b);
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
				release.countDown();
				assertThat(answer(c)).isZero();
				writeHello(b);
				answer(a);
				answer(b);
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
				assertThat(this.driver.servedConnections()).as("served connections in round %d", round)
					.isLessThanOrEqualTo(MAX_CONNECTIONS);
			}
			finally {
				for (SocketChannel channel : open) {
					channel.close();
				}
			}
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (this.driver.servedConnections() > 0) {
				assertThat(System.nanoTime() - deadline).as("the served connections end").isNegative();
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
			}
		}
	}

	private SocketChannel connect() throws IOException {
		return SocketChannel
			.open(new InetSocketAddress(this.metadata.connection().host(), this.metadata.connection().port()));
	}

	private void writeHello(SocketChannel channel) throws IOException {
		byte[] name = "capped".getBytes(StandardCharsets.UTF_8);
		Wire.writeFully(channel,
				ByteBuffer.allocate(Wire.HELLO_FIXED_BYTES + name.length)
					.putInt(Wire.MAGIC)
					.put(Wire.VERSION)
					.put(this.metadata.connection().token())
					.putShort((short) name.length)
					.put(name)
					.flip());
	}

	/**
	 * The server's answer to a hello: 0 accepted, -1 when it closed the connection
	 * instead.
	 */
	private static int answer(SocketChannel channel) throws IOException {
		ByteBuffer answer = ByteBuffer.allocate(1);
		try {
			return (channel.read(answer) == 1) ? answer.get(0) : -1;
		}
		catch (IOException ex) {
			return -1; // reset
		}
	}

}
