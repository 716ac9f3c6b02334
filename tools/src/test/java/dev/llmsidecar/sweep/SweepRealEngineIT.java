package dev.llmsidecar.realengine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sweep.Report;
import dev.llmsidecar.sweep.StepResult;
import dev.llmsidecar.sweep.Sweep;
import dev.llmsidecar.sweep.SweepOptions;
import dev.llmsidecar.sweep.SweepResult;
import dev.llmsidecar.testkit.Processes;
import io.vertx.core.Vertx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The load sweep through the packaged sidecar in front of a real llama-server (4 slots: {@code -np 4}; random weights
 * on a real tokenizer, see ../shared/reference/real-engine.md), started and stopped by {@link Processes} as in
 * {@link RealEngineIT}. Closed loop 1 ... 16 streams, SLO share from the histograms (no sidecar objective: the other
 * path than the simulated-engine test takes). Asserts that every step has data, that the knee is within one step of
 * the engine's 4 slots, and that the report is written (target/sweep-llama-server).
 */
class SweepRealEngineIT {

    @Test
    void aSweepThroughThePackagedSidecarInFrontOfLlamaServer() throws Exception {
        int enginePort = Processes.freePort();
        Path out = Path.of("target/sweep-llama-server");
        Vertx vertx = Vertx.vertx();
        try (Processes.Running engine = Processes.llamaServer(enginePort);
                Processes.Sidecar sidecar = new Processes.Sidecar("http://127.0.0.1:" + enginePort, Map.of())) {
            SweepOptions o = SweepOptions.parse("--url", "http://127.0.0.1:" + sidecar.proxyPort, "--metrics-url",
                    "http://127.0.0.1:" + sidecar.managementPort, "--model", "tiny", "--concurrency", "1,2,4,8,16",
                    "--step-seconds", "4", "--warmup-seconds", "1", "--input-len", "normal:64,16", "--output-len",
                    "32", "--slo", "ttft=0.1,target=0.95", "--title", "SweepRealEngineIT: llama-server, 4 slots",
                    "--out", out.toString());
            SweepResult r = Sweep.run(o, vertx, System.err);
            Report.write(r, out, "SweepRealEngineIT");
            System.out.printf("SweepRealEngineIT: knee %s streams (4 slots), sidecar knee %s, goodput %s streams; "
                    + "%.0f s%n", r.knee().load(), r.sidecarKnee(), r.goodput().load(), r.seconds());

            assertThat(r.steps()).hasSize(5);
            for (StepResult s : r.steps()) {
                assertThat(s.ttft().count()).as("TTFT samples at %s streams", s.load()).isGreaterThanOrEqualTo(10);
                assertThat(s.tpot().count()).isGreaterThanOrEqualTo(10);
                assertThat(s.e2e().count()).isGreaterThanOrEqualTo(10);
                assertThat(s.itl().count()).isGreaterThan(s.e2e().count());
                assertThat(s.throughput()).isPositive();
                assertThat(s.outputTokensPerSecond()).isPositive();
                assertThat(s.ttft().p50()).isPositive().isLessThanOrEqualTo(s.ttft().p99());
                assertThat(s.meanOutputTokens()).as("max_tokens with ignore_eos").isBetween(31.0, 33.0);
                assertThat(s.meanInputTokens()).as("prompt tokens the engine reported").isBetween(50.0, 130.0);
                assertThat(s.client().errorCount()).as("client errors at %s streams", s.load()).isZero();
                assertThat(s.sidecarErrors()).as("sidecar errors at %s streams", s.load()).isZero();
                assertThat(s.slo().source()).isEqualTo("histograms");
                assertThat(s.slo().histogramExact()).as("0.1 s is a default bucket bound").isTrue();
            }
            // 4 slots: from 4 to 8 streams, requests start waiting for a slot
            assertThat(r.knee().found()).isTrue();
            assertThat(r.knee().load()).isBetween(2.0, 8.0);
            String md = Files.readString(out.resolve("sweep.md"));
            assertThat(md).contains("## Steps", "Knee (this sweep)", "against `vllm bench serve`'s definitions");
            assertThat(Files.readString(out.resolve("sweep-latency.svg"))).startsWith("<svg").contains("<polyline");
            assertThat(out.resolve("results.json")).exists();
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
