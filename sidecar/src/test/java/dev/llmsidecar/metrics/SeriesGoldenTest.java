package dev.llmsidecar.metrics;

import dev.llmsidecar.support.ChatHead;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.TestConfigs;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.LlmRoutes;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The series a scripted run produces, as Prometheus scrapes them: every name, every label name and value, and the
 * value of every counter and histogram line (the run's clock is the script's, so they are exact), held against a
 * committed golden file. A restructuring of the recording code (issue 43) must leave this file as it is: a label
 * dropped, renamed or given another value, a series recorded twice or not at all, shows as a changed line. Gauges are
 * held by name and labels only: some read the wall clock at scrape time.
 *
 * <p>To write the golden file anew after a deliberate contract change (docs/metrics.md changes in the same commit):
 * {@code mvn -pl sidecar surefire:test -Dtest=SeriesGoldenTest -Dgolden.write=true}, then read the diff.
 */
class SeriesGoldenTest {

    static final Path GOLDEN = Path.of("src/test/resources/golden/series-scripted-run.txt");
    static final long MS = 1_000_000;
    static final LlmRoutes ROUTES = new LlmRoutes(new JsonFactory());
    static final LlmOperation CHAT = ROUTES.match("POST", "/v1/chat/completions");
    static final LlmOperation COMPLETION = ROUTES.match("POST", "/v1/completions");


    @Test
    void aScriptedRunGivesTheCommittedSeries() throws IOException {
        String scraped = canonical(scriptedRun());
        if (Boolean.getBoolean("golden.write")) {
            Files.createDirectories(GOLDEN.getParent());
            Files.writeString(GOLDEN, scraped);
        }
        assertThat(GOLDEN).as("the golden file; write it with -Dgolden.write=true").exists();
        List<String> golden = Files.readAllLines(GOLDEN);
        assertThat(scraped.lines().toList()).as("series of the scripted run against %s", GOLDEN)
                .containsExactlyElementsOf(golden);
    }

    @Test
    void theRunIsRepeatable() {
        assertThat(canonical(scriptedRun())).isEqualTo(canonical(scriptedRun()));
    }

    /** Every kind of request the seam reports, at fixed times, through a sidecar with every optional label on. */
    static PrometheusRegistry scriptedRun() {
        PrometheusRegistry registry = new PrometheusRegistry();
        Map<String, String> config = new HashMap<>(ProxyFixture.pinned("m1"));
        config.putAll(Map.of(
                "sidecar.slo.objectives.fast.ttft", "PT0.5S",
                "sidecar.slo.objectives.fast.e2e", "PT2S",
                "sidecar.slo.objectives.strict.ttft", "PT0.1S",
                "sidecar.tenants.source", "header",
                "sidecar.priority.enabled", "true",
                "sidecar.slo.declared.enabled", "true",
                "sidecar.slo.declared.trust-all", "true"));
        long[] now = {10_000 * MS};
        SidecarTelemetry telemetry = new SidecarTelemetry(registry, TestConfigs.sidecar("http://127.0.0.1:1", config),
                () -> now[0]);
        try {
            TrafficObserver traffic = telemetry.traffic();
            long t0 = now[0];
            // two streams of one tenant: its first 2xx earns it a value of its own
            stream(traffic, Map.of("x-tenant", "acme"), "m1", 0, t0, 200, 20);
            stream(traffic, Map.of("x-tenant", "acme"), "m1", 1, t0 + 1_000 * MS, 150, 20);
            // a slow first token (violates both TTFT objectives), a declared target, an unlisted model
            stream(traffic, Map.of("x-slo-ttft-ms", "250"), "m1", null, t0 + 2_000 * MS, 700, 30);
            stream(traffic, Map.of(), "unlisted", 2, t0 + 3_000 * MS, 120, 10);
            // reasoning first, then the answer
            ExchangeObserver x = traffic.exchangeStarted(new ChatHead(Map.of()), CHAT, t0 + 4_000 * MS);
            x.requestInspected("m1", true, null);
            x.requestSent();
            TokenEventSink sink = x.responseStarted(200, true, t0 + 4_005 * MS);
            sink.onTokenChunk(t0 + 4_100 * MS, true, -1);
            sink.onTokenChunk(t0 + 4_300 * MS, false, -1);
            sink.onTokenChunk(t0 + 4_320 * MS, false, -1);
            sink.onUsage(new Usage(40, 3, 16, 1));
            sink.onFinishReason("length");
            x.ended(Outcome.OK, 200, t0 + 4_330 * MS);
            // not streamed
            x = traffic.exchangeStarted(new ChatHead(Map.of()), COMPLETION, t0 + 5_000 * MS);
            x.requestInspected("m1", false, null);
            x.requestSent();
            sink = x.responseStarted(200, false, t0 + 5_400 * MS);
            sink.onUsage(new Usage(12, 8, -1));
            sink.onFinishReason("stop");
            x.ended(Outcome.OK, 200, t0 + 5_410 * MS);
            // refused by the engine, broken by it, left by the client, failed before any answer
            x = traffic.exchangeStarted(new ChatHead(Map.of()), CHAT, t0 + 6_000 * MS);
            x.requestInspected("m1", true, null);
            x.requestSent();
            x.responseStarted(429, false, t0 + 6_002 * MS);
            x.ended(Outcome.UPSTREAM_ERROR, 429, t0 + 6_003 * MS);
            x = traffic.exchangeStarted(new ChatHead(Map.of()), CHAT, t0 + 7_000 * MS);
            x.requestInspected("m1", true, null);
            x.requestSent();
            sink = x.responseStarted(200, true, t0 + 7_010 * MS);
            sink.onTokenChunk(t0 + 7_200 * MS, false, -1);
            x.ended(Outcome.UPSTREAM_BROKEN, 200, t0 + 7_500 * MS);
            x = traffic.exchangeStarted(new ChatHead(Map.of()), CHAT, t0 + 8_000 * MS);
            x.requestInspected("m1", true, null);
            x.requestSent();
            sink = x.responseStarted(200, true, t0 + 8_010 * MS);
            sink.onTokenChunk(t0 + 8_200 * MS, false, -1);
            x.clientPaused(t0 + 8_210 * MS);
            x.ended(Outcome.CLIENT_CANCELLED, 200, t0 + 8_900 * MS);
            x = traffic.exchangeStarted(new ChatHead(Map.of()), CHAT, t0 + 9_000 * MS);
            x.requestInspected("m1", true, null);
            x.requestSent();
            x.ended(Outcome.UPSTREAM_ERROR, 502, t0 + 9_030 * MS);
            // answered by the sidecar itself
            traffic.shed(CHAT);
            traffic.refused(true, 503);
            traffic.exchangeStarted(new ChatHead(Map.of()), null, t0 + 9_500 * MS).ended(Outcome.OK, 200, t0 + 9_501 * MS);
            now[0] = t0 + 10_000 * MS;
        } finally {
            telemetry.close();
        }
        return registry;
    }

    /** A stream: head at 5 ms, first token at {@code ttftMs}, two more {@code gapMs} apart, usage, stop. */
    static void stream(TrafficObserver traffic, Map<String, String> headers, String model, Integer priority, long t0,
            long ttftMs, long gapMs) {
        ExchangeObserver x = traffic.exchangeStarted(new ChatHead(headers), CHAT, t0);
        x.requestInspected(model, true, priority);
        x.requestSent();
        TokenEventSink sink = x.responseStarted(200, true, t0 + 5 * MS);
        sink.onDataChunk(t0 + 10 * MS);
        x.written(t0 + 10 * MS, t0 + 11 * MS);
        for (long at = ttftMs; at <= ttftMs + 2 * gapMs; at += gapMs) {
            sink.onTokenChunk(t0 + at * MS, false, -1);
            x.written(t0 + at * MS, t0 + (at + 1) * MS);
        }
        sink.onUsage(new Usage(7, 3, -1));
        sink.onFinishReason("stop");
        x.ended(Outcome.OK, 200, t0 + (ttftMs + 2 * gapMs + 5) * MS);
    }

    /**
     * One line per sample, sorted: {@code name{label="value",...}} with the labels sorted by name, then the value for
     * counters and histograms; a gauge's line ends at its labels.
     */
    static String canonical(PrometheusRegistry registry) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        Map<String, String> types = new HashMap<>();
        List<String> samples = new ArrayList<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith("# TYPE ")) {
                String[] parts = line.split(" ");
                types.put(parts[2], parts[3]);
            } else if (!line.isEmpty() && !line.startsWith("#")) {
                samples.add(line);
            }
        }
        TreeSet<String> lines = new TreeSet<>();
        for (String line : samples) {
            int space = line.lastIndexOf(' ');
            int brace = line.indexOf('{');
            String name = brace >= 0 && brace < space ? line.substring(0, brace) : line.substring(0, space);
            TreeSet<String> labels = new TreeSet<>();
            if (brace >= 0 && brace < space) {
                String body = line.substring(brace + 1, line.lastIndexOf('}'));
                for (String pair : body.split(",(?=[a-zA-Z_]+=\")")) {
                    if (!pair.isEmpty()) {
                        labels.add(pair);
                    }
                }
            }
            String type = types.getOrDefault(family(name, types), "untyped");
            String value = type.equals("gauge") || type.equals("untyped") ? "" : " " + line.substring(space + 1);
            lines.add(name + "{" + String.join(",", labels) + "}" + value);
        }
        return String.join("\n", lines) + "\n";
    }

    private static String family(String sample, Map<String, String> types) {
        for (String suffix : new String[] {"", "_bucket", "_count", "_sum", "_total", "_created", "_info"}) {
            if (sample.endsWith(suffix) && types.containsKey(sample.substring(0, sample.length() - suffix.length()))) {
                return sample.substring(0, sample.length() - suffix.length());
            }
        }
        return sample;
    }
}
