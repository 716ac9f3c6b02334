package dev.llmsidecar.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The reports' table writer and number formats. */
class MarkdownTableTest {

    @Test
    void headerAlignmentAndRows() {
        MarkdownTable t = new MarkdownTable("streams", "target", "p99").align("rlr");
        assertThat(t.isEmpty()).isTrue();
        t.row(1, "direct", Fmt.fixed(3722.4, 0)).row(100, "a|b", "");
        assertThat(t.toString()).isEqualTo("""
                | streams | target | p99 |
                |---:|---|---:|
                | 1 | direct | 3722 |
                | 100 | a\\|b |  |
                """);
        assertThat(new MarkdownTable("a", "b").toString()).isEqualTo("| a | b |\n|---|---|\n");
    }

    @Test
    void mistakesAreRefused() {
        assertThatThrownBy(() -> new MarkdownTable("a", "b").row(1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MarkdownTable("a", "b").align("rx")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MarkdownTable("a", "b").align("r")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void numbers() {
        assertThat(Fmt.sig(0.0123456, 3)).isEqualTo("0.0123");
        assertThat(Fmt.sig(123.456, 3)).isEqualTo("123");
        assertThat(Fmt.sig(1.5, 3)).isEqualTo("1.5");
        assertThat(Fmt.sig(98765.4, 3)).isEqualTo("98765");
        assertThat(Fmt.sig(0.000254, 2)).isEqualTo("0.00025");
        assertThat(Fmt.sig(0, 3)).isEqualTo("0");
        assertThat(Fmt.sig(Double.NaN, 3)).isEqualTo(Fmt.NONE);
        assertThat(Fmt.sig(Double.POSITIVE_INFINITY, 3)).isEqualTo("+Inf");
        assertThat(Fmt.fixed(2.345, 1)).isEqualTo("2.3");
        assertThat(Fmt.fixed(1e6, 0)).isEqualTo("1000000");
        assertThat(Fmt.fixed(Double.NaN, 2)).isEqualTo(Fmt.NONE);
        assertThat(Fmt.signed(12.4, 0)).isEqualTo("+12");
        assertThat(Fmt.signed(-3, 0)).isEqualTo("-3");
    }
}
