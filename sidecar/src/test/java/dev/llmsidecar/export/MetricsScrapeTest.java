package dev.llmsidecar.export;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MetricsScrapeTest {

    @Test
    void countLinesLoseTheirExemplarBucketsKeepTheirs() {
        String in = """
                # TYPE x_seconds histogram
                x_seconds_bucket{le="0.1"} 1.0 # {span_id="a",trace_id="b"} 0.05 1.0
                x_seconds_count{model="m"} 1.0 # {span_id="a",trace_id="b"} 1.0 1.0
                x_seconds_count 2.0 # {span_id="a",trace_id="b"} 1.0 1.0
                x_seconds_sum{model="m"} 0.05
                y_count_total 3.0
                # EOF
                """;
        assertThat(MetricsScrape.withoutCountExemplars(in)).isEqualTo("""
                # TYPE x_seconds histogram
                x_seconds_bucket{le="0.1"} 1.0 # {span_id="a",trace_id="b"} 0.05 1.0
                x_seconds_count{model="m"} 1.0
                x_seconds_count 2.0
                x_seconds_sum{model="m"} 0.05
                y_count_total 3.0
                # EOF
                """);
    }
}
