package dev.nixl4j.internal.embedded;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.EmbeddedOptions;
import dev.nixl4j.Engine;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.Parsed;
import dev.nixl4j.internal.embedded.EmbeddedMetadata.RemoteRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The embedded engine's TCP listener against a hand-written client that speaks the wire
 * protocol directly: without the metadata's token, with a wrong registration key, outside
 * the registered region, with oversize length fields, with half-written frames and with a
 * thousand idle sockets. The target's memory must stay untouched, its threads and
 * connections bounded, and the target must keep serving a well-behaved peer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostileClientTest {

	private static final int SIZE = 64 * 1024;

	private static final int MAX_CONNECTIONS = 64;

	/** The hello and frame deadlines of the target, short so that tests see them pass. */
	private static final Duration DEADLINE = Duration.ofSeconds(1);

	/** How much later than its deadline a closing may be observed on a loaded machine. */
	private static final Duration SLACK = Duration.ofSeconds(4);

	private Arena arena;

	private NixlAgent target;

	private MemorySegment memory;

	private Parsed metadata;

	@BeforeEach
	void startTarget() {
		this.arena = Arena.ofShared();
		this.target = NixlAgent.create(AgentConfig.builder("hostile-target-" + System.nanoTime())
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.builder()
				.maxConnections(MAX_CONNECTIONS)
				.helloTimeout(DEADLINE)
				.frameTimeout(DEADLINE)
				.build())
			.build());
		this.memory = Bytes.pattern(this.arena, SIZE, 7);
		this.target.register(this.memory);
		this.metadata = EmbeddedMetadata.read(this.target.localMetadata().toByteArray());
	}

	@AfterEach
	void stop() {
		this.target.close();
		this.arena.close();
	}

	private RemoteRegion region() {
		return this.metadata.regions().get(0);
	}

	private SocketChannel connect() throws IOException {
		return SocketChannel
			.open(new InetSocketAddress(this.metadata.connection().host(), this.metadata.connection().port()));
	}

	private static int hello(SocketChannel channel, byte[] token) throws IOException {
		byte[] name = "intruder".getBytes(StandardCharsets.UTF_8);
		Wire.writeFully(channel,
				ByteBuffer.allocate(Wire.HELLO_FIXED_BYTES + name.length)
					.putInt(Wire.MAGIC)
					.put(Wire.VERSION)
					.put(token)
					.putShort((short) name.length)
					.put(name)
					.flip());
		ByteBuffer answer = ByteBuffer.allocate(1);
		return (channel.read(answer) == 1) ? answer.get(0) : -1;
	}

	private SocketChannel greeted() throws IOException {
		SocketChannel channel = connect();
		assertThat(hello(channel, this.metadata.connection().token())).as("hello with the right token").isZero();
		return channel;
	}

	private static ByteBuffer request(byte kind, long address, long length, long registration, byte[] key, int count,
			int notificationLength) {
		return ByteBuffer.allocate(Wire.REQUEST_HEADER_BYTES + Wire.DESCRIPTOR_BYTES)
			.put(kind)
			.putLong(42)
			.putInt(count)
			.putInt(notificationLength)
			.putLong(address)
			.putLong(length)
			.putLong(0)
			.putLong(registration)
			.put(key)
			.flip();
	}

	private record Response(long id, int status, String message) {
	}

	private static Response response(SocketChannel channel) throws IOException {
		ByteBuffer header = ByteBuffer.allocate(Wire.RESPONSE_HEADER_BYTES);
		Wire.readFully(channel, header);
		ByteBuffer message = ByteBuffer.allocate(header.getInt(12));
		Wire.readFully(channel, message);
		return new Response(header.getLong(0), header.getInt(8), new String(message.array(), StandardCharsets.UTF_8));
	}

	/** Whether the server closed the connection (reads end of stream). */
	private static boolean closedByServer(SocketChannel channel) throws IOException {
		ByteBuffer one = ByteBuffer.allocate(1);
		try {
			return channel.read(one) < 0;
		}
		catch (IOException ex) {
			return true; // reset
		}
	}

	private void assertUntouched() {
		assertThat(Bytes.hasPattern(this.memory, 7)).as("target memory untouched").isTrue();
	}

	@Test
	void aClientWithoutTheTokenIsRefusedAtHello() throws IOException {
		try (SocketChannel channel = connect()) {
			assertThat(hello(channel, new byte[EmbeddedMetadata.SECRET_BYTES])).isEqualTo(1);
			assertThat(closedByServer(channel)).isTrue();
		}
		assertUntouched();
	}

	@Test
	void aWriteWithTheWrongKeyIsRefusedAndTheMemoryUntouched() throws IOException {
		byte[] wrongKey = region().key().clone();
		wrongKey[0] ^= 1;
		try (SocketChannel channel = greeted()) {
			Wire.writeFully(channel,
					request(Wire.WRITE, this.memory.address(), 4096, region().registration(), wrongKey, 1, 0));
			Wire.writeFully(channel, ByteBuffer.allocate(4096));
			Response refused = response(channel);
			assertThat(refused.id()).isEqualTo(42);
			assertThat(refused.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM.code());
			assertThat(refused.message()).contains("no registration with that key");
			assertThat(closedByServer(channel)).as("a refused WRITE ends the connection").isTrue();
		}
		assertUntouched();
	}

	@Test
	void aReadWithTheWrongRegistrationIdGetsNoData() throws IOException {
		try (SocketChannel channel = greeted()) {
			Wire.writeFully(channel,
					request(Wire.READ, this.memory.address(), 4096, region().registration() + 1, region().key(), 1, 0));
			Response refused = response(channel);
			assertThat(refused.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM.code());
			// the connection stays usable and the next response is the next request's,
			// not data
			Wire.writeFully(channel,
					request(Wire.READ, this.memory.address(), 16, region().registration(), region().key(), 1, 0));
			Response granted = response(channel);
			assertThat(granted.status()).isZero();
			ByteBuffer data = ByteBuffer.allocate(16);
			Wire.readFully(channel, data);
			assertThat(data.array())
				.isEqualTo(this.memory.asSlice(0, 16).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
		}
		assertUntouched();
	}

	@Test
	void requestsOutsideTheRegisteredRegionAreRefused() throws IOException {
		long inside = this.memory.address() + SIZE - 1024;
		try (SocketChannel channel = greeted()) {
			Wire.writeFully(channel, request(Wire.READ, inside, 4096, region().registration(), region().key(), 1, 0));
			Response read = response(channel);
			assertThat(read.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM.code());
			assertThat(read.message()).contains("outside");
			Wire.writeFully(channel, request(Wire.WRITE, this.memory.address() - 4096, 4096, region().registration(),
					region().key(), 1, 0));
			Wire.writeFully(channel, ByteBuffer.allocate(4096));
			assertThat(response(channel).message()).contains("outside");
		}
		assertUntouched();
	}

	@Test
	void oversizeLengthFieldsAreRefusedAndTheConnectionClosed() throws IOException {
		try (SocketChannel channel = greeted()) {
			Wire.writeFully(channel, request(Wire.READ, this.memory.address(), 16, region().registration(),
					region().key(), Integer.MAX_VALUE, 0));
			Response refused = response(channel);
			assertThat(refused.message()).contains("descriptor count " + Integer.MAX_VALUE);
			assertThat(closedByServer(channel)).isTrue();
		}
		try (SocketChannel channel = greeted()) {
			Wire.writeFully(channel, request(Wire.WRITE, this.memory.address(), 16, region().registration(),
					region().key(), 1, Integer.MAX_VALUE));
			assertThat(response(channel).message()).contains("notification length");
			assertThat(closedByServer(channel)).isTrue();
		}
		try (SocketChannel channel = greeted()) {
			Wire.writeFully(channel,
					request((byte) 99, this.memory.address(), 16, region().registration(), region().key(), 1, 0));
			assertThat(response(channel).message()).contains("unknown request kind");
		}
		assertUntouched();
	}

	@Test
	void halfWrittenFramesAndAbortedDataLeaveTheTargetServingOthersWithoutLeaks() throws Exception {
		int threadsBefore = serveThreads();
		List<SocketChannel> abandoned = new ArrayList<>();
		// a header cut in the middle, a hello cut in the middle, and a WRITE whose data
		// stops halfway
		SocketChannel halfHeader = greeted();
		Wire.writeFully(halfHeader, ByteBuffer.wrap(new byte[] { Wire.WRITE, 0, 0, 0 }));
		abandoned.add(halfHeader);
		SocketChannel halfHello = connect();
		Wire.writeFully(halfHello, ByteBuffer.allocate(Wire.HELLO_FIXED_BYTES - 3));
		abandoned.add(halfHello);
		// (the half it sends equals what the memory holds, so the untouched check below
		// still applies)
		SocketChannel halfData = greeted();
		Wire.writeFully(halfData,
				request(Wire.WRITE, this.memory.address(), 8192, region().registration(), region().key(), 1, 0));
		Wire.writeFully(halfData,
				ByteBuffer.wrap(Bytes.pattern(this.arena, 4096, 7).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
		abandoned.add(halfData);

		// meanwhile a real peer transfers as usual
		try (NixlAgent peer = NixlAgent.create(AgentConfig.builder("honest-peer-" + System.nanoTime())
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.builder().inProcessCopies(false).build())
			.build())) {
			MemorySegment local = Bytes.pattern(this.arena, 4096, 3);
			peer.register(local);
			peer.loadRemoteMetadata(this.target.localMetadata());
			try (Transfer read = peer.transfer(XferOp.READ, DescriptorList.of(local),
					DescriptorList.of(this.memory.asSlice(8192, 4096)), this.target.name(), null)) {
				read.await(Duration.ofSeconds(10));
			}
			assertThat(Bytes.same(local, this.memory.asSlice(8192, 4096))).isTrue();
		}
		for (SocketChannel channel : abandoned) {
			channel.close();
		}
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (serveThreads() > threadsBefore) {
			assertThat(System.nanoTime()).as("serving threads end once their peers are gone").isLessThan(deadline);
			Thread.onSpinWait();
		}
		assertThat(serveThreads()).isEqualTo(threadsBefore);
		assertUntouched();
	}

	@Test
	void aThousandIdleSocketsCostNoThreadAreCappedAndClosedAtTheHelloDeadline() throws Exception {
		int baseline = threads();
		List<SocketChannel> idle = new ArrayList<>();
		try {
			for (int i = 0; i < 1000; i++) {
				idle.add(connect());
			}
			assertThat(threads()).as("threads while 1,000 sockets are open").isLessThanOrEqualTo(baseline + 2);
			// beyond the limit they are closed at once; only the limit's worth may wait
			// for the deadline
			awaitAtLeastClosed(idle, 1000 - MAX_CONNECTIONS, SLACK);
			honestReadSucceeds(0);
			awaitAtLeastClosed(idle, idle.size(), DEADLINE.plus(SLACK));
			honestReadSucceeds(8192);
		}
		finally {
			for (SocketChannel channel : idle) {
				channel.close();
			}
		}
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (threads() > baseline) {
			assertThat(System.nanoTime() - deadline).as("threads back to %d, now %d", baseline, threads()).isNegative();
			Thread.sleep(10);
		}
		assertUntouched();
	}

	@Test
	void truncatedHellosAndFramesOfEveryKindAreClosedAtTheirDeadline() throws Exception {
		List<SocketChannel> truncated = new ArrayList<>();
		try {
			truncated.add(connect()); // nothing at all
			SocketChannel halfFixed = connect();
			Wire.writeFully(halfFixed, ByteBuffer.allocate(Wire.HELLO_FIXED_BYTES - 3));
			truncated.add(halfFixed);
			SocketChannel halfName = connect();
			Wire.writeFully(halfName,
					ByteBuffer.allocate(Wire.HELLO_FIXED_BYTES + 4)
						.putInt(Wire.MAGIC)
						.put(Wire.VERSION)
						.put(this.metadata.connection().token())
						.putShort((short) 8)
						.put("half".getBytes(StandardCharsets.UTF_8))
						.flip());
			truncated.add(halfName);
			SocketChannel halfHeader = greeted();
			Wire.writeFully(halfHeader, ByteBuffer.wrap(new byte[] { Wire.READ, 0, 0, 0 }));
			truncated.add(halfHeader);
			SocketChannel halfDescriptor = greeted();
			ByteBuffer write = request(Wire.WRITE, this.memory.address(), 4096, region().registration(), region().key(),
					1, 0);
			Wire.writeFully(halfDescriptor, write.limit(Wire.REQUEST_HEADER_BYTES + Wire.DESCRIPTOR_BYTES / 2));
			truncated.add(halfDescriptor);
			SocketChannel halfNotification = greeted();
			Wire.writeFully(halfNotification,
					ByteBuffer.allocate(Wire.REQUEST_HEADER_BYTES + 10)
						.put(Wire.NOTIFY)
						.putLong(0)
						.putInt(0)
						.putInt(100)
						.put(new byte[10])
						.flip());
			truncated.add(halfNotification);
			SocketChannel halfData = greeted();
			Wire.writeFully(halfData,
					request(Wire.WRITE, this.memory.address(), 8192, region().registration(), region().key(), 1, 0));
			Wire.writeFully(halfData,
					ByteBuffer.wrap(this.memory.asSlice(0, 4096).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
			truncated.add(halfData);
			long sent = System.nanoTime();
			for (int i = 0; i < truncated.size(); i++) {
				assertThat(closedByServer(truncated.get(i))).as("truncated frame %d closed", i).isTrue();
				assertThat(Duration.ofNanos(System.nanoTime() - sent))
					.as("truncated frame %d closed by its deadline", i)
					.isLessThan(DEADLINE.plus(SLACK));
			}
		}
		finally {
			for (SocketChannel channel : truncated) {
				channel.close();
			}
		}
		honestReadSucceeds(0);
		assertUntouched();
	}

	@Test
	void anIdleGreetedPeerKeepsItsConnectionBeyondTheDeadlines() throws Exception {
		try (SocketChannel channel = greeted()) {
			Thread.sleep(DEADLINE.multipliedBy(2).toMillis());
			Wire.writeFully(channel,
					request(Wire.READ, this.memory.address(), 16, region().registration(), region().key(), 1, 0));
			assertThat(response(channel).status()).isZero();
			ByteBuffer data = ByteBuffer.allocate(16);
			Wire.readFully(channel, data);
			assertThat(data.array())
				.isEqualTo(this.memory.asSlice(0, 16).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
		}
	}

	@Test
	void deregisteringFromAnInterruptedThreadStillWaitsForAStalledWriteAndNoByteLandsAfterwards() throws Exception {
		MemorySegment written = Bytes.pattern(this.arena, 8192, 5);
		Registration registration = this.target.register(written);
		byte[] before = written.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
		RemoteRegion region = EmbeddedMetadata.read(this.target.localMetadata().toByteArray())
			.regions()
			.stream()
			.filter(candidate -> candidate.descriptor().address() == written.address())
			.findFirst()
			.orElseThrow();
		MemorySegment incoming = Bytes.pattern(this.arena, 8192, 9);
		try (SocketChannel channel = greeted()) {
			Wire.writeFully(channel,
					request(Wire.WRITE, written.address(), 8192, region.registration(), region.key(), 1, 0));
			Wire.writeFrom(channel, incoming.asSlice(0, 4096));
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (!Bytes.same(written.asSlice(0, 4096), incoming.asSlice(0, 4096))) {
				assertThat(System.nanoTime() - deadline).as("the first half of the WRITE arrives").isNegative();
				LockSupport.parkNanos(5_000_000);
			}
			// the serving thread is inside the memory, waiting for the second half
			boolean keptInterrupt;
			Thread.currentThread().interrupt();
			try {
				registration.close();
			}
			finally {
				keptInterrupt = Thread.interrupted();
			}
			assertThat(keptInterrupt).as("the caller's interrupt is kept").isTrue();
			try {
				Wire.writeFrom(channel, incoming.asSlice(4096, 4096));
			}
			catch (IOException ex) {
				// the target cut the connection of the stalled WRITE, as it should
			}
			LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300));
			assertThat(written.asSlice(4096, 4096).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
				.as("no byte lands in memory after its deregistration returned")
				.isEqualTo(java.util.Arrays.copyOfRange(before, 4096, 8192));
		}
		honestReadSucceeds(0);
	}

	/**
	 * A peer agent of its own reads 4 KiB of the target over TCP and finds the target's
	 * bytes.
	 */
	private void honestReadSucceeds(long offset) {
		try (NixlAgent peer = NixlAgent.create(AgentConfig.builder("honest-peer-" + System.nanoTime())
			.engine(Engine.EMBEDDED)
			.embedded(EmbeddedOptions.builder().inProcessCopies(false).build())
			.build())) {
			MemorySegment local = Bytes.pattern(this.arena, 4096, 3);
			peer.register(local);
			peer.loadRemoteMetadata(this.target.localMetadata());
			try (Transfer read = peer.transfer(XferOp.READ, DescriptorList.of(local),
					DescriptorList.of(this.memory.asSlice(offset, 4096)), this.target.name(), null)) {
				read.await(Duration.ofSeconds(10));
			}
			assertThat(Bytes.same(local, this.memory.asSlice(offset, 4096))).isTrue();
		}
	}

	/** Waits until at least a number of the sockets were closed by the server. */
	private static void awaitAtLeastClosed(List<SocketChannel> sockets, int count, Duration within) throws IOException {
		long deadline = System.nanoTime() + within.toNanos();
		int closed;
		while ((closed = countClosed(sockets)) < count) {
			assertThat(System.nanoTime() - deadline)
				.as("%d of %d sockets closed by the server, expected %d within %s", closed, sockets.size(), count,
						within)
				.isNegative();
			LockSupport.parkNanos(20_000_000);
		}
	}

	private static int countClosed(List<SocketChannel> sockets) throws IOException {
		int closed = 0;
		ByteBuffer one = ByteBuffer.allocate(1);
		for (SocketChannel channel : sockets) {
			if (channel.isBlocking()) {
				channel.configureBlocking(false);
			}
			try {
				if (channel.read(one.clear()) < 0) {
					closed++;
				}
			}
			catch (IOException ex) {
				closed++; // reset
			}
		}
		return closed;
	}

	private static int threads() {
		return ManagementFactory.getThreadMXBean().getThreadCount();
	}

	private int serveThreads() {
		String prefix = "nixl-embedded-" + this.target.name() + "-serve-";
		return (int) Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter(thread -> thread.getName().startsWith(prefix) && thread.isAlive())
			.count();
	}

}
