package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Options and the SLO spec: defaults, parsing, and a clear message for every mistake. */
class SweepOptionsTest {

    @Test
    void defaultsAndParsing() {
        SweepOptions o = SweepOptions.parse("--model", "llama", "--concurrency", "1,2,4", "--step-seconds=10",
                "--metrics-url", "http://127.0.0.1:9001", "--slo", "ttft=500ms,tpot=0.05,target=0.9", "--header",
                "x-slo-class: batch", "--input-len", "normal:512,128", "--output-len", "lognormal:200,100,max=1000");
        assertThat(o.mode).isEqualTo(SweepOptions.Mode.CLOSED);
        assertThat(o.loads).containsExactly(1, 2, 4);
        assertThat(o.stepSeconds).isEqualTo(10);
        assertThat(o.warmupSeconds).isEqualTo(5);
        assertThat(o.metricsUrl).isEqualTo("http://127.0.0.1:9001/q/metrics");
        assertThat(o.url.toString()).isEqualTo("http://127.0.0.1:8080");
        assertThat(o.slo).isEqualTo(new SloSpec(0.5, 0.05, Double.NaN, 0.9));
        assertThat(o.headers).containsEntry("x-slo-class", "batch");
        assertThat(o.inputLength.describe()).isEqualTo("normal:512,128,min=1,max=1280");
        assertThat(o.outputLength.describe()).isEqualTo("lognormal:200,100,min=1,max=1000");
        assertThat(o.operation()).isEqualTo("chat");
        SweepOptions open = SweepOptions.parse("--model", "m", "--rates", "0.5,2", "--path", "/v1/completions");
        assertThat(open.mode).isEqualTo(SweepOptions.Mode.OPEN);
        assertThat(open.formatLoad(0.5)).isEqualTo("0.50");
        assertThat(open.operation()).isEqualTo("text_completion");
    }

    @Test
    void mistakesAreNamed() {
        String[][] bad = {
            {"give the load steps", "--model", "m"},
            {"not both", "--model", "m", "--rates", "1", "--concurrency", "2"},
            {"--model is required", "--rates", "1"},
            {"whole number", "--model", "m", "--concurrency", "1.5"},
            {"positive", "--model", "m", "--rates", "0,1"},
            {"unknown option --bogus", "--model", "m", "--rates", "1", "--bogus", "1"},
            {"--step-seconds needs a value", "--model", "m", "--rates", "1", "--step-seconds"},
            {"--slo-objective needs --slo", "--model", "m", "--rates", "1", "--slo-objective", "x"},
            {"--trace replaces", "--model", "m", "--rates", "1", "--trace", "t.jsonl", "--input-len", "5"},
            {"--compare-step 3", "--model", "m", "--rates", "1,2", "--compare-step", "3"},
            {"--extra-body", "--model", "m", "--rates", "1", "--extra-body", "[1]"},
            {"--header", "--model", "m", "--rates", "1", "--header", "nocolon"},
            {"--search needs --slo", "--model", "m", "--search"},
            {"--search finds the load itself", "--model", "m", "--search", "--rates", "1", "--slo", "ttft=1"},
            {"--speedup replays a recorded trace", "--model", "m", "--speedup", "2"},
            {"--trace-sample: window or uniform", "--model", "m", "--trace", "t", "--trace-sample", "random"},
            {"--trace-offset: not a number", "--model", "m", "--trace", "t", "--trace-offset", "noon"},
            {"--probe-max-seconds is below", "--model", "m", "--search", "--slo", "ttft=1", "--probe-seconds", "10",
                "--probe-max-seconds", "5"}};
        for (String[] b : bad) {
            String[] args = java.util.Arrays.copyOfRange(b, 1, b.length);
            assertThatThrownBy(() -> SweepOptions.parse(args)).as(String.join(" ", args))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(b[0]);
        }
    }

    @Test
    void traceReplayAndSearchOptions() {
        SweepOptions replay = SweepOptions.parse("--model", "m", "--trace", "day.jsonl");
        assertThat(replay.mode).isEqualTo(SweepOptions.Mode.TRACE);
        assertThat(replay.loads).containsExactly(1);
        assertThat(replay.loadUnit()).isEqualTo("× speed-up");
        assertThat(replay.openArrivals()).isTrue();
        SweepOptions sped = SweepOptions.parse("--model", "m", "--trace", "day.jsonl", "--speedup", "1,2.5",
                "--trace-sample", "uniform", "--trace-offset", "busiest", "--trace-model", "llama");
        assertThat(sped.loads).containsExactly(1, 2.5);
        assertThat(sped.traceSample).isEqualTo(SweepOptions.TraceSample.UNIFORM);
        assertThat(sped.traceOffset).isEqualTo("busiest");
        assertThat(sped.traceModel).isEqualTo("llama");
        assertThat(SweepOptions.parse("--model", "m", "--trace", "t", "--trace-offset", "start").traceOffset).isNull();
        SweepOptions search = SweepOptions.parse("--model", "m", "--search", "--slo", "ttft=0.5,target=0.99",
                "--search-start", "8", "--probe-seconds", "20", "--max-probes", "6", "--resolution", "0.1");
        assertThat(search.mode).isEqualTo(SweepOptions.Mode.OPEN);
        assertThat(search.loads).containsExactly(8);
        assertThat(search.stepSeconds).isEqualTo(20);
        assertThat(search.probeMaxSeconds).isEqualTo(60);
        assertThat(search.maxProbes).isEqualTo(6);
        assertThat(SweepOptions.parse("--model", "m", "--search", "--slo", "ttft=1", "--trace", "t").mode)
                .isEqualTo(SweepOptions.Mode.TRACE);
    }

    @Test
    void sloSpecs() {
        assertThat(SloSpec.parse("ttft=0.5")).isEqualTo(new SloSpec(0.5, Double.NaN, Double.NaN, 0.99));
        assertThat(SloSpec.parse("e2e=10s,target=0.95").e2e()).isEqualTo(10);
        assertThat(SloSpec.parse("ttft=0.5,tpot=0.05").describe())
                .isEqualTo("TTFT ≤ 0.5 s and TPOT ≤ 0.05 s, target 99 % of requests");
        assertThat(SloSpec.parse("ttft=0.5,tpot=50ms,target=0.9").asSidecarProperties("sweep")).isEqualTo(List.of(
                "sidecar.slo.objectives.sweep.ttft=PT0.5S", "sidecar.slo.objectives.sweep.tpot=PT0.05S",
                "sidecar.slo.objectives.sweep.target=0.9"));
        for (String[] b : new String[][] {{"target=0.9", "at least one"}, {"ttft=-1", "positive"},
            {"ttft=abc", "not a duration"}, {"target=1.5,ttft=1", "(0, 1]"}, {"foo=1", "unknown key"},
            {"itl=0.1", "--slo-objective"}, {"ttft", "KEY=VALUE"}}) {
            assertThatThrownBy(() -> SloSpec.parse(b[0])).as(b[0]).hasMessageContaining(b[1]);
        }
    }

    @Test
    void helpDocumentsEveryOptionTheParserKnows() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = SweepMain.run(new String[] {"--help"}, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(status).isZero();
        String help = out.toString(StandardCharsets.UTF_8);
        String source = java.nio.file.Files.readString(java.nio.file.Path.of(
                "src/main/java/dev/llmsidecar/sweep/SweepOptions.java"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("case \"(--[a-z-]+)\"").matcher(source);
        int options = 0;
        while (m.find()) {
            assertThat(help).as("--help documents %s", m.group(1)).contains(m.group(1));
            options++;
        }
        assertThat(options).isGreaterThan(25);
        assertThat(SweepMain.run(new String[] {"--rates", "1"}, new PrintStream(out), new PrintStream(err)))
                .isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--model is required");
    }

    @Test
    void eachStepDrawsItsArrivalsFromItsOwnSeed() {
        SweepOptions o = SweepOptions.parse("--model", "m", "--rates", "5,10");
        assertThat(Sweep.arrivals(o, 1).nextNanos()).isEqualTo(Sweep.arrivals(o, 1).nextNanos());
        assertThat(Sweep.arrivals(o, 0).nextNanos()).isNotEqualTo(Sweep.arrivals(o, 1).nextNanos());
    }
}
