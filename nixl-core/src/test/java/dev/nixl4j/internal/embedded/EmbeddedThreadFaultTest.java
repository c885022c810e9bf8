package dev.nixl4j.internal.embedded;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.XferOp;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.Parsed;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;
import dev.nixl4j.internal.engine.EngineDriver.FaultListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * An {@link Error} thrown inside a unit of work of the embedded engine's threads: the
 * thread that serves a peer's connection and the thread that receives responses from a
 * peer (both through the wake-up of the progress loop, a real seam of the driver) and the
 * accepting thread (through a serving thread that cannot start, as with "unable to create
 * native thread"). Each is reported as survived within a second, costs only its
 * connection, and the listener goes on serving. A server socket that breaks under the
 * accepting thread is reported fatal.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EmbeddedThreadFaultTest {

	private static final int SIZE = 64 * 1024;

	private final Faults faults = new Faults();

	private final AtomicBoolean throwOnWakeUp = new AtomicBoolean();

	private Arena arena;

	private EmbeddedDriver driver;

	private MemorySegment memory;

	private Parsed metadata;

	@BeforeEach
	void startDriver() {
		this.arena = Arena.ofShared();
		this.driver = EmbeddedDriver.open(AgentConfig.builder("fault-target-" + System.nanoTime())
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.builder().inProcessCopies(false).build())
			.build());
		this.driver.faultListener(this.faults);
		this.driver.progressListener(() -> {
			if (this.throwOnWakeUp.getAndSet(false)) {
				throw new OutOfMemoryError("injected into the wake-up of the progress loop");
			}
		});
		this.driver.createBackend("EMBEDDED", Map.of());
		this.memory = Bytes.pattern(this.arena, SIZE, 5);
		this.driver.register(DescriptorList.of(this.memory), List.of(this.memory));
		this.metadata = EmbeddedMetadata.read(this.driver.localMetadata());
	}

	@AfterEach
	void stop() {
		this.driver.close();
		this.arena.close();
	}

	@Test
	void anErrorWhileServingAConnectionIsSurvivedAndTheListenerServesTheNext() throws Exception {
		this.throwOnWakeUp.set(true);
		try (SocketChannel channel = greeted()) {
			byte[] message = "before the fault".getBytes(StandardCharsets.UTF_8);
			Wire.writeFully(channel,
					ByteBuffer.allocate(Wire.REQUEST_HEADER_BYTES + message.length)
						.put(Wire.NOTIFY)
						.putLong(0)
						.putInt(0)
						.putInt(message.length)
						.put(message)
						.flip());
			Fault fault = this.faults.await();
			assertThat(fault.fatal()).isFalse();
			assertThat(fault.thread()).isEqualTo("embedded connection from 'intruder'");
			assertThat(fault.error()).isInstanceOf(OutOfMemoryError.class).hasMessageContaining("injected");
			assertThat(closedByServer(channel)).as("the connection whose unit of work failed is closed").isTrue();
		}
		List<String> delivered = new ArrayList<>();
		this.driver.drainNotifications(
				(from, message) -> delivered.add(from + ": " + new String(message, StandardCharsets.UTF_8)));
		assertThat(delivered).containsExactly("intruder: before the fault");
		assertTheListenerServesAGreetedRead();
	}

	@Test
	void aServingThreadThatCannotStartCostsOnlyItsConnection() throws Exception {
		this.driver.serveThreads(task -> new Thread(task) {

			@Override
			public void start() {
				throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource "
						+ "limits reached");
			}

		});
		try (SocketChannel channel = connect()) {
			hello(channel);
			Fault fault = this.faults.await();
			assertThat(fault.fatal()).isFalse();
			assertThat(fault.thread()).isEqualTo(ConnectionAcceptor.THREAD);
			assertThat(fault.error()).isInstanceOf(OutOfMemoryError.class).hasMessageContaining("native thread");
			assertThat(closedByServer(channel)).isTrue();
		}
		assertThat(this.driver.servedConnections()).isZero();
		this.driver.serveThreads(Thread.ofPlatform().daemon(true).factory());
		assertTheListenerServesAGreetedRead();
		assertThat(this.faults.all()).as("no further fault").hasSize(1);
	}

	@Test
	void anErrorWhileReceivingAResponseIsSurvivedAndTheNextPostConnectsAgain() throws Exception {
		try (NixlAgent target = NixlAgent
			.create(AgentConfig.builder("fault-peer-" + System.nanoTime()).engine(Engine.EMBEDDED).build())) {
			MemorySegment remote = Bytes.pattern(this.arena, SIZE, 9);
			target.register(remote);
			this.driver.loadRemoteMetadata(target.localMetadata().toByteArray());
			long request = this.driver.createRequest(XferOp.READ, DescriptorList.of(this.memory),
					DescriptorList.of(remote), target.name());
			this.throwOnWakeUp.set(true);
			this.driver.post(request, null);
			Fault fault = this.faults.await();
			assertThat(fault.fatal()).isFalse();
			assertThat(fault.thread()).isEqualTo("embedded connection to '" + target.name() + "'");
			assertThat(fault.error()).isInstanceOf(OutOfMemoryError.class).hasMessageContaining("injected");
			assertThat(this.driver.status(request)).as("the READ itself had finished").isZero();
			assertThat(Bytes.hasPattern(this.memory, 9)).isTrue();
			Bytes.fill(remote, 11);
			this.driver.post(request, null);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (this.driver.status(request) == NixlStatus.IN_PROGRESS.code()) {
				assertThat(System.nanoTime() - deadline).as("the second READ finishes").isNegative();
				Thread.sleep(1);
			}
			assertThat(this.driver.status(request)).isZero();
			assertThat(Bytes.hasPattern(this.memory, 11)).isTrue();
			this.driver.release(request);
		}
	}

	@Test
	void aBrokenServerSocketIsReportedFatalAndNewPeersAreRefused() throws Exception {
		this.driver.breakListener();
		Fault fault = this.faults.await();
		assertThat(fault.fatal()).isTrue();
		assertThat(fault.thread()).isEqualTo(ConnectionAcceptor.THREAD);
		assertThat(fault.error()).isInstanceOf(java.nio.channels.ClosedChannelException.class);
		assertThatExceptionOfType(java.net.ConnectException.class).isThrownBy(this::connect);
	}

	private void assertTheListenerServesAGreetedRead() throws IOException {
		RemoteRegion region = this.metadata.regions().get(0);
		try (SocketChannel channel = greeted()) {
			Wire.writeFully(channel,
					ByteBuffer.allocate(Wire.REQUEST_HEADER_BYTES + Wire.DESCRIPTOR_BYTES)
						.put(Wire.READ)
						.putLong(7)
						.putInt(1)
						.putInt(0)
						.putLong(this.memory.address() + 1024)
						.putLong(256)
						.putLong(0)
						.putLong(region.registration())
						.put(region.key())
						.flip());
			ByteBuffer header = ByteBuffer.allocate(Wire.RESPONSE_HEADER_BYTES);
			Wire.readFully(channel, header);
			assertThat(header.getLong(0)).isEqualTo(7);
			assertThat(header.getInt(8)).isZero();
			ByteBuffer data = ByteBuffer.allocate(256);
			Wire.readFully(channel, data);
			assertThat(data.array()).isEqualTo(this.memory.asSlice(1024, 256).toArray(ValueLayout.JAVA_BYTE));
		}
	}

	private SocketChannel connect() throws IOException {
		return SocketChannel
			.open(new InetSocketAddress(this.metadata.connection().host(), this.metadata.connection().port()));
	}

	private SocketChannel greeted() throws IOException {
		SocketChannel channel = connect();
		assertThat(hello(channel)).as("hello with the right token").isZero();
		return channel;
	}

	private int hello(SocketChannel channel) throws IOException {
		byte[] name = "intruder".getBytes(StandardCharsets.UTF_8);
		Wire.writeFully(channel,
				ByteBuffer.allocate(Wire.HELLO_FIXED_BYTES + name.length)
					.putInt(Wire.MAGIC)
					.put(Wire.VERSION)
					.put(this.metadata.connection().token())
					.putShort((short) name.length)
					.put(name)
					.flip());
		ByteBuffer answer = ByteBuffer.allocate(1);
		return (channel.read(answer) == 1) ? answer.get(0) : -1;
	}

	private static boolean closedByServer(SocketChannel channel) throws IOException {
		try {
			return channel.read(ByteBuffer.allocate(1)) < 0;
		}
		catch (IOException ex) {
			return true; // reset
		}
	}

	private record Fault(String thread, Throwable error, boolean fatal) {
	}

	/**
	 * Records what the driver's threads report, as the agent's fault listener would
	 * receive it.
	 */
	private static final class Faults implements FaultListener {

		private final List<Fault> reported = new ArrayList<>();

		@Override
		public synchronized void survived(String thread, Throwable error) {
			this.reported.add(new Fault(thread, error, false));
			notifyAll();
		}

		@Override
		public synchronized void fatal(String thread, Throwable error) {
			this.reported.add(new Fault(thread, error, true));
			notifyAll();
		}

		/** Waits up to a second for the first report. */
		synchronized Fault await() throws InterruptedException {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
			while (this.reported.isEmpty()) {
				long left = deadline - System.nanoTime();
				assertThat(left).as("a fault reported within a second").isPositive();
				TimeUnit.NANOSECONDS.timedWait(this, left);
			}
			return this.reported.get(0);
		}

		synchronized List<Fault> all() {
			return List.copyOf(this.reported);
		}

	}

}
