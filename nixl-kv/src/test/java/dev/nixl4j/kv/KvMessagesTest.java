package dev.nixl4j.kv;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reading the consumers' done and release messages: the generation digest a done message
 * may carry, the three-field form of consumers that send none, and fields that are
 * refused.
 */
class KvMessagesTest {

	private static final String PREFIX = KvMessages.DEFAULT_PREFIX;

	private static String text(byte[] message) {
		return new String(message, StandardCharsets.UTF_8);
	}

	@Test
	void aDoneMessageCarriesTheGenerationDigestBackAsWritten() {
		for (long generation : new long[] { 1, 0x7fff_ffff_ffff_ffffL, -1, 0x8000_0000_0000_0000L, -42 }) {
			String message = text(KvMessages.done(PREFIX, "req-1", 77, 2, generation));

			assertThat(KvMessages.parseDone(PREFIX, message)).as(message)
				.isEqualTo(new KvMessages.Done("req-1", 77, 2, generation));
		}
	}

	@Test
	void theThreeFieldDoneMessageIsReadAsNoGenerationGiven() {
		String old = PREFIX + "done:req-1:77:0";

		assertThat(text(KvMessages.done(PREFIX, "req-1", 77, 0))).isEqualTo(old);
		assertThat(text(KvMessages.done(PREFIX, "req-1", 77, 0, KvMessages.NO_GENERATION))).isEqualTo(old);
		assertThat(KvMessages.parseDone(PREFIX, old))
			.isEqualTo(new KvMessages.Done("req-1", 77, 0, KvMessages.NO_GENERATION));
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "0", "00", "1A", "+1", "-1", "0x1", "g", " 1", "1 ", "11112222333344445",
			"ffffffffffffffff0" })
	void aDoneMessageWithABadGenerationIsRefused(String generation) {
		assertThat(KvMessages.parseDone(PREFIX, PREFIX + "done:req-1:77:0:" + generation)).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "done:req-1:77", "done:req-1:77:0:1:2", "done::77:0", "done:req-1:x:0", "done:req-1:77:x",
			"done:req-1:77:0:", "other:req-1:77:0" })
	void doneMessagesWithMissingExtraOrBadFieldsAreRefused(String tail) {
		assertThat(KvMessages.parseDone(PREFIX, PREFIX + tail)).isNull();
	}

	@Test
	void aDoneMessageCarriesTheReadIdBackWithOrWithoutAGeneration() {
		for (long generation : new long[] { KvMessages.NO_GENERATION, 1, -42 }) {
			for (long read : new long[] { 1, 0x7fff_ffff_ffff_ffffL, -1 }) {
				String message = text(KvMessages.done(PREFIX, "req-1", 77, 2, generation, read));

				assertThat(message).endsWith(":r" + Long.toHexString(read));
				assertThat(KvMessages.parseDone(PREFIX, message)).as(message)
					.isEqualTo(new KvMessages.Done("req-1", 77, 2, generation, read));
			}
		}
	}

	@ParameterizedTest
	@ValueSource(strings = { "done:req-1:77:0:r", "done:req-1:77:0:r0", "done:req-1:77:0:rA", "done:req-1:77:0:1:r",
			"done:req-1:77:0:1:r11112222333344445", "done:req-1:77:0:r1:1", "done:req-1:77:0:1:r1:r1",
			"done:req-1:77:r1" })
	void aDoneMessageWithABadReadIdIsRefused(String tail) {
		assertThat(KvMessages.parseDone(PREFIX, PREFIX + tail)).isNull();
	}

	@Test
	void aReleaseMessageTakesNoReadId() {
		assertThat(KvMessages.parseRelease(PREFIX, PREFIX + "release:req-1:77:1:r1")).isNull();
	}

	@Test
	void aReleaseMessageTakesNoGeneration() {
		assertThat(KvMessages.parseRelease(PREFIX, text(KvMessages.release(PREFIX, "req-1", 77, 1))))
			.isEqualTo(new KvMessages.Done("req-1", 77, 1, KvMessages.NO_GENERATION));
		assertThat(KvMessages.parseRelease(PREFIX, PREFIX + "release:req-1:77:1:abc")).isNull();
	}

	@Test
	void theStaleAnswerIsReadBack() {
		String ackPrefix = KvMessages.ackPrefix(PREFIX, "req-1", 77, 0);

		assertThat(
				KvMessages.parseAck(ackPrefix, text(KvMessages.ack(PREFIX, "req-1", 77, 0, LeaseConfirmation.STALE))))
			.isEqualTo(LeaseConfirmation.STALE);
	}

	@Test
	void aDoneMessageCarriesThePullsTraceparentLastAndOnlyWhenGiven() {
		KvTraceContext trace = new KvTraceContext("00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01", "");
		String traced = text(KvMessages.done(PREFIX, "req-1", 77, 2, 0x1f, 0xab, trace));

		assertThat(traced).isEqualTo(PREFIX + "done:req-1:77:2:1f:rab:t" + trace.traceparent());
		assertThat(KvMessages.parseDone(PREFIX, traced))
			.isEqualTo(new KvMessages.Done("req-1", 77, 2, 0x1f, 0xab, trace));
		assertThat(text(KvMessages.done(PREFIX, "req-1", 77, 2, 0x1f, 0xab, null))).as("as issue 21's consumers sent")
			.isEqualTo(PREFIX + "done:req-1:77:2:1f:rab");
		assertThat(KvMessages.parseDone(PREFIX, PREFIX + "done:req-1:77:2:t" + trace.traceparent()))
			.isEqualTo(new KvMessages.Done("req-1", 77, 2, KvMessages.NO_GENERATION, KvMessages.NO_READ, trace));
	}

	@ParameterizedTest
	@ValueSource(strings = { "t", "t00-zz", "tff-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01" })
	void aDoneMessageWithAMalformedTraceparentCountsWithoutIt(String field) {
		assertThat(KvMessages.parseDone(PREFIX, PREFIX + "done:req-1:77:2:1f:rab:" + field))
			.isEqualTo(new KvMessages.Done("req-1", 77, 2, 0x1f, 0xab, null));
	}

}
