package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmsidecar.metrics.CumulativeHistogram;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A scrape of the sidecar's metrics as the sweep reads it: selections summed over the label sets that match. */
class SidecarScrapeTest {

    @Test
    void theSidecarsExpositionIsSummedOverLabelSets() {
        String text = """
                # HELP gen_ai_server_time_to_first_token_seconds TTFT
                # TYPE gen_ai_server_time_to_first_token_seconds histogram
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="a",le="0.1",} 3.0
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="a",le="0.2",} 5.0
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="a",le="+Inf",} 5.0
                gen_ai_server_time_to_first_token_seconds_count{model="m",operation="chat",streaming="true",tenant="a",} 5.0
                gen_ai_server_time_to_first_token_seconds_sum{model="m",operation="chat",streaming="true",tenant="a",} 0.5
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="b",le="0.1",} 1.0 # {trace_id="abc",span_id="def"} 0.05 1.7e9
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="b",le="0.2",} 4.0
                gen_ai_server_time_to_first_token_seconds_bucket{model="m",operation="chat",streaming="true",tenant="b",le="+Inf",} 5.0
                gen_ai_server_time_to_first_token_seconds_count{model="m",operation="chat",streaming="true",tenant="b",} 5.0
                gen_ai_server_time_to_first_token_seconds_sum{model="m",operation="chat",streaming="true",tenant="b",} 1.5
                gen_ai_server_time_to_first_token_seconds_bucket{model="other",operation="chat",streaming="true",le="0.1",} 100.0
                gen_ai_server_time_to_first_token_seconds_bucket{model="other",operation="chat",streaming="true",le="+Inf",} 100.0
                llm_sidecar_requests_total{model="m",operation="chat",outcome="ok",streaming="true",} 9.0
                llm_sidecar_requests_total{model="m",operation="chat",outcome="upstream_error",streaming="true",} 1.0
                llm_sidecar_saturation_knee_requests NaN
                llm_sidecar_requests_in_flight 2.0
                weird_label{path="a \\"quoted\\", comma",x="y"} 7
                """;
        SidecarScrape e = SidecarScrape.parse(text);
        CumulativeHistogram h = e.histogram("gen_ai_server_time_to_first_token_seconds",
                SidecarSeries.streams("m", "chat"));
        assertThat(h.bounds()).containsExactly(0.1, 0.2);
        assertThat(h.cumulativeCounts()).containsExactly(4L, 9L, 10L);
        assertThat(h.count()).isEqualTo(10);
        assertThat(h.sum()).isEqualTo(2.0);
        assertThat(e.sum("llm_sidecar_requests_total", Map.of("model", "m"))).isEqualTo(10);
        assertThat(e.labelValues("llm_sidecar_requests_total", "outcome")).containsExactly("ok", "upstream_error");
        assertThat(e.gauge("llm_sidecar_saturation_knee_requests")).isNaN();
        assertThat(e.gauge("llm_sidecar_requests_in_flight")).isEqualTo(2);
        assertThat(e.gauge("absent")).isNaN();
        assertThat(e.select("weird_label", Map.of("path", "a \"quoted\", comma"))).hasSize(1);
        assertThat(e.histogram("nothing", Map.of()).isEmpty()).isTrue();
    }

    @Test
    void anUnreadableLineRefusesTheScrapeNamingIt() {
        assertThatThrownBy(() -> SidecarScrape.parse("ok 1\nbroken{le=0.1} 1\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("metrics line 2 cannot be read: broken{le=0.1} 1");
        assertThatThrownBy(() -> SidecarScrape.parse("# c\n  bad line \nok 1\nworse{\n"))
                .hasMessage("metrics line 2 cannot be read: bad line (and 1 more lines)");
    }
}
