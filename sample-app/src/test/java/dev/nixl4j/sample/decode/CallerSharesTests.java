package dev.nixl4j.sample.decode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.nixl4j.sample.SampleException;
import dev.nixl4j.sample.SampleProperties;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The decode worker's shares per caller: per address, for all callers without a token
 * together, and in all; refusals say when to retry, and nothing is taken by them.
 */
class CallerSharesTests {

	private static final Duration RETRY = Duration.ofSeconds(2);

	private static final Caller ONE = new Caller("address 10.0.0.1", false);

	private static final Caller TWO = new Caller("address 10.0.0.2", false);

	private final SampleProperties.Generate properties = new SampleProperties.Generate();

	@Test
	void defaultsArePartsOfTheCacheAndOfTheRequests() {
		CallerShares shares = new CallerShares(this.properties, 512, RETRY);
		assertThat(shares.maxRequests()).isEqualTo(64);
		assertThat(shares.perCallerBlocks()).isEqualTo(128);
		assertThat(shares.anonymousBlocks()).isEqualTo(256);
		CallerShares tiny = new CallerShares(this.properties, 2, RETRY);
		assertThat(tiny.perCallerBlocks()).isEqualTo(1);
		assertThat(tiny.anonymousBlocks()).isEqualTo(1);
	}

	@Test
	void aCallerOverItsRequestsIsRefusedWith429AndOthersGoOn() {
		CallerShares shares = new CallerShares(this.properties, 512, RETRY);
		List<CallerShares.Admission> held = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			held.add(shares.admit(ONE, 1));
		}
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> shares.admit(ONE, 1)).satisfies((ex) -> {
			assertThat(ex.status()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(ex.title()).isEqualTo("Caller over its share");
			assertThat(ex.retryAfter()).isEqualTo(RETRY);
		}).withMessageContaining("sample.generate.max-concurrent-requests-per-caller");
		held.add(shares.admit(TWO, 1));
		assertThat(shares.held(ONE)).containsExactly(9, 9, 9, 8, 8);
		held.forEach(CallerShares.Admission::close);
		// closing twice gives back once
		held.getFirst().close();
		assertThat(shares.held(ONE)).containsExactly(0, 0, 0, 0, 0);
	}

	@Test
	void aCallerOverItsBlocksIsRefusedWith429AndARequestOverAWholeShareWithoutRetryAfter() {
		CallerShares shares = new CallerShares(this.properties, 512, RETRY);
		try (CallerShares.Admission first = shares.admit(ONE, 100)) {
			assertThatExceptionOfType(SampleException.class).isThrownBy(() -> shares.admit(ONE, 29))
				.satisfies((ex) -> assertThat(ex.status()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS))
				.satisfies((ex) -> assertThat(ex.retryAfter()).isEqualTo(RETRY))
				.withMessageContaining("hold 100 of the 128")
				.withMessageContaining("sample.generate.max-blocks-per-caller");
			shares.admit(ONE, 28).close();
		}
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> shares.admit(ONE, 129)).satisfies((ex) -> {
			assertThat(ex.status()).isEqualTo(HttpStatus.TOO_MANY_REQUESTS);
			assertThat(ex.title()).isEqualTo("Request over the caller's share");
			assertThat(ex.retryAfter()).isNull();
		}).withMessageContaining("needs 129 KV blocks");
		// a token holder is held to the total only
		shares.admit(Caller.TOKEN_HOLDER, 512).close();
	}

	@Test
	void callersWithoutATokenTogetherAreRefusedWith503AndTokenHoldersKeepTheRest() {
		this.properties.setMaxConcurrentRequests(8);
		CallerShares shares = new CallerShares(this.properties, 512, RETRY);
		List<CallerShares.Admission> held = new ArrayList<>();
		// 128 + 128 blocks at two addresses: all that callers without a token may hold
		held.add(shares.admit(ONE, 128));
		held.add(shares.admit(TWO, 128));
		Caller third = new Caller("address 10.0.0.3", false);
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> shares.admit(third, 1)).satisfies((ex) -> {
			assertThat(ex.status()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
			assertThat(ex.retryAfter()).isEqualTo(RETRY);
		}).withMessageContaining("sample.generate.max-anonymous-blocks");
		// 6 of 8 requests (three quarters) for callers without a token
		for (int i = 0; i < 4; i++) {
			held.add(shares.admit(new Caller("address 10.0.1." + i, false), 0));
		}
		assertThatExceptionOfType(SampleException.class)
			.isThrownBy(() -> shares.admit(new Caller("address 10.0.2.1", false), 0))
			.satisfies((ex) -> assertThat(ex.status()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE))
			.withMessageContaining("sample.generate.max-concurrent-anonymous-requests");
		held.add(shares.admit(Caller.TOKEN_HOLDER, 128));
		held.add(shares.admit(Caller.TOKEN_HOLDER, 128));
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> shares.admit(Caller.TOKEN_HOLDER, 1))
			.satisfies((ex) -> {
				assertThat(ex.status()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
				assertThat(ex.title()).isEqualTo("Too many requests");
				assertThat(ex.retryAfter()).isEqualTo(RETRY);
			})
			.withMessageContaining("serves 8 requests at once (sample.generate.max-concurrent-requests)");
		held.forEach(CallerShares.Admission::close);
		assertThat(shares.held(ONE)).containsExactly(0, 0, 0, 0, 0);
	}

	@Test
	void aSlotIsTakenBeforeTheBodyAndItsBlocksAfterAndARefusalOfBlocksKeepsNothingOnceClosed() {
		CallerShares shares = new CallerShares(this.properties, 512, RETRY);
		CallerShares.Admission admission = shares.admitRequest(ONE);
		assertThat(shares.held(ONE)).containsExactly(1, 1, 0, 1, 0);
		assertThatExceptionOfType(SampleException.class).isThrownBy(() -> admission.takeBlocks(129));
		admission.takeBlocks(100);
		assertThat(shares.held(ONE)).containsExactly(1, 1, 100, 1, 100);
		admission.close();
		assertThat(shares.held(ONE)).containsExactly(0, 0, 0, 0, 0);
	}

	@Test
	void callersAreTheirIpv4AddressOrTheirIpv6Prefix() {
		assertThat(Caller.address("127.0.0.2")).isEqualTo("127.0.0.2");
		assertThat(Caller.address("2001:db8:1:2:aaaa:bbbb:cccc:dddd")).isEqualTo("2001:db8:1:2:0:0:0:0/64");
		assertThat(Caller.address("2001:db8:1:2::1")).isEqualTo(Caller.address("2001:db8:1:2:ffff::9"));
		assertThat(Caller.address("::ffff:10.1.2.3")).isEqualTo("10.1.2.3");
		assertThat(Caller.address("not an address")).isEqualTo("not an address");
	}

}
