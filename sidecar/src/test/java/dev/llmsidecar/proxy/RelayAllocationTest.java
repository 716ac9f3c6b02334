package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.includeusage.IncludeUsage;
import dev.llmsidecar.otel.OtelPipeline;
import dev.llmsidecar.support.TestConfigs;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What relaying one paced event costs the heap, the whole relay: the raw read from upstream, the chunk scanner, the
 * OpenAI decoder with usage removal armed, the timeline and every series of the shipped configuration (SLO objectives,
 * tenants by key hash), the write to the client. An event in the middle of a stream must allocate nothing: 2000
 * streams at 10 events a second are 20 000 events a second, and anything they allocate is what fills the young
 * generation and, promoted, the old one.
 */
class RelayAllocationTest {

    static final Map<String, String> SHIPPED = Map.of(
            "sidecar.slo.objectives.interactive.ttft", "PT0.5S",
            "sidecar.slo.objectives.interactive.tpot", "PT0.05S",
            "sidecar.slo.objectives.interactive.target", "0.99",
            "sidecar.slo.objectives.tail.itl", "PT0.1S",
            "sidecar.slo.objectives.tail.itl-quantile", "0.99",
            "sidecar.tenants.source", "api-key-hash");

    static final byte[] REQUEST = ("POST /v1/chat/completions HTTP/1.1\r\nhost: s\r\ncontent-type: application/json\r\n"
            + "authorization: Bearer sk-test-0123456789\r\ncontent-length: 86\r\n\r\n"
            + "{\"model\":\"m\",\"stream\":true,\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
            .getBytes(StandardCharsets.ISO_8859_1);
    static final String EVENT = "data: {\"id\":\"chatcmpl-8f2c1a7e6b\",\"object\":\"chat.completion.chunk\","
            + "\"created\":1700000000,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" quick\"},"
            + "\"logprobs\":null,\"finish_reason\":null}]}\n\n";

    static byte[] chunk(String data) {
        return (Integer.toHexString(data.length()) + "\r\n" + data + "\r\n").getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void anEventInTheMiddleOfAStreamAllocatesNothing() {
        SidecarTelemetry telemetry = new SidecarTelemetry(new PrometheusRegistry(),
                TestConfigs.sidecar("http://127.0.0.1:1", SHIPPED), System::nanoTime);
        long[] rounds = relayRounds(telemetry, ROUNDS, true);
        // the last three rounds, each of them: a relay that allocates per event allocates in every round (15 000
        // events: 240 KB at 16 bytes an event), so it never gets three zero rounds in a row
        assertThat(java.util.Arrays.copyOfRange(rounds, Math.max(0, rounds.length - ZERO_ROUNDS), rounds.length))
                .as("bytes allocated relaying %d events in each of the last %d of %d rounds", EVENTS, ZERO_ROUNDS,
                        rounds.length)
                .hasSize(ZERO_ROUNDS).containsOnly(0L);
    }

    /**
     * With spans on (an OTLP exporter, its collector unreachable: nothing is exported while a stream relays), each
     * live measurement of an event is recorded with the request's span current, so that histogram exemplars point to
     * it: OpenTelemetry's {@code Context.makeCurrent} allocates its scope, 32 bytes an event (docs/otel.md).
     */
    @Test
    void withSpansOnAnEventAllocatesOnlyTheSpansScope() {
        try (OtelPipeline otel = OtelPipeline.create(Map.of("otel.exporter.otlp.endpoint", "http://127.0.0.1:1",
                "otel.metrics.exporter", "none"), new PrometheusRegistry())) {
            assertThat(otel.enabled()).isTrue();
            SidecarTelemetry telemetry = new SidecarTelemetry(new PrometheusRegistry(),
                    TestConfigs.sidecar("http://127.0.0.1:1", SHIPPED), System::nanoTime, otel);
            long[] rounds = relayRounds(telemetry, SPAN_ROUNDS, false);
            for (int i = rounds.length - ZERO_ROUNDS; i < rounds.length; i++) {
                // the scope of every event, and nothing else an event (below one byte an event: no object)
                assertThat(rounds[i] / EVENTS).as("whole bytes per event, round %d of %d", i + 1, rounds.length)
                        .isEqualTo(SPAN_SCOPE_BYTES_PER_EVENT);
            }
        }
    }

    /** What one event costs with spans on (measured: 32 bytes, under C2 and under the shipped C1). */
    static final long SPAN_SCOPE_BYTES_PER_EVENT = 32;
    static final int EVENTS = 15_000;
    /** At most this many measured rounds, stopping after three in a row allocated nothing. */
    static final int ROUNDS = 24;
    static final int SPAN_ROUNDS = 8;
    static final int ZERO_ROUNDS = 3;

    /**
     * One stream relayed through the whole proxy with {@code telemetry} observing: a warm-up, then {@code rounds}
     * rounds of {@link #EVENTS} events, each measured for the bytes the event loop's thread allocated. Every round
     * checks that the client received every byte of every event and that the exchange is still streaming, so that
     * a round can never measure an exchange that had ended (reads falling to the pipeline's tail allocate nothing).
     * The measure is of the compiled relay: until the JIT has compiled (and, tiered, recompiled) every method on the
     * path, an interpreted or first-tier frame allocates what escape analysis later removes, and on a slow or busy
     * machine that can fall inside any fixed warm-up (CI measured 288 bytes so), and C2 rematerialises what it had
     * scalar-replaced when it deoptimises a method, for a while after; besides, Netty's recycler now and then
     * allocates a chunk of its handle queue (288 bytes; not per event). Hence rounds, the last three judged.
     *
     * @param untilQuiet stop after three rounds in a row that allocated nothing
     */
    static long[] relayRounds(SidecarTelemetry telemetry, int rounds, boolean untilQuiet) {
        try (EmbeddedProxy proxy = new EmbeddedProxy(telemetry.traffic(),
                new IncludeUsage(true, telemetry.traffic()), true)) {
            proxy.fromClient(REQUEST);
            EmbeddedChannel upstream = proxy.upstreams.get(0);
            drain(upstream);
            byte[] head = ("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            proxy.fromUpstream(0, head, 0, head.length);
            drain(proxy.client());
            byte[] event = chunk(EVENT);
            System.out.println("whole relay, JVM flags: " + ManagementFactory.getRuntimeMXBean().getInputArguments()
                    .stream().filter(a -> a.startsWith("-XX:Tiered") || a.startsWith("-Xmx")).toList());
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long warm = relayAll(proxy, reads(event, 17_000)); // the first token, the JIT, the decoder's buffers
            assertThat(warm).as("bytes the client received in the warm-up").isEqualTo(17_000L * event.length);
            long[] allocated = new long[rounds];
            int quiet = 0;
            int round = 0;
            for (; round < rounds && !(untilQuiet && quiet == ZERO_ROUNDS); round++) {
                ByteBuf[] reads = reads(event, EVENTS); // the reads as the socket hands them, made beforehand
                long before = threads.getCurrentThreadAllocatedBytes();
                long received = relayAll(proxy, reads);
                allocated[round] = threads.getCurrentThreadAllocatedBytes() - before;
                System.out.printf("whole relay, round %d: %d bytes allocated for %d events%n", round + 1,
                        allocated[round], EVENTS);
                assertThat(received).as("bytes the client received in round %d", round + 1)
                        .isEqualTo((long) EVENTS * event.length);
                assertThat(proxy.inFlight()).as("the exchange still streaming after round %d", round + 1)
                        .isEqualTo(1);
                assertThat(proxy.client().isActive()).isTrue();
                quiet = allocated[round] == 0 ? quiet + 1 : 0;
            }
            return java.util.Arrays.copyOf(allocated, round);
        }
    }

    static ByteBuf[] reads(byte[] event, int n) {
        ByteBuf[] reads = new ByteBuf[n];
        for (int i = 0; i < n; i++) {
            reads[i] = io.netty.buffer.Unpooled.wrappedBuffer(event);
        }
        return reads;
    }

    /**
     * Each read through the upstream pipeline as the event loop hands it, then what the client was written: the
     * bytes it received (counted without allocating).
     */
    static long relayAll(EmbeddedProxy proxy, ByteBuf[] reads) {
        EmbeddedChannel upstream = proxy.upstreams.get(0);
        long received = 0;
        for (ByteBuf read : reads) {
            upstream.pipeline().fireChannelRead(read);
            upstream.pipeline().fireChannelReadComplete();
            received += drain(proxy.client());
        }
        return received;
    }

    static long drain(EmbeddedChannel ch) {
        long bytes = 0;
        for (Object m; (m = ch.readOutbound()) != null;) {
            bytes += ((ByteBuf) m).readableBytes();
            ((ByteBuf) m).release();
        }
        return bytes;
    }
}
