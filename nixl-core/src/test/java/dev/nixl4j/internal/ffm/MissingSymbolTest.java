package dev.nixl4j.internal.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;

import dev.nixl4j.NixlException;
import dev.nixl4j.NixlStatus;
import org.junit.jupiter.api.Test;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A function the loaded library does not export breaks only the calls that need it, each
 * with an exception of its own: bound against the C library, which exports {@code abs}
 * but none of NIXL's functions.
 */
class MissingSymbolTest {

	private static final String LIBC = "libc.so.6";

	private static final SymbolLookup libc = SymbolLookup.libraryLookup(LIBC, Arena.global());

	private static final MethodHandle getLocalMd = Downcalls.bind(libc, LIBC, "nixl_capi_get_local_md",
			FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));

	@Test
	void eachCallThrowsItsOwnExceptionNamingTheAgentPeerSymbolAndLibrary() {
		NixlException first = callGetLocalMd("prefill", "decode");
		first.addSuppressed(new IllegalStateException("cleanup of the first call failed"));
		NixlException second = callGetLocalMd("prefill", "decode");

		assertThat(second).isNotSameAs(first);
		assertThat(second.getSuppressed()).isEmpty();
		for (NixlException failure : new NixlException[] { first, second }) {
			assertThat(failure.status()).isEqualTo(NixlStatus.NOT_SUPPORTED);
			assertThat(failure.operation()).isEqualTo("get_local_md");
			assertThat(failure.agent()).isEqualTo("prefill");
			assertThat(failure.remoteAgent()).isEqualTo("decode");
			assertThat(failure.detail()).contains("nixl_capi_get_local_md").contains(LIBC);
			assertThat(Arrays.stream(failure.getStackTrace()))
				.anyMatch((frame) -> frame.getClassName().equals(MissingSymbolTest.class.getName())
						&& frame.getMethodName().equals("callGetLocalMd"));
		}
	}

	@Test
	void aFunctionTheLibraryExportsStillWorks() throws Throwable {
		MethodHandle abs = Downcalls.bind(libc, LIBC, "abs", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

		assertThat((int) abs.invokeExact(-3)).isEqualTo(3);
	}

	/** Calls the function as the native engine does, failing as it fails. */
	private static NixlException callGetLocalMd(String agent, String remoteAgent) {
		try {
			int rc = (int) getLocalMd.invokeExact(MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL);
			return fail("returned " + rc);
		}
		catch (Throwable ex) {
			RuntimeException failure = NativeCalls.failure(ex, "get_local_md", agent, remoteAgent);
			assertThat(failure).isInstanceOf(NixlException.class);
			return (NixlException) failure;
		}
	}

}
