package com.example.nixlconsumer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

import dev.nixl4j.DescriptorList;
import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.MemoryType;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;
import dev.nixl4j.Transfer;
import dev.nixl4j.XferOp;
import dev.nixl4j.metadata.MetadataExchange;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code GET /buffer} names this agent and its shared buffer; {@code POST /read} pulls a peer's
 * shared buffer through NIXL and answers its bytes.
 */
@RestController
public class TransferController {

	private static final int MAX_READ = 64 << 20;

	private static final Duration FETCH_TIMEOUT = Duration.ofSeconds(10);

	private static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(30);

	private final NixlAgent agent;

	private final MetadataExchange exchange;

	private final SharedBuffer buffer;

	TransferController(NixlAgent agent, MetadataExchange exchange, SharedBuffer buffer) {
		this.agent = agent;
		this.exchange = exchange;
		this.buffer = buffer;
	}

	/**
	 * This agent's name and the descriptor of its shared buffer.
	 * @return the peer's view of the buffer
	 */
	@GetMapping("/buffer")
	public BufferDocument buffer() {
		MemoryDescriptor descriptor = this.buffer.descriptor();
		return new BufferDocument(this.agent.name(), this.agent.engine().name(), descriptor.address(),
				descriptor.length(), descriptor.deviceId());
	}

	/**
	 * Reads a peer's memory with a NIXL READ, after loading the peer's metadata from the registry.
	 * @param peer the peer's agent name
	 * @param address start of the peer's memory
	 * @param length how many bytes, at most 64 MiB
	 * @return the bytes read
	 */
	@PostMapping(path = "/read", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
	public byte[] read(@RequestParam("agent") String peer, @RequestParam("address") long address,
			@RequestParam("length") int length) {
		if (length <= 0 || length > MAX_READ) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"length must be between 1 and " + MAX_READ + ", was " + length);
		}
		if (!this.agent.hasRemoteMetadata(peer)) {
			this.agent.loadRemoteMetadata(this.exchange.fetch(peer, FETCH_TIMEOUT));
		}
		DescriptorList remote = DescriptorList.of(MemoryType.DRAM, new MemoryDescriptor(address, length, 0));
		// Shared: the engine's threads write into it.
		try (Arena arena = Arena.ofShared()) {
			MemorySegment local = arena.allocate(length, 4096);
			try (Registration registration = this.agent.register(local);
					Transfer transfer = this.agent.transfer(XferOp.READ, DescriptorList.of(local), remote, peer, null)) {
				transfer.await(TRANSFER_TIMEOUT);
			}
			return local.toArray(ValueLayout.JAVA_BYTE);
		}
	}

	/**
	 * A shared buffer as a peer addresses it.
	 * @param agent the agent that registered it
	 * @param engine the engine behind that agent
	 * @param address its start
	 * @param length its size in bytes
	 * @param deviceId its device (0 for host memory)
	 */
	public record BufferDocument(String agent, String engine, long address, long length, long deviceId) {
	}

}
