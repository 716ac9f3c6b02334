package dev.llmsidecar.proxy;

import static dev.llmsidecar.proxy.ExchangeState.CLOSED;
import static dev.llmsidecar.proxy.ExchangeState.ENDED;
import static dev.llmsidecar.proxy.ExchangeState.FAILED;
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
            REQUEST_HEAD, EnumSet.of(REQUEST_BODY, SENT, FAILED),
            REQUEST_BODY, EnumSet.of(SENT, FAILED),
            SENT, EnumSet.of(SENT, RESPONSE_HEAD, FAILED),
            RESPONSE_HEAD, EnumSet.of(STREAMING, ENDED, FAILED),
            STREAMING, EnumSet.of(STREAMING, ENDED, FAILED),
            ENDED, EnumSet.of(CLOSED),
            FAILED, EnumSet.of(CLOSED),
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
            assertThat(s == CLOSED || s.allows(CLOSED) || s.allows(FAILED)).as(s + " can end").isTrue();
        }
    }

    @Test
    void overAndRespondingSayWhereTheLifeIs() {
        assertThat(EnumSet.allOf(ExchangeState.class).stream().filter(ExchangeState::over))
                .containsExactlyInAnyOrder(ENDED, FAILED, CLOSED);
        assertThat(EnumSet.allOf(ExchangeState.class).stream().filter(ExchangeState::responding))
                .containsExactlyInAnyOrder(RESPONSE_HEAD, STREAMING);
    }
}
