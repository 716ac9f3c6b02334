package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.includeusage.IncludeUsage;
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
        try (EmbeddedProxy proxy = new EmbeddedProxy(telemetry.traffic(),
                new IncludeUsage(true, telemetry.traffic()), true)) {
            proxy.fromClient(REQUEST);
            EmbeddedChannel upstream = proxy.upstreams.get(0);
            drain(upstream);
            byte[] head = ("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1);
            proxy.fromUpstream(0, head, 0, head.length);
            byte[] event = chunk(EVENT);
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            // The measure is of the compiled relay: until the JIT has compiled (and, tiered, recompiled) every method
            // on the path, an interpreted or first-tier frame allocates what escape analysis later removes, and on a
            // slow or busy machine that can fall inside any fixed warm-up (CI measured 288 bytes so). So the relay
            // runs rounds of 15 000 events until one allocates nothing, at most ROUNDS; a relay that allocates per
            // event allocates in every round (15 000 events, kilobytes at least) and fails.
            // The request's token times (8 bytes a token, the record its ITL samples are made from at the end) live
            // in an array that doubles as it fills: a round never spans a doubling (the events up to it are relayed
            // first, unmeasured).
            int events = 15_000;
            long relayed = 0;
            relayAll(proxy, reads(event, 17_000)); // warm: the first token, the JIT, the decoder's buffers
            relayed += 17_000;
            long allocated = -1;
            int round = 0;
            while (round < ROUNDS && allocated != 0) {
                round++;
                long nextDoubling = Long.highestOneBit(relayed) << 1;
                if (relayed + events >= nextDoubling) {
                    int past = (int) (nextDoubling - relayed) + 100;
                    relayAll(proxy, reads(event, past));
                    relayed += past;
                }
                ByteBuf[] reads = reads(event, events); // the reads as the socket hands them, made beforehand
                long before = threads.getCurrentThreadAllocatedBytes();
                relayAll(proxy, reads);
                allocated = threads.getCurrentThreadAllocatedBytes() - before;
                relayed += events;
                System.out.printf("whole relay, round %d: %d bytes allocated for %d events%n", round, allocated,
                        events);
            }
            assertThat(allocated).as("bytes allocated relaying %d events in the last of %d rounds", events, round)
                    .isZero();
        }
    }

    static final int ROUNDS = 8;

    static ByteBuf[] reads(byte[] event, int n) {
        ByteBuf[] reads = new ByteBuf[n];
        for (int i = 0; i < n; i++) {
            reads[i] = io.netty.buffer.Unpooled.wrappedBuffer(event);
        }
        return reads;
    }

    /** Each read through the upstream pipeline as the event loop hands it, then what the client was written. */
    static void relayAll(EmbeddedProxy proxy, ByteBuf[] reads) {
        EmbeddedChannel upstream = proxy.upstreams.get(0);
        for (ByteBuf read : reads) {
            upstream.pipeline().fireChannelRead(read);
            upstream.pipeline().fireChannelReadComplete();
            drain(proxy.client());
        }
    }

    static void drain(EmbeddedChannel ch) {
        for (Object m; (m = ch.readOutbound()) != null;) {
            ((ByteBuf) m).release();
        }
    }
}
