package dev.llmsidecar.jmh;

import static dev.llmsidecar.metrics.Label.MODEL;
import static dev.llmsidecar.metrics.Label.OPERATION;
import static dev.llmsidecar.metrics.Label.PROVIDER;
import static dev.llmsidecar.metrics.Label.SERVER_ADDRESS;
import static dev.llmsidecar.metrics.Label.SERVER_PORT;
import static dev.llmsidecar.metrics.Label.STREAMING;

import dev.llmsidecar.metrics.Buckets;
import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.ExemplarSource;
import dev.llmsidecar.metrics.HistogramMode;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.prometheus.PrometheusRecorder;
import dev.llmsidecar.otel.TraceExemplars;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One chunk gap recorded, as the proxy records it per token chunk: through the contract's handle
 * ({@code Recorders.live(CHUNK_GAP, ...)}, the default preset's 49 bounds) on the Prometheus backend, per
 * {@code sidecar.metrics.histograms} mode, with tracing on (no span current: the exemplar check only) or off; and the
 * Micrometer timer of the registry the sidecar had before (client 0.x, 49 SLO buckets) as the baseline. Gaps are
 * log-normal around 20 ms, so the native buckets in use are a few pages. Run with
 * {@code bench/run --jmh -f 1 -wi 3 -i 5 HistogramRecordBench} (add {@code -prof gc} for bytes per operation).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class HistogramRecordBench {

    @Param({"classic", "both", "native"})
    String mode;

    @Param({"false", "true"})
    boolean tracing;

    Bound chunkGap;
    Timer before;
    double[] gaps = new double[4096];
    int i;

    @Setup
    public void setup() {
        Buckets buckets = new Buckets(Buckets.Preset.DEFAULT, List.of(), List.of(), List.of());
        io.micrometer.prometheusmetrics.PrometheusMeterRegistry registry =
                new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(
                        io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
        ExemplarSource exemplars = tracing ? TraceExemplars.CURRENT_SPAN : ExemplarSource.NONE;
        Recorders recorders = Recorders.of(new PrometheusRecorder(registry.getPrometheusRegistry(), buckets,
                new PrometheusRecorder.Histograms(HistogramMode.of(mode), 160, exemplars)));
        chunkGap = recorders.live(Contract.CHUNK_GAP, LabelValues.of(MODEL, "m").and(OPERATION, "chat")
                .and(STREAMING, "true").and(PROVIDER, null).and(SERVER_ADDRESS, null).and(SERVER_PORT, null));
        io.micrometer.prometheus.PrometheusMeterRegistry legacy = new io.micrometer.prometheus.PrometheusMeterRegistry(
                io.micrometer.prometheus.PrometheusConfig.DEFAULT);
        before = Timer.builder("bench.before").serviceLevelObjectives(buckets.bounds(Buckets.Family.PER_TOKEN).stream()
                .map(v -> Duration.ofNanos(Math.round(v * 1e9))).toArray(Duration[]::new))
                .publishPercentileHistogram(false).register(legacy);
        Random random = new Random(1);
        for (int k = 0; k < gaps.length; k++) {
            gaps[k] = 0.02 * Math.exp(0.5 * random.nextGaussian());
        }
    }

    /** The sidecar's histogram handle, in this mode. */
    @Benchmark
    public void recordChunkGap() {
        chunkGap.record(gaps[i++ & 4095]);
    }

    /** Before: a Micrometer Timer on the client 0.x registry, as PrometheusRecorder's predecessor recorded it. */
    @Benchmark
    public void micrometerTimerBefore() {
        before.record(Math.round(gaps[i++ & 4095] * 1e9), TimeUnit.NANOSECONDS);
    }
}
