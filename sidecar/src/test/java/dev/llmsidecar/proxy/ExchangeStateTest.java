package dev.llmsidecar.proxy;

import static dev.llmsidecar.proxy.ExchangeState.CLOSED;
import static dev.llmsidecar.proxy.ExchangeState.ENDED;
import static dev.llmsidecar.proxy.ExchangeState.FAILED_AFTER_HEAD;
import static dev.llmsidecar.proxy.ExchangeState.FAILED_BEFORE_HEAD;
import static dev.llmsidecar.proxy.ExchangeState.REQUEST_BODY;
import static dev.llmsidecar.proxy.ExchangeState.REQUEST_HEAD;
import static dev.llmsidecar.proxy.ExchangeState.RESPONSE_HEAD;
import static dev.llmsidecar.proxy.ExchangeState.SENT;
import static dev.llmsidecar.proxy.ExchangeState.STREAMING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Walks the table of an exchange's life: every allowed move is made, every other one is refused. */
class ExchangeStateTest {

    /** The table as docs/architecture.md draws it, written out independently of the enum's own. */
    static final Map<ExchangeState, Set<ExchangeState>> ALLOWED = new EnumMap<>(Map.of(
            REQUEST_HEAD, EnumSet.of(REQUEST_BODY, SENT, FAILED_BEFORE_HEAD),
            REQUEST_BODY, EnumSet.of(SENT, FAILED_BEFORE_HEAD),
            SENT, EnumSet.of(SENT, RESPONSE_HEAD, FAILED_BEFORE_HEAD),
            RESPONSE_HEAD, EnumSet.of(STREAMING, ENDED, FAILED_AFTER_HEAD),
            STREAMING, EnumSet.of(STREAMING, ENDED, FAILED_AFTER_HEAD),
            ENDED, EnumSet.of(CLOSED),
            FAILED_BEFORE_HEAD, EnumSet.of(CLOSED),
            FAILED_AFTER_HEAD, EnumSet.of(CLOSED),
            CLOSED, EnumSet.noneOf(ExchangeState.class)));

    @Test
    void everyMoveOfTheTableIsAllowedAndNoOther() {
        assertThat(ALLOWED.keySet()).containsExactlyInAnyOrder(ExchangeState.values());
        for (ExchangeState from : ExchangeState.values()) {
            for (ExchangeState to : ExchangeState.values()) {
                if (ALLOWED.get(from).contains(to)) {
                    assertThat(from.to(to)).as(from + " -> " + to).isEqualTo(to);
                } else {
                    assertThatThrownBy(() -> from.to(to)).as(from + " -> " + to)
                            .isInstanceOf(IllegalStateException.class).hasMessageContaining(from + " to " + to);
                }
            }
        }
    }

    @Test
    void everyStateIsReachedFromTheHeadAndEveryLifeEndsClosed() {
        Set<ExchangeState> reached = EnumSet.of(REQUEST_HEAD);
        boolean grew = true;
        while (grew) {
            grew = false;
            for (ExchangeState s : EnumSet.copyOf(reached)) {
                for (ExchangeState t : ExchangeState.values()) {
                    if (s.allows(t) && reached.add(t)) {
                        grew = true;
                    }
                }
            }
        }
        assertThat(reached).containsExactlyInAnyOrder(ExchangeState.values());
        for (ExchangeState s : ExchangeState.values()) {
            assertThat(s == CLOSED || s.allows(CLOSED) || s.allows(s.failed())).as(s + " can end").isTrue();
        }
    }

    /**
     * A failure says whether the engine's head went to the client: before it, the client can still get the sidecar's
     * error; after it, only a cut. Every live state fails into the one the table allows it, and into no other.
     */
    @Test
    void aFailureSaysWhetherTheResponseHeadWentToTheClient() {
        for (ExchangeState s : EnumSet.of(REQUEST_HEAD, REQUEST_BODY, SENT)) {
            assertThat(s.failed()).as(s + " fails").isEqualTo(FAILED_BEFORE_HEAD);
            assertThat(s.allows(FAILED_AFTER_HEAD)).as(s + " -> FAILED_AFTER_HEAD").isFalse();
        }
        for (ExchangeState s : EnumSet.of(RESPONSE_HEAD, STREAMING)) {
            assertThat(s.failed()).as(s + " fails").isEqualTo(FAILED_AFTER_HEAD);
            assertThat(s.allows(FAILED_BEFORE_HEAD)).as(s + " -> FAILED_BEFORE_HEAD").isFalse();
        }
        for (ExchangeState s : ExchangeState.values()) {
            if (!s.over()) {
                assertThat(s.to(s.failed())).as(s + " fails where the table says").isEqualTo(s.failed());
            }
        }
    }

    @Test
    void overRespondingAndRequestSentSayWhereTheLifeIs() {
        assertThat(EnumSet.allOf(ExchangeState.class).stream().filter(ExchangeState::over))
                .containsExactlyInAnyOrder(ENDED, FAILED_BEFORE_HEAD, FAILED_AFTER_HEAD, CLOSED);
        assertThat(EnumSet.allOf(ExchangeState.class).stream().filter(ExchangeState::responding))
                .containsExactlyInAnyOrder(RESPONSE_HEAD, STREAMING);
        assertThat(EnumSet.allOf(ExchangeState.class).stream().filter(ExchangeState::requestSent))
                .containsExactlyInAnyOrder(SENT, RESPONSE_HEAD, STREAMING);
    }
}
