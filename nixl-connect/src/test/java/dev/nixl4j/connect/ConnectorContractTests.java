package dev.nixl4j.connect;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.nixl4j.AgentConfig;
import dev.nixl4j.testsupport.FaultInjectingDriver;
import dev.nixl4j.testsupport.Bytes;
import dev.nixl4j.DescriptorList;
import dev.nixl4j.Engine;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import dev.nixl4j.NotificationMatcher;
import dev.nixl4j.metadata.MetadataFraming;
import dev.nixl4j.testsupport.Eventually;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * What the connect layer does on every engine: two connectors in one JVM pair operations
 * through RDMA metadata that crosses as JSON, with every byte checked.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class ConnectorContractTests {

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final AtomicInteger ids = new AtomicInteger();

	private final List<AutoCloseable> resources = new ArrayList<>();

	private Arena arena;

	private Connector a;

	private Connector b;

	/**
	 * Returns the engine under test.
	 * @return the engine
	 */
	protected abstract Engine engine();

	/** Short, so that the tests see peers invalidated soon after their last operation. */
	private static final Duration LINGER = Duration.ofMillis(100);

	@BeforeEach
	void connectors() {
		this.arena = Arena.ofShared();
		this.a = connector("a");
		this.b = connector("b");
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.resources.size() - 1; i >= 0; i--) {
			this.resources.get(i).close();
		}
		this.arena.close();
	}

	private Connector connector(String role) {
		Connector connector = Connector.builder(config(role)).peerLinger(LINGER).build();
		this.resources.add(connector);
		return connector;
	}

	private AgentConfig config(String role) {
		return AgentConfig
			.builder("connect-" + role + "-" + ProcessHandle.current().pid() + "-" + ids.incrementAndGet())
			.engine(engine())
			.build();
	}

	/** The way metadata travels between workers: as Dynamo's JSON. */
	private static RdmaMetadata overTheWire(PassiveOperation operation) {
		return RdmaMetadata.fromJson(operation.metadata().toJson());
	}

	private static void assertReleased(Connector connector) {
		assertThat(connector.agent().registrations()).as("registrations of " + connector.name()).isEmpty();
		assertThat(connector.operations()).isEmpty();
		assertThat(connector.peersInUse()).isEmpty();
		Eventually.until(LINGER.multipliedBy(20), "peers of " + connector.name() + " invalidated after the linger",
				() -> connector.agent().remoteAgents().isEmpty());
		assertThat(connector.agent().pollNotification(NotificationMatcher.prefix(null, ""))).as("stray notifications")
			.isEmpty();
	}

	@Test
	void aReadableIsReadByteForByteAndBothSidesReleaseEverything() {
		MemorySegment source = Bytes.pattern(this.arena, 1 << 20, 1);
		MemorySegment target = Bytes.pattern(this.arena, 1 << 20, 0);
		ReadableOperation readable = this.a.createReadable(Descriptor.of(source.asSlice(0, 1000)),
				Descriptor.of(source.asSlice(1000)));
		assertThat(readable.status()).isEqualTo(OperationStatus.IN_PROGRESS);
		assertThat(readable.metadata().operationKind()).isEqualTo(OperationKind.READ);
		ReadOperation read = this.b.beginRead(overTheWire(readable), Descriptor.of(target.asSlice(0, 1000)),
				Descriptor.of(target.asSlice(1000)));
		read.await(WAIT);
		readable.await(WAIT);
		assertThat(read.status()).isEqualTo(OperationStatus.COMPLETE);
		assertThat(readable.status()).isEqualTo(OperationStatus.COMPLETE);
		assertThat(readable.peer()).contains(this.b.name());
		assertThat(read.peer()).contains(this.a.name());
		assertThat(Bytes.hasPattern(target, 1)).isTrue();
		assertReleased(this.a);
		assertReleased(this.b);
	}

	@Test
	void aReadThatFailsInTheBackendMakesTheNextOperationLoadThePeerAgain() {
		AgentConfig config = config("faulty");
		FaultInjectingDriver driver = FaultInjectingDriver.open(config);
		NixlAgent readerAgent = driver.agent(config);
		this.resources.add(readerAgent);
		Connector reader = Connector.builder(readerAgent).peerLinger(Duration.ofMinutes(5)).build();
		this.resources.add(reader);
		MemorySegment source = Bytes.pattern(this.arena, 1 << 16, 3);
		MemorySegment target = Bytes.pattern(this.arena, 1 << 16, 0);
		driver.loseTransfers(-2, 1);
		ReadableOperation first = this.a.createReadable(Descriptor.of(source));
		ReadOperation failed = reader.beginRead(overTheWire(first), Descriptor.of(target));

		assertThatThrownBy(() -> failed.await(WAIT)).isInstanceOfSatisfying(NixlException.class,
				(ex) -> assertThat(ex.status()).isEqualTo(NixlStatus.ERROR_BACKEND));
		assertThat(reader.agent().hasRemoteMetadata(this.a.name())).as("forgotten after the backend failure").isFalse();
		first.close();

		ReadableOperation second = this.a.createReadable(Descriptor.of(source));
		ReadOperation read = reader.beginRead(overTheWire(second), Descriptor.of(target));
		read.await(WAIT);
		second.await(WAIT);
		assertThat(Bytes.hasPattern(target, 3)).isTrue();
		assertThat(reader.remoteAgents().loads()).as("loaded again for the second operation").isEqualTo(2);
		read.close();
	}

	@Test
	void aWritableIsWrittenByteForByte() {
		MemorySegment target = Bytes.pattern(this.arena, 1 << 20, 0);
		MemorySegment source = Bytes.pattern(this.arena, 1 << 20, 7);
		WritableOperation writable = this.a.createWritable(Descriptor.of(target));
		assertThat(writable.metadata().operationKind()).isEqualTo(OperationKind.WRITE);
		WriteOperation write = this.b.beginWrite(overTheWire(writable), Descriptor.of(source));
		write.await(WAIT);
		writable.await(WAIT);
		assertThat(writable.status()).isEqualTo(OperationStatus.COMPLETE);
		assertThat(write.status()).isEqualTo(OperationStatus.COMPLETE);
		assertThat(Bytes.hasPattern(target, 7)).isTrue();
		assertReleased(this.a);
		assertReleased(this.b);
	}

	@Test
	void manyConcurrentOperationsOnOneConnectorPairEachCompleteOnceWithTheirOwnBytes() throws Exception {
		int count = 48;
		int size = 64 * 1024;
		List<PassiveOperation> passive = new ArrayList<>();
		List<MemorySegment> exposed = new ArrayList<>();
		List<MemorySegment> local = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			boolean readable = i % 2 == 0;
			MemorySegment memory = Bytes.pattern(this.arena, size, readable ? 1000 + i : 0);
			exposed.add(memory);
			local.add(Bytes.pattern(this.arena, size, readable ? 0 : 2000 + i));
			passive.add(readable ? this.a.createReadable(Descriptor.of(memory))
					: this.a.createWritable(Descriptor.of(memory)));
		}
		AtomicInteger completions = new AtomicInteger();
		for (PassiveOperation operation : passive) {
			operation.completion().thenRun(completions::incrementAndGet);
		}
		List<String> json = passive.stream().map(operation -> operation.metadata().toJson()).toList();
		ExecutorService pool = Executors.newFixedThreadPool(8);
		try {
			List<Future<ActiveOperation>> started = new ArrayList<>();
			for (int i = count - 1; i >= 0; i--) {
				int index = i;
				started.add(pool.submit(() -> {
					RdmaMetadata remote = RdmaMetadata.fromJson(json.get(index));
					Descriptor descriptor = Descriptor.of(local.get(index));
					return (index % 2 == 0) ? this.b.beginRead(remote, descriptor)
							: this.b.beginWrite(remote, descriptor);
				}));
			}
			for (Future<ActiveOperation> future : started) {
				future.get(60, TimeUnit.SECONDS).await(WAIT);
			}
		}
		finally {
			pool.shutdownNow();
		}
		for (PassiveOperation operation : passive) {
			operation.await(WAIT);
			assertThat(operation.status()).isEqualTo(OperationStatus.COMPLETE);
			assertThat(operation.peer()).contains(this.b.name());
		}
		assertThat(completions).hasValue(count);
		for (int i = 0; i < count; i++) {
			if (i % 2 == 0) {
				assertThat(Bytes.hasPattern(local.get(i), 1000 + i)).as("read " + i).isTrue();
			}
			else {
				assertThat(Bytes.hasPattern(exposed.get(i), 2000 + i)).as("write " + i).isTrue();
			}
		}
		assertReleased(this.a);
		assertReleased(this.b);
	}

	@Test
	void aReadPairsOnlyWithAReadableAndAWriteOnlyWithAWritable() {
		MemorySegment memory = Bytes.pattern(this.arena, 4096, 1);
		MemorySegment buffer = Bytes.pattern(this.arena, 4096, 0);
		WritableOperation writable = this.a.createWritable(Descriptor.of(memory));
		ReadableOperation readable = this.a.createReadable(Descriptor.of(memory.asSlice(0, 2048)));
		NixlException readOfWritable = catchThrowableOfType(NixlException.class,
				() -> this.b.beginRead(overTheWire(writable), Descriptor.of(buffer)));
		assertThat(readOfWritable.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(readOfWritable.getMessage()).contains("pairs only with a readable operation")
			.contains("operation_kind 2");
		NixlException writeOfReadable = catchThrowableOfType(NixlException.class,
				() -> this.b.beginWrite(overTheWire(readable), Descriptor.of(buffer.asSlice(0, 2048))));
		assertThat(writeOfReadable.status()).isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(writeOfReadable.getMessage()).contains("pairs only with a writable operation");
		assertThat(writable.status()).isEqualTo(OperationStatus.IN_PROGRESS);
		assertReleased(this.b);
	}

	@Test
	void descriptorListsMustPairInCountAndSizeAndBeOfOneKind() {
		MemorySegment memory = Bytes.pattern(this.arena, 8192, 1);
		MemorySegment buffer = Bytes.pattern(this.arena, 8192, 0);
		RdmaMetadata remote = overTheWire(
				this.a.createReadable(Descriptor.of(memory.asSlice(0, 4096)), Descriptor.of(memory.asSlice(4096))));
		assertThat(catchThrowableOfType(NixlException.class, () -> this.b.beginRead(remote, Descriptor.of(buffer))))
			.hasMessageContaining("descriptor counts differ: 1 local, 2 remote")
			.extracting(NixlException::status)
			.isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(catchThrowableOfType(NixlException.class,
				() -> this.b.beginRead(remote, Descriptor.of(buffer.asSlice(0, 4096)),
						Descriptor.of(buffer.asSlice(4096, 4095)))))
			.hasMessageContaining("descriptor sizes differ at index 1: 4095 bytes local, 4096 bytes remote");
		assertThat(catchThrowableOfType(NixlException.class, () -> this.b.beginRead(remote, List.of())))
			.hasMessageContaining("must not be empty")
			.extracting(NixlException::status)
			.isEqualTo(NixlStatus.ERROR_INVALID_PARAM);
		assertThat(catchThrowableOfType(NixlException.class, () -> this.a.createReadable(List.of(), WAIT)))
			.hasMessageContaining("must not be empty");
		assertThat(catchThrowableOfType(NixlException.class,
				() -> this.b.beginRead(remote, Descriptor.of(buffer.asSlice(0, 4096)),
						Descriptor.of(buffer.address() + 4096, 4096, Device.cuda(0)))))
			.hasMessageContaining("one memory kind")
			.hasMessageContaining("cuda:0");
		assertReleased(this.b);
	}

	@Test
	void aPassiveOperationWhosePeerNeverComesExpiresAfterItsLeaseAndDeregistersItsMemory() {
		MemorySegment memory = Bytes.pattern(this.arena, 4096, 1);
		ReadableOperation readable = this.a.createReadable(List.of(Descriptor.of(memory)), Duration.ofMillis(300));
		assertThat(this.a.agent().registrations()).hasSize(1);
		NixlException expired = catchThrowableOfType(NixlException.class, () -> readable.await(WAIT));
		assertThat(expired.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(expired.getMessage()).contains("lease expired").contains("PT0.3S").contains("deregistered");
		assertThat(readable.status()).isEqualTo(OperationStatus.ERRORED);
		assertThat(readable.failure()).containsSame(expired);
		assertReleased(this.a);
	}

	/**
	 * Whether the engine refuses access to memory once it is deregistered. The embedded
	 * engine does; NIXL over UCX on one host does not (its TCP and CMA transports do not
	 * revoke a deregistered region's key), so a peer that comes after the lease may still
	 * read.
	 * @return {@code true} if a late peer's transfer fails
	 */
	protected abstract boolean deregistrationRevokesAccess();

	@Test
	void aPeerComingAfterTheLeaseNeitherCompletesTheOperationNorLeavesANotificationBehind() {
		MemorySegment memory = Bytes.pattern(this.arena, 4096, 1);
		ReadableOperation readable = this.a.createReadable(List.of(Descriptor.of(memory)), Duration.ofMillis(200));
		RdmaMetadata remote = overTheWire(readable);
		assertThatThrownBy(() -> readable.await(WAIT)).hasMessageContaining("lease expired");
		MemorySegment buffer = Bytes.pattern(this.arena, 4096, 0);
		NixlException failure = catchThrowableOfType(NixlException.class, () -> {
			try (ReadOperation read = this.b.beginRead(remote, Descriptor.of(buffer))) {
				read.await(WAIT);
			}
		});
		if (deregistrationRevokesAccess()) {
			assertThat(failure).isNotNull();
			assertThat(Bytes.hasPattern(buffer, 0)).as("no byte of deregistered memory arrived").isTrue();
		}
		else {
			assertThat(failure).isNull();
			Eventually.until(WAIT, "the late notification was absorbed", () -> this.a.lateNotifications() == 1);
		}
		assertThat(readable.status()).isEqualTo(OperationStatus.ERRORED);
		assertReleased(this.a);
		assertReleased(this.b);
	}

	@Test
	void closingAnUnfinishedOperationCancelsItAndReleasesItsMemory() {
		MemorySegment memory = Bytes.pattern(this.arena, 4096, 1);
		WritableOperation writable = this.a.createWritable(Descriptor.of(memory));
		writable.close();
		assertThat(writable.status()).isEqualTo(OperationStatus.CANCELLED);
		assertThat(catchThrowableOfType(NixlException.class, () -> writable.await(WAIT)).status())
			.isEqualTo(NixlStatus.CANCELLED);
		assertThat(writable.completion()).isCompletedExceptionally();
		writable.close();
		assertReleased(this.a);
	}

	@Test
	void closingAWrappingConnectorCancelsItsOperationsAndLeavesTheAgentOpen() {
		NixlAgent agent = NixlAgent.create(config("wrapped"));
		this.resources.add(agent);
		Connector wrapping = Connector.wrap(agent);
		ReadableOperation readable = wrapping.createReadable(Descriptor.of(Bytes.pattern(this.arena, 4096, 1)));
		wrapping.close();
		assertThat(readable.status()).isEqualTo(OperationStatus.CANCELLED);
		assertThat(agent.isOpen()).isTrue();
		assertThat(agent.registrations()).isEmpty();
		assertThat(catchThrowableOfType(NixlException.class,
				() -> wrapping.createReadable(Descriptor.of(Bytes.pattern(this.arena, 64, 1))))
			.status()).isEqualTo(NixlStatus.CLOSED);
	}

	@Test
	void theBuiltLeaseIsWhatPassiveOperationsWaitByDefault() {
		NixlAgent agent = NixlAgent.create(config("leased"));
		this.resources.add(agent);
		Connector leased = Connector.builder(agent).lease(Duration.ofMillis(300)).build();
		this.resources.add(leased);
		assertThat(leased.lease()).isEqualTo(Duration.ofMillis(300));
		ReadableOperation readable = leased.createReadable(Descriptor.of(Bytes.pattern(this.arena, 4096, 1)));
		NixlException expired = catchThrowableOfType(NixlException.class, () -> readable.await(WAIT));
		assertThat(expired.status()).isEqualTo(NixlStatus.TIMEOUT);
		assertThat(expired.getMessage()).contains("lease expired").contains("PT0.3S");
		try (Connector defaults = Connector.wrap(agent)) {
			assertThat(defaults.lease()).as("the default").isEqualTo(Connector.DEFAULT_LEASE);
		}
	}

	@Test
	void theBuilderRefusesALeaseThatIsNotPositiveAndANegativeLinger() {
		AgentConfig config = config("refused");
		assertThatThrownBy(() -> Connector.builder(config).lease(Duration.ZERO))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("lease");
		assertThatThrownBy(() -> Connector.builder(config).peerLinger(Duration.ofMillis(-1)))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("peerLinger");
	}

	@Test
	void closingAnOwningConnectorClosesItsAgentAndCancelsItsOperations() {
		Connector owning = connector("owning");
		WritableOperation writable = owning.createWritable(Descriptor.of(Bytes.pattern(this.arena, 4096, 1)));
		owning.close();
		assertThat(writable.status()).isEqualTo(OperationStatus.CANCELLED);
		assertThat(owning.agent().isOpen()).isFalse();
	}

	@Test
	void aPeerIsLoadedOnceForOperationsTheLoadedMetadataDescribesAndInvalidatedAfterTheLast() {
		List<MemorySegment> memory = new ArrayList<>();
		List<ReadableOperation> readables = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			memory.add(Bytes.pattern(this.arena, 4096, 10 + i));
			readables.add(this.a.createReadable(Descriptor.of(memory.get(i))));
		}
		RemoteAgents peers = this.b.remoteAgents();
		long loadsBefore = peers.loads();
		// an operation that outlives the reads below holds the peer: the newest metadata
		// describes all three
		RdmaMetadata newest = overTheWire(readables.get(2));
		peers.acquire(this.a.name(), MetadataFraming.parse(newest.nixlMetadata().toByteArray()),
				newest.nixlMetadata().toByteArray(), remoteList(newest));
		for (int i = 2; i >= 0; i--) {
			MemorySegment buffer = Bytes.pattern(this.arena, 4096, 0);
			try (ReadOperation read = this.b.beginRead(overTheWire(readables.get(i)), Descriptor.of(buffer))) {
				read.await(WAIT);
			}
			assertThat(Bytes.hasPattern(buffer, 10 + i)).isTrue();
			assertThat(this.b.agent().hasRemoteMetadata(this.a.name())).isTrue();
			assertThat(peers.references(this.a.name())).isEqualTo(1);
		}
		assertThat(peers.loads() - loadsBefore).as("loads of the peer's metadata").isEqualTo(1);
		peers.release(this.a.name());
		assertThat(this.b.peersInUse()).isEmpty();
		Eventually.until(LINGER.multipliedBy(20), "the peer invalidated after the linger",
				() -> !this.b.agent().hasRemoteMetadata(this.a.name()));
		assertThat(this.b.agent().remoteAgents()).isEmpty();
	}

	@Test
	void anOperationStartedWhileThePeerLingersTakesItBackWithoutLoadingIt() {
		try (Connector lingering = Connector.builder(config("lingering")).peerLinger(Duration.ofMinutes(5)).build()) {
			RemoteAgents peers = lingering.remoteAgents();
			ReadableOperation first = this.a.createReadable(Descriptor.of(Bytes.pattern(this.arena, 4096, 4)));
			ReadableOperation second = this.a.createReadable(Descriptor.of(Bytes.pattern(this.arena, 4096, 5)));
			// the second's metadata describes both registrations
			MemorySegment buffer = Bytes.pattern(this.arena, 4096, 0);
			lingering.beginRead(overTheWire(second), Descriptor.of(buffer)).await(WAIT);
			assertThat(Bytes.hasPattern(buffer, 5)).isTrue();
			second.await(WAIT);
			assertThat(lingering.peersInUse()).isEmpty();
			assertThat(lingering.agent().hasRemoteMetadata(this.a.name())).as("kept for the linger").isTrue();
			long loads = peers.loads();
			MemorySegment again = Bytes.pattern(this.arena, 4096, 0);
			lingering.beginRead(overTheWire(first), Descriptor.of(again)).await(WAIT);
			assertThat(Bytes.hasPattern(again, 4)).isTrue();
			first.await(WAIT);
			assertThat(peers.loads()).as("loads after the peer was taken back").isEqualTo(loads);
		}
	}

	@Test
	void metadataWithNewRegistrationsOfAKnownPeerIsLoadedAgain() {
		RemoteAgents peers = this.b.remoteAgents();
		ReadableOperation first = this.a.createReadable(Descriptor.of(Bytes.pattern(this.arena, 4096, 1)));
		RdmaMetadata firstMetadata = overTheWire(first);
		peers.acquire(this.a.name(), MetadataFraming.parse(firstMetadata.nixlMetadata().toByteArray()),
				firstMetadata.nixlMetadata().toByteArray(), remoteList(firstMetadata));
		long loadsBefore = peers.loads();
		ReadableOperation second = this.a.createReadable(Descriptor.of(Bytes.pattern(this.arena, 4096, 2)));
		MemorySegment buffer = Bytes.pattern(this.arena, 4096, 0);
		this.b.beginRead(overTheWire(second), Descriptor.of(buffer)).await(WAIT);
		assertThat(Bytes.hasPattern(buffer, 2)).isTrue();
		// identical metadata is not loaded again
		MemorySegment again = Bytes.pattern(this.arena, 4096, 0);
		this.b.beginRead(firstMetadata, Descriptor.of(again)).await(WAIT);
		assertThat(Bytes.hasPattern(again, 1)).isTrue();
		assertThat(peers.loads() - loadsBefore).isEqualTo(1);
		peers.release(this.a.name());
		assertReleased(this.b);
	}

	@Test
	void aPeerLoadedBeforeTheConnectorUsedItStaysLoaded() {
		NixlAgent agent = NixlAgent.create(config("preloaded"));
		this.resources.add(agent);
		Connector wrapping = Connector.wrap(agent);
		MemorySegment memory = Bytes.pattern(this.arena, 4096, 3);
		ReadableOperation readable = this.a.createReadable(Descriptor.of(memory));
		agent.loadRemoteMetadata(this.a.agent().localMetadata());
		MemorySegment buffer = Bytes.pattern(this.arena, 4096, 0);
		wrapping.beginRead(overTheWire(readable), Descriptor.of(buffer)).await(WAIT);
		assertThat(Bytes.hasPattern(buffer, 3)).isTrue();
		assertThat(agent.hasRemoteMetadata(this.a.name())).isTrue();
		assertThat(wrapping.peersInUse()).isEmpty();
	}

	@Test
	void cudaDescriptorsMapToVramWithTheirDeviceIdAndFailClearlyWhereCudaIsMissing() {
		Descriptor cuda = Descriptor.of(0x7f00_0000_0000L, 4096, Device.cuda(3));
		assertThat(cuda.device().memoryType()).isEqualTo(MemoryType.VRAM);
		assertThat(cuda.toMemoryDescriptor()).isEqualTo(new MemoryDescriptor(0x7f00_0000_0000L, 4096, 3));
		MemorySegment memory = this.arena.allocate(4096);
		NixlException refused = catchThrowableOfType(NixlException.class,
				() -> this.a.createReadable(Descriptor.of(memory.address(), 4096, Device.cuda(0))));
		assertThat(refused).isNotNull();
		assertThat(refused.getMessage()).contains("cannot register CUDA memory ([cuda:0])");
		assertReleased(this.a);
	}

	@Test
	void anOperationOnOwnMetadataIsRefused() {
		MemorySegment memory = Bytes.pattern(this.arena, 4096, 3);
		ReadableOperation readable = this.a.createReadable(Descriptor.of(memory));
		assertThat(catchThrowableOfType(NixlException.class,
				() -> this.a.beginRead(overTheWire(readable), Descriptor.of(Bytes.pattern(this.arena, 4096, 0)))))
			.hasMessageContaining("own agent");
	}

	private static DescriptorList remoteList(RdmaMetadata metadata) {
		return new DescriptorList(metadata.memoryType(),
				metadata.descriptors().stream().map(Descriptor::toMemoryDescriptor).toList());
	}

}
