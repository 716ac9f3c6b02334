package dev.llmsidecar.jmh;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.measure.ModelLabels;
import dev.llmsidecar.window.SlidingWindowHistogram;
import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.SseEventSplitter;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;
import dev.llmsidecar.wire.openai.OpenAiChunk;
import dev.llmsidecar.wire.openai.OpenAiChunkParser;
import dev.llmsidecar.wire.openai.OpenAiSseDecoder;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The per-chunk work of the sidecar, piece by piece: SSE framing, the JSON peek into each event, the full decoder
 * (framing + peek + usage-chunk stripping), histogram recording and the model-label lookup. Run with
 * {@code bench/run --jmh} (add {@code -prof gc} for allocation per operation).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class HotPathBench {

    static final String EVENT = "data: {\"id\":\"chatcmpl-8f2c1a7e6b\",\"object\":\"chat.completion.chunk\","
            + "\"created\":1700000000,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,"
            + "\"delta\":{\"content\":\" quick\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";

    // direct, as the sockets read them
    ByteBuf oneEvent;
    ByteBuf sixteenEvents;
    byte[] json;
    SseEventSplitter splitter;
    OpenAiChunkParser parser;
    OpenAiSseDecoder stripping;
    OpenAiSseDecoder plain;
    Timer compositeTimer;
    Timer prometheusTimer;
    SlidingWindowHistogram window;
    ModelLabels labels;
    Blackhole bh;
    long nanos;

    @Setup
    public void setup(Blackhole bh) {
        this.bh = bh;
        oneEvent = Unpooled.directBuffer().writeBytes(EVENT.getBytes(StandardCharsets.UTF_8));
        sixteenEvents = Unpooled.directBuffer().writeBytes(EVENT.repeat(16).getBytes(StandardCharsets.UTF_8));
        String data = EVENT.substring(6, EVENT.length() - 2);
        json = data.getBytes(StandardCharsets.UTF_8);
        splitter = new SseEventSplitter((d, len, type, oversize, start, end) -> bh.consume(len), 1 << 20);
        parser = new OpenAiChunkParser(new JsonFactory());
        TokenEventSink sink = new TokenEventSink() {
            @Override
            public void onDataChunk(long n) {
                bh.consume(n);
            }

            @Override
            public void onTokenChunk(long n, boolean reasoning, long cumulative) {
                bh.consume(cumulative);
            }

            @Override
            public void onUsage(Usage usage) {
                bh.consume(usage);
            }

            @Override
            public void onFinishReason(String finishReason) {
                bh.consume(finishReason);
            }

            @Override
            public void onServerTimings(ServerTimings timings) {
                bh.consume(timings);
            }

            @Override
            public void onStreamError() {
            }

            @Override
            public void onUndecodable() {
            }
        };
        stripping = new OpenAiSseDecoder(sink, parser, dev.llmsidecar.wire.openai.UsageMode.REMOVE, 1 << 20);
        plain = new OpenAiSseDecoder(sink, parser, dev.llmsidecar.wire.openai.UsageMode.PASS, 1 << 20);
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CompositeMeterRegistry composite = new CompositeMeterRegistry();
        composite.add(prometheus);
        List<Duration> slo = List.of(Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofMillis(10),
                Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
                Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(5));
        compositeTimer = Timer.builder("bench.composite").serviceLevelObjectives(slo.toArray(new Duration[0]))
                .register(composite);
        prometheusTimer = Timer.builder("bench.direct").serviceLevelObjectives(slo.toArray(new Duration[0]))
                .register(prometheus);
        window = new SlidingWindowHistogram(System::nanoTime, Duration.ofSeconds(10), Duration.ofHours(1));
        labels = new ModelLabels(50, List.of());
        for (int i = 0; i < 49; i++) {
            labels.admit("model-" + i); // as the engine's 2xx answers do
        }
    }

    @Benchmark
    public void sseSplitOneEvent() {
        splitter.feed(oneEvent);
    }

    @Benchmark
    @org.openjdk.jmh.annotations.OperationsPerInvocation(16)
    public void sseSplitPerEventIn16() {
        splitter.feed(sixteenEvents);
    }

    @Benchmark
    public OpenAiChunk jsonPeek() {
        return parser.parse(json, 0, json.length);
    }

    @Benchmark
    public ByteBuf decodeEventStripping() {
        // the decoder takes a reference and hands back one to what it forwards (here the read itself)
        ByteBuf out = stripping.onChunk(oneEvent.retain(), ++nanos);
        out.release();
        return out;
    }

    @Benchmark
    public ByteBuf decodeEventPlain() {
        ByteBuf out = plain.onChunk(oneEvent.retain(), ++nanos);
        out.release();
        return out;
    }

    @Benchmark
    public void timerCompositeRegistry() {
        compositeTimer.record(++nanos & 0xFFFFFF, TimeUnit.NANOSECONDS);
    }

    @Benchmark
    public void timerPrometheusRegistry() {
        prometheusTimer.record(++nanos & 0xFFFFFF, TimeUnit.NANOSECONDS);
    }

    @Benchmark
    public void slidingWindowRecord() {
        window.record(20_000_000L + (++nanos & 0xFFFF));
    }

    @Benchmark
    public String modelLabelLookup() {
        return labels.label("model-17");
    }
}
