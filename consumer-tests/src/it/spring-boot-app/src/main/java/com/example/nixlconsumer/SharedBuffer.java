package com.example.nixlconsumer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import dev.nixl4j.MemoryDescriptor;
import dev.nixl4j.NixlAgent;
import dev.nixl4j.Registration;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * One MiB of host memory filled with {@link #patternByte(long)} and registered with the agent.
 * It is registered while the context is built, so the metadata the starter publishes when the
 * application starts already carries it.
 */
@Component
public class SharedBuffer implements DisposableBean {

	/** Size of the buffer. */
	public static final int SIZE = 1 << 20;

	private final Arena arena = Arena.ofShared();

	private final MemorySegment segment;

	private final Registration registration;

	SharedBuffer(NixlAgent agent) {
		this.segment = this.arena.allocate(SIZE, 4096);
		for (long i = 0; i < SIZE; i++) {
			this.segment.set(ValueLayout.JAVA_BYTE, i, patternByte(i));
		}
		this.registration = agent.register(this.segment);
	}

	/**
	 * The byte at an offset of the buffer; the consumer tests compute the same.
	 * @param offset the offset
	 * @return the byte
	 */
	public static byte patternByte(long offset) {
		return (byte) ((offset * 31 + (offset >>> 11)) ^ 0x5A);
	}

	/**
	 * Where the buffer is, for a peer's descriptor.
	 * @return the buffer's descriptor
	 */
	public MemoryDescriptor descriptor() {
		return MemoryDescriptor.of(this.segment);
	}

	@Override
	public void destroy() {
		this.registration.close();
		this.arena.close();
	}

}
