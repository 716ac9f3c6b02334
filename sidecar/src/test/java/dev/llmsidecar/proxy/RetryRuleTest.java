package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class RetryRuleTest {

    private static final IOException CLOSED = new IOException("closed");

    @Test
    void theKeepAliveRaceIsRetriedOnceWithTheWholeBodyHeld() {
        RetryRule rule = new RetryRule();
        assertThat(rule.retryAfterClose(true, true, true, CLOSED)).isTrue();
        assertThat(rule.retryAfterClose(true, true, true, CLOSED)).as("never twice").isFalse();
    }

    @Test
    void notWithoutTheWholeBodyNotOnAFreshConnectionNotAfterAByteNotOnATimeout() {
        assertThat(new RetryRule().retryAfterClose(false, true, true, CLOSED)).as("body streamed").isFalse();
        assertThat(new RetryRule().retryAfterClose(true, false, true, CLOSED)).as("fresh connection").isFalse();
        assertThat(new RetryRule().retryAfterClose(true, true, false, CLOSED)).as("a byte was read").isFalse();
        assertThat(new RetryRule().retryAfterClose(true, true, true, new TimeoutException())).as("timeout").isFalse();
    }

    @Test
    void aResendSpendsTheOneSecondAttempt() {
        RetryRule rule = new RetryRule();
        rule.resent();
        assertThat(rule.retryAfterClose(true, true, true, CLOSED)).isFalse();
    }
}
