package dev.llmsidecar.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.llmsidecar.engine.ExpositionParser.Result;
import dev.llmsidecar.engine.ExpositionParser.Sample;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class EngineExpositionParserTest {

    @Test
    void readsNamesLabelsValuesAndSkipsMetadata() {
        Result r = ExpositionParser.parse("""
                # HELP up whether up
                # TYPE up gauge
                up 1
                vllm:num_requests_running{engine="0",model_name="m"} 12.0
                http_requests_total{method="post",code="200"} 1027 1395066363000
                """);
        assertThat(r.rejectedLines()).isZero();
        assertThat(r.samples()).containsExactly(
                new Sample("up", Map.of(), 1),
                new Sample("vllm:num_requests_running", Map.of("engine", "0", "model_name", "m"), 12),
                new Sample("http_requests_total", Map.of("method", "post", "code", "200"), 1027));
    }

    @Test
    void toleratesOpenMetricsAndTextFormatQuirks() {
        Result r = ExpositionParser.parse(String.join("\n",
                "# TYPE foo_seconds histogram",
                "# UNIT foo_seconds seconds",
                "foo_seconds_bucket{le=\"0.1\"} 8 # {trace_id=\"abc\"} 0.05 1520879607.789",
                "foo_seconds_count 17 1520879607.789 # {trace_id=\"def\"} 1.5",
                "esc{path=\"C:\\\\dir\\\\f\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",odd=\"\\t\"} 1",
                "trailing_comma{a=\"1\",} 2",
                "empty_braces{} 3",
                "spaced { a = \"x\" , b=\"y\" }\t4",
                "crlf_line 5\r",
                "nan_gauge NaN",
                "pos_inf +Inf",
                "neg_inf -Inf",
                "plain_inf Inf",
                "sci 1.5e+03",
                "# EOF",
                "after_eof_is_not_read 1",
                "garbage after eof"));
        assertThat(r.rejectedLines()).isZero();
        assertThat(r.samples()).hasSize(12);
        assertThat(value(r, "foo_seconds_bucket")).isEqualTo(8);
        assertThat(value(r, "foo_seconds_count")).isEqualTo(17);
        assertThat(labels(r, "esc")).containsExactlyInAnyOrderEntriesOf(Map.of(
                "path", "C:\\dir\\f", "quote", "say \"hi\"", "nl", "a\nb", "odd", "\\t"));
        assertThat(labels(r, "trailing_comma")).containsExactlyEntriesOf(Map.of("a", "1"));
        assertThat(labels(r, "empty_braces")).isEmpty();
        assertThat(labels(r, "spaced")).containsExactlyInAnyOrderEntriesOf(Map.of("a", "x", "b", "y"));
        assertThat(value(r, "spaced")).isEqualTo(4);
        assertThat(value(r, "crlf_line")).isEqualTo(5);
        assertThat(value(r, "nan_gauge")).isNaN();
        assertThat(value(r, "pos_inf")).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(value(r, "neg_inf")).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(value(r, "plain_inf")).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(value(r, "sci")).isEqualTo(1500);
        assertThat(r.samples()).noneMatch(s -> s.name().startsWith("after_eof"));
    }

    @Test
    void malformedLinesAreSkippedAndCountedNeverThrown() {
        Result r = ExpositionParser.parse(EngineSamples.text("malformed.txt"));
        assertThat(r.rejectedLines()).isEqualTo(12);
        assertThat(r.samples()).extracting(Sample::name).containsExactly(
                "vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                "vllm:generation_tokens_total");
        assertThat(r.samples()).extracting(Sample::value).containsExactly(5.0, 2.0, 0.25, 42.0);
    }

    @Test
    void theFirstUnreadableLineIsKeptWithItsNumber() {
        Result r = ExpositionParser.parse("ok 1\n\n# a comment\nbroken{le=0.1} 1\r\nworse{\nok 2\n");
        assertThat(r.rejectedLines()).isEqualTo(2);
        assertThat(r.firstRejected()).isEqualTo(new ExpositionParser.Rejected(4, "broken{le=0.1} 1"));
        assertThat(ExpositionParser.parse("ok 1\n").firstRejected()).isNull();
    }

    @Test
    void filterDropsSamplesButNotTheRejectedCount() {
        String text = EngineSamples.text("malformed.txt");
        Result kept = ExpositionParser.parse(text, name -> name.equals("vllm:kv_cache_usage_perc"));
        assertThat(kept.samples()).containsExactly(
                new Sample("vllm:kv_cache_usage_perc", Map.of("engine", "0", "model_name", "m"), 0.25));
        assertThat(kept.rejectedLines()).isEqualTo(ExpositionParser.parse(text).rejectedLines());
    }

    @Test
    void engineRelevanceFilterKeepsNoHistogramBucketsButThePhasesOnes() {
        Result r = ExpositionParser.parse(EngineSamples.text("vllm.txt"), EngineNormaliser::relevant);
        assertThat(r.rejectedLines()).isZero();
        assertThat(r.samples()).allMatch(s -> s.name().startsWith("vllm:") && (!s.name().endsWith("_bucket")
                || s.name().matches("vllm:request_(queue|prefill|decode|inference)_time_seconds_bucket")));
        assertThat(r.samples()).extracting(Sample::name).contains("vllm:time_to_first_token_seconds_count",
                "vllm:request_queue_time_seconds_bucket");
    }

    @Test
    void emptyAndBlankInputsYieldNothing() {
        assertThat(ExpositionParser.parse("")).isEqualTo(new Result(java.util.List.of(), 0));
        assertThat(ExpositionParser.parse(null).samples()).isEmpty();
        assertThat(ExpositionParser.parse("\n\n  \n# only a comment\n").rejectedLines()).isZero();
    }

    @Test
    void randomBytesNeverThrow() {
        Random random = new Random(42);
        String alphabet = "ab_:{}=\",# \t\n\\.+-eE0123456789NaInf\r";
        for (int round = 0; round < 2_000; round++) {
            byte[] bytes = new byte[random.nextInt(300)];
            random.nextBytes(bytes);
            ExpositionParser.parse(new String(bytes, StandardCharsets.UTF_8));
            StringBuilder sb = new StringBuilder();
            for (int i = random.nextInt(300); i > 0; i--) {
                sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            Result r = ExpositionParser.parse(sb.toString());
            assertThat(r.rejectedLines()).isNotNegative();
        }
    }

    @Test
    void labelNamesOfOneHashCodeStayLinear() {
        // found with the hostile inputs of dev.llmsidecar.fuzz.ExpositionParserFuzzTest: 2^16 label names built of
        // "Aa" and "BB" (which hash alike) in one 2.3 MB line took 23 s, as Map.copyOf probes linearly; an 8 MiB
        // scrape body would hold the event loop for minutes
        StringBuilder line = new StringBuilder("vllm:num_requests_running{");
        int bits = 16;
        for (int i = 0; i < 1 << bits; i++) {
            for (int b = 0; b < bits; b++) {
                line.append((i >> b & 1) == 0 ? "Aa" : "BB");
            }
            line.append("=\"\",");
        }
        String text = line.append("} 1\n").toString();
        Result r = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> ExpositionParser.parse(text));
        assertThat(r.samples()).singleElement().satisfies(s -> assertThat(s.labels()).hasSize(1 << bits));
    }

    private static double value(Result r, String name) {
        return r.samples().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow().value();
    }

    private static Map<String, String> labels(Result r, String name) {
        return r.samples().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow().labels();
    }
}
