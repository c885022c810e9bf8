package dev.nixl4j;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * The shared duration checks, and the configurations that use them: a refused value names
 * the setting and says what is allowed, in the same words everywhere.
 */
@Timeout(10)
class SettingChecksTest {

	@Test
	void aPositiveDurationMustBeMoreThanZero() {
		assertThat(SettingChecks.positiveProblem(Duration.ofNanos(1))).isNull();
		assertThat(SettingChecks.positiveProblem(Duration.ZERO)).isEqualTo("must be a positive duration");
		assertThat(SettingChecks.positiveProblem(Duration.ofSeconds(-1))).isEqualTo("must be a positive duration");
		assertThat(SettingChecks.positiveProblem(null)).isEqualTo("must be a positive duration");
		assertThat(SettingChecks.requirePositive(Duration.ofMillis(5), "lease")).isEqualTo(Duration.ofMillis(5));
		assertThatIllegalArgumentException().isThrownBy(() -> SettingChecks.requirePositive(Duration.ZERO, "lease"))
			.withMessage("lease must be a positive duration, was PT0S");
		assertThatNullPointerException().isThrownBy(() -> SettingChecks.requirePositive(null, "lease"))
			.withMessage("lease");
	}

	@Test
	void aNotNegativeDurationMayBeZero() {
		assertThat(SettingChecks.notNegativeProblem(Duration.ZERO)).isNull();
		assertThat(SettingChecks.notNegativeProblem(Duration.ofNanos(-1)))
			.isEqualTo("must be zero or a positive duration");
		assertThat(SettingChecks.requireNotNegative(Duration.ZERO, "peerLinger")).isZero();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> SettingChecks.requireNotNegative(Duration.ofSeconds(-2), "peerLinger"))
			.withMessage("peerLinger must be zero or a positive duration, was PT-2S");
	}

	@Test
	void configurationsRefuseDurationsInTheSameWords() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> AgentConfig.builder("a").stallTimeout(Duration.ZERO).build())
			.withMessage("stallTimeout must be a positive duration, was PT0S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> AgentConfig.builder("a").nativeProgressDelay(Duration.ofMillis(-1)).build())
			.withMessage("nativeProgressDelay must be zero or a positive duration, was PT-0.001S");
		assertThat(AgentConfig.builder("a").nativeProgressDelay(Duration.ZERO).build().nativeProgressDelay()).isZero();
		assertThatIllegalArgumentException()
			.isThrownBy(() -> EmbeddedOptions.builder().helloTimeout(Duration.ofSeconds(-5)).build())
			.withMessage("embedded helloTimeout must be a positive duration, was PT-5S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> EmbeddedOptions.builder().frameTimeout(Duration.ofDays(2)).build())
			.withMessage("embedded frameTimeout must be at most PT24H, was PT48H");
	}

	@Test
	void theBuildersDefaultsAreTheNamedConstants() {
		AgentConfig config = AgentConfig.builder("a").build();
		assertThat(config.engine()).isEqualTo(AgentConfig.DEFAULT_ENGINE);
		assertThat(config.backends()).containsExactly(BackendConfig.of(AgentConfig.DEFAULT_BACKEND_PLUGIN));
		assertThat(config.threadSync()).isEqualTo(AgentConfig.DEFAULT_THREAD_SYNC);
		assertThat(config.nativeProgressThread()).isEqualTo(AgentConfig.DEFAULT_NATIVE_PROGRESS_THREAD);
		assertThat(config.nativeProgressDelay()).isEqualTo(AgentConfig.DEFAULT_NATIVE_PROGRESS_DELAY);
		assertThat(config.listenerPort()).isEqualTo(AgentConfig.DEFAULT_LISTENER_PORT);
		assertThat(config.stallTimeout()).isEqualTo(AgentConfig.DEFAULT_STALL_TIMEOUT);
		assertThat(config.mailboxCapacity()).isEqualTo(AgentConfig.DEFAULT_MAILBOX_CAPACITY);
		assertThat(config.embedded().inProcessCopies()).isEqualTo(EmbeddedOptions.DEFAULT_IN_PROCESS_COPIES);
	}

}
