package dev.llmsidecar.measure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.TestConfigs;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The priority label: from the body's priority, else a header; bounded by the allowlist. */
class PriorityLabelsTest {

    static PriorityLabels priorities(Map<String, String> config) {
        return new PriorityLabels(TestConfigs.sidecar("http://127.0.0.1:1", config).priority());
    }

    @Test
    void offByDefault() {
        PriorityLabels p = priorities(Map.of());
        assertThat(p.enabled()).isFalse();
        assertThat(p.label(1, name -> "2")).isEqualTo(PriorityLabels.OFF);
    }

    @Test
    void theBodyFirstThenTheHeaderBounded() {
        PriorityLabels p = priorities(Map.of("sidecar.priority.enabled", "true", "sidecar.priority.header",
                "x-request-priority"));
        var headers = TenantLabelsTest.headers("X-Request-Priority", "2");
        assertThat(p.label(0, headers)).as("vLLM schedules by the body's").isEqualTo("0");
        assertThat(p.label(-1, headers)).isEqualTo("-1");
        assertThat(p.label(null, headers)).isEqualTo("2");
        assertThat(p.label(null, TenantLabelsTest.headers("x-request-priority", " +1 "))).isEqualTo("1");
        assertThat(p.label(null, TenantLabelsTest.headers())).isEqualTo(PriorityLabels.NONE_NAMED);
        assertThat(p.label(7, headers)).isEqualTo(PriorityLabels.OTHER);
        for (String bad : new String[] {"high", "", "1.5", "99999999999", "-", "0x1"}) {
            assertThat(p.label(null, TenantLabelsTest.headers("x-request-priority", bad))).as(bad)
                    .isEqualTo(PriorityLabels.OTHER);
        }
        Set<String> labels = new HashSet<>();
        for (int i = -1000; i < 1000; i++) {
            labels.add(p.label(i, headers));
            labels.add(p.label(null, TenantLabelsTest.headers("x-request-priority", Integer.toString(i * 7919))));
        }
        assertThat(labels).containsExactlyInAnyOrder("-1", "0", "1", "2", "other");
    }

    @Test
    void withoutAHeaderOnlyTheBodyNamesIt() {
        PriorityLabels p = priorities(Map.of("sidecar.priority.enabled", "true", "sidecar.priority.values", "0,10"));
        assertThat(p.label(null, TenantLabelsTest.headers("x-request-priority", "10"))).isEqualTo("none");
        assertThat(p.label(10, TenantLabelsTest.headers())).isEqualTo("10");
    }
}
