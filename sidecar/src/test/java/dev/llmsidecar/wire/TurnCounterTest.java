package dev.llmsidecar.wire;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.wire.TurnCounter.After;
import dev.llmsidecar.wire.TurnCounter.Position;
import org.junit.jupiter.api.Test;

/** Issue 45's turn rules over role sequences. */
class TurnCounterTest {

    static Position of(String... roles) {
        TurnCounter counter = new TurnCounter();
        for (String role : roles) {
            counter.message(TurnCounter.ofRole(role));
        }
        return counter.position();
    }

    @Test
    void plainChat() {
        assertThat(of("system", "user")).isEqualTo(new Position(1, After.USER));
        assertThat(of("system", "user", "assistant", "user")).isEqualTo(new Position(2, After.USER));
        assertThat(of("developer", "user", "assistant", "user", "assistant", "user")).isEqualTo(new Position(3, After.USER));
    }

    @Test
    void aTrailingModelRunIsAPrefillNotATurn() {
        assertThat(of("user", "assistant")).isEqualTo(new Position(1, After.USER));
        assertThat(of("user", "assistant", "user", "assistant", "assistant")).isEqualTo(new Position(2, After.USER));
    }

    @Test
    void agentLoopsWithToolResultsAndParallelCalls() {
        assertThat(of("system", "user", "assistant", "tool")).isEqualTo(new Position(2, After.TOOL));
        assertThat(of("user", "assistant", "tool", "tool")).as("parallel tool calls: one turn")
                .isEqualTo(new Position(2, After.TOOL));
        assertThat(of("user", "assistant", "tool", "assistant", "tool", "user")).as("a user message after a tool result")
                .isEqualTo(new Position(3, After.USER));
        assertThat(of("user", "assistant", "function")).isEqualTo(new Position(2, After.TOOL));
    }

    @Test
    void systemMessagesAnywhereCountForNothing() {
        assertThat(of("user", "assistant", "system", "user")).isEqualTo(new Position(2, After.USER));
    }

    @Test
    void bucketsAreBounded() {
        assertThat(new Position(1, After.USER).bucket()).isEqualTo("1");
        assertThat(new Position(2, After.TOOL).bucket()).isEqualTo("2");
        assertThat(new Position(4, After.USER).bucket()).isEqualTo("3-4");
        assertThat(new Position(5, After.USER).bucket()).isEqualTo("5-8");
        assertThat(new Position(16, After.USER).bucket()).isEqualTo("9-16");
        assertThat(new Position(17, After.USER).bucket()).isEqualTo("17+");
        assertThat(new Position(100_000, After.USER).bucket()).isEqualTo("17+");
        assertThat(new Position(0, After.USER).bucket()).isEqualTo("unknown");
    }
}
