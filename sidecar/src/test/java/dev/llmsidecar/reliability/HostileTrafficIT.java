package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.Processes;
import dev.llmsidecar.testkit.RawUpstream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Production's hostile and long traffic against the packaged jar with the shipped JVM flags (80 MB heap, 64 MB direct,
 * ExitOnOutOfMemoryError), over loopback (issue 41). In every case the sidecar stays up, a control request gets 200
 * while the case holds, its RSS stays under the chart's memory limit, and every ending is counted. The timeouts are
 * lowered to seconds (configuration, not flags) so the cases end in this run.
 *
 * <p>HTTP/2: one cleartext connection (prior knowledge) opens 1 000 streams at once, past the 100 the sidecar
 * advertises; its frames are written and read raw, as a client that ignores the limit would.
 */
class HostileTrafficIT {

    /** The chart's memory limit for the sidecar container (charts/llm-sidecar/values.yaml, resources.limits). */
    static final long CHART_MEMORY_LIMIT = 288L * 1024 * 1024;
    static final int LONG_STREAMS = 200;
    static final int LONG_TOKENS = 20_000;
    static final int PER_WRITE = 500;
    static final byte[] TOKEN = ("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":"
            + "[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\n").getBytes(StandardCharsets.UTF_8);
    static final byte[] LAST_TOKEN = ("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
            + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"z\"},\"finish_reason\":null}]}\n\n")
            .getBytes(StandardCharsets.UTF_8);
    static final byte[] FINISH = ("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":"
            + "[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,"
            + "\"completion_tokens\":" + LONG_TOKENS + "}}\n\ndata: [DONE]\n\n").getBytes(StandardCharsets.UTF_8);
    static final byte[] ABSURD = ("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":"
            + "[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\n"
            + "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":"
            + "[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":"
            + "2147483648,\"completion_tokens\":2147483647}}\n\ndata: [DONE]\n\n").getBytes(StandardCharsets.UTF_8);
    static final String SMALL = "{\"model\":\"m\",\"stream\":true,\"max_tokens\":2,\"messages\":[{\"role\":\"user\","
            + "\"content\":\"hi\"}]}";

    final CountDownLatch releaseLong = new CountDownLatch(1);
    final CountDownLatch releaseHeld = new CountDownLatch(1);

    /** What the engine does, by the request's model: hold a long stream, stream without end, answer absurdly, or 2 tokens. */
    RawUpstream engine() throws IOException {
        return RawUpstream.discardingBodies((r, s, out) -> {
            String scenario = r.header("x-scenario");
            RawUpstream.writeHead(out, "text/event-stream");
            if ("long".equals(scenario)) {
                ByteArrayOutputStream batch = new ByteArrayOutputStream(PER_WRITE * TOKEN.length);
                for (int sent = 0; sent < LONG_TOKENS; sent += PER_WRITE) {
                    batch.reset();
                    for (int i = 0; i < PER_WRITE; i++) {
                        batch.write(sent + i == LONG_TOKENS - 1 ? LAST_TOKEN : TOKEN);
                    }
                    RawUpstream.writeChunk(out, batch.toByteArray());
                }
                releaseLong.await(120, TimeUnit.SECONDS);
                RawUpstream.writeChunk(out, FINISH);
            } else if ("endless".equals(scenario)) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                for (int i = 0; i < 1_000_000 && System.nanoTime() < deadline; i++) { // bounded: 60 s
                    RawUpstream.writeChunk(out, TOKEN);
                }
            } else if ("held".equals(scenario)) {
                RawUpstream.writeChunk(out, TOKEN);
                releaseHeld.await(60, TimeUnit.SECONDS);
                RawUpstream.writeChunk(out, FINISH);
            } else if ("absurd".equals(scenario)) {
                RawUpstream.writeChunk(out, ABSURD);
            } else {
                RawUpstream.writeChunk(out, LAST_TOKEN);
                RawUpstream.writeChunk(out, FINISH);
            }
            RawUpstream.writeEnd(out);
        });
    }

    static Processes.Sidecar sidecar(RawUpstream engine, Path traces, Map<String, String> more) throws Exception {
        Path jar = Processes.required("sidecar.jar");
        Map<String, String> properties = new HashMap<>(Map.of(
                "sidecar.limits.request-head-timeout", "PT3S",
                "sidecar.limits.request-body-timeout", "PT5S",
                "sidecar.limits.send-timeout", "PT3S",
                "sidecar.trace.enabled", "true",
                "sidecar.trace.dir", traces.toString()));
        properties.putAll(more);
        Processes.Sidecar sidecar = Processes.Sidecar.launch(jar).jvmOptions(Processes.shippedJvmOptions(jar))
                .upstream(engine.url()).env("SIDECAR_TRACE_SECRET", "9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9")
                .env("SIDECAR_ENGINE_SCRAPE_ENABLED", "false").properties(properties).start();
        sidecar.awaitReady(Duration.ofSeconds(60));
        return sidecar;
    }

    static Socket connect(int port) throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
        s.setSoTimeout(30_000);
        return s;
    }

    static byte[] post(String scenario, String body, String extraHeaders) {
        return ("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                + "x-scenario: " + scenario + "\r\n" + extraHeaders + "content-length: " + body.length() + "\r\n\r\n"
                + body).getBytes(StandardCharsets.ISO_8859_1);
    }

    /** A small streamed request on a connection of its own: the status line it got. */
    static String control(Processes.Sidecar sidecar, int bodyBytes) throws IOException {
        String body = bodyBytes <= SMALL.length() ? SMALL
                : SMALL.substring(0, SMALL.length() - 4) + "x".repeat(bodyBytes - SMALL.length()) + "\"}]}";
        try (Socket s = connect(sidecar.proxyPort)) {
            s.getOutputStream().write(post("control", body, ""));
            RawUpstream.Request response = RawUpstream.read(s.getInputStream(), true);
            return response.head().substring(0, response.head().indexOf('\r'));
        }
    }

    /** The process's resident set, from /proc. */
    static long rss(Processes.Sidecar sidecar) throws IOException {
        Matcher m = Pattern.compile("(?m)^VmRSS:\\s+(\\d+) kB").matcher(
                Files.readString(Path.of("/proc/" + sidecar.pid() + "/status")));
        assertThat(m.find()).isTrue();
        return Long.parseLong(m.group(1)) * 1024;
    }

    static void assertHealthy(Processes.Sidecar sidecar, String when) throws Exception {
        assertThat(sidecar.running.process.isAlive()).as("the sidecar is up %s", when).isTrue();
        assertThat(control(sidecar, 0)).as("a control request %s", when).isEqualTo("HTTP/1.1 200 OK");
        long rss = rss(sidecar);
        System.out.printf("HostileTrafficIT: RSS %s: %.1f MB%n", when, rss / 1048576.0);
        assertThat(rss).as("RSS %s, bytes (the chart's limit: %d)", when, CHART_MEMORY_LIMIT)
                .isLessThan(CHART_MEMORY_LIMIT);
    }

    static Scrape scrape(Processes.Sidecar sidecar) throws Exception {
        return new Scrape(sidecar.metrics());
    }

    /** Reads until the marker has gone by (true), or the peer closed or 30 s passed (false). */
    static boolean readThrough(Socket s, byte[] marker) throws IOException {
        InputStream in = s.getInputStream();
        byte[] buffer = new byte[64 * 1024];
        int matched = 0;
        try {
            for (int n; (n = in.read(buffer)) > 0;) {
                for (int i = 0; i < n; i++) {
                    matched = buffer[i] == marker[matched] ? matched + 1 : (buffer[i] == marker[0] ? 1 : 0);
                    if (matched == marker.length) {
                        return true;
                    }
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        }
        return false;
    }

    /** Reads to the end of the connection: true when the peer closed or reset it within 30 s. */
    static boolean closedByPeer(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        byte[] buffer = new byte[64 * 1024];
        try {
            while (in.read(buffer) >= 0) {
                // drained
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    /**
     * Opens {@code streams} HTTP/2 streams at once on one cleartext connection (prior knowledge), each a request the
     * engine answers and then holds, ignoring the server's MAX_CONCURRENT_STREAMS; returns {answered with a head, refused
     * with RST_STREAM REFUSED_STREAM, 1 if the server ended the connection (GOAWAY or close) first} once every stream
     * has had one or the other (30 s at most). Frames are encoded by Netty's HTTP/2 frame writer and read raw.
     */
    static int[] h2Streams(int port, int streams) throws Exception {
        io.netty.channel.embedded.EmbeddedChannel encoder = new io.netty.channel.embedded.EmbeddedChannel(
                new io.netty.channel.ChannelOutboundHandlerAdapter());
        io.netty.channel.ChannelHandlerContext ctx = encoder.pipeline().firstContext();
        io.netty.handler.codec.http2.DefaultHttp2FrameWriter writer =
                new io.netty.handler.codec.http2.DefaultHttp2FrameWriter();
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.write(io.netty.handler.codec.http2.Http2CodecUtil.connectionPrefaceBuf().toString(
                StandardCharsets.ISO_8859_1).getBytes(StandardCharsets.ISO_8859_1));
        writer.writeSettings(ctx, new io.netty.handler.codec.http2.Http2Settings(), ctx.newPromise());
        for (int i = 0; i < streams; i++) {
            // requests without a body (HEADERS ending the stream): a refused stream leaves no frame behind it
            io.netty.handler.codec.http2.Http2Headers headers = new io.netty.handler.codec.http2.DefaultHttp2Headers()
                    .method("GET").scheme("http").authority("127.0.0.1").path("/v1/models").add("x-scenario", "held");
            writer.writeHeaders(ctx, 1 + 2 * i, headers, 0, true, ctx.newPromise());
        }
        encoder.flush(); // the writes reach the embedded channel's outbound queue
        for (Object o; (o = encoder.readOutbound()) != null;) {
            io.netty.buffer.ByteBuf b = (io.netty.buffer.ByteBuf) o;
            byte[] bytes = new byte[b.readableBytes()];
            b.readBytes(bytes);
            b.release();
            wire.write(bytes);
        }
        encoder.finishAndReleaseAll();
        try (Socket s = connect(port)) {
            s.setSoTimeout(30_000);
            OutputStream out = s.getOutputStream();
            out.write(wire.toByteArray());
            out.flush();
            java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
            java.util.Set<Integer> answered = new java.util.HashSet<>();
            java.util.Set<Integer> refused = new java.util.HashSet<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            boolean ended = false;
            while (!ended && answered.size() + refused.size() < streams && System.nanoTime() < deadline) {
                int first = in.read();
                if (first < 0) {
                    ended = true;
                    break;
                }
                int length = first << 16 | in.readUnsignedByte() << 8 | in.readUnsignedByte();
                int type = in.readUnsignedByte();
                in.readUnsignedByte(); // flags
                int id = in.readInt() & 0x7fffffff;
                byte[] payload = in.readNBytes(length);
                if (type == 0x1 && id != 0) {
                    answered.add(id); // a response head
                } else if (type == 0x3 && payload.length == 4 && (payload[3] & 0xff) == 0x7) {
                    refused.add(id); // RST_STREAM, REFUSED_STREAM
                } else if (type == 0x7) {
                    ended = true; // GOAWAY
                } else if (type == 0x4 && (length == 0)) {
                    continue; // a SETTINGS ack
                } else if (type == 0x4) {
                    // the server's SETTINGS: acknowledged, as a client must
                    out.write(new byte[] {0, 0, 0, 0x4, 0x1, 0, 0, 0, 0});
                    out.flush();
                }
            }
            return new int[] {answered.size(), refused.size(), ended ? 1 : 0};
        }
    }

    static void awaitValue(Processes.Sidecar sidecar, double want, String name, String... labels) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        double got;
        while ((got = scrape(sidecar).sum(name, labels)) < want) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " " + String.join(",", labels) + " stayed at " + got + ", want " + want);
            }
            Thread.sleep(100);
        }
    }

    @Test
    void theSidecarSurvivesProductionsHostileTrafficWithItsShippedFlags() throws Exception {
        Path traces = Files.createTempDirectory("hostile-traces");
        ExecutorService pool = Executors.newFixedThreadPool(32);
        try (RawUpstream engine = engine(); Processes.Sidecar sidecar = sidecar(engine, traces, Map.of())) {
            assertHealthy(sidecar, "at start");

            // 1. 200 streams of 20 000 tokens each, read to their last token, then held open
            List<Socket> streams = new ArrayList<>();
            List<Future<Boolean>> read = new ArrayList<>();
            byte[] lastMarker = "\"content\":\"z\"".getBytes(StandardCharsets.UTF_8);
            for (int i = 0; i < LONG_STREAMS; i++) {
                Socket s = connect(sidecar.proxyPort);
                streams.add(s);
                s.getOutputStream().write(post("long", SMALL, ""));
                read.add(pool.submit(() -> readThrough(s, lastMarker)));
            }
            for (Future<Boolean> f : read) {
                assertThat(f.get(120, TimeUnit.SECONDS)).as("a long stream read to its last token").isTrue();
            }
            assertHealthy(sidecar, "with 200 streams of 20 000 tokens held open");
            assertThat(scrape(sidecar).sum("llm_sidecar_requests_in_flight")).isEqualTo(LONG_STREAMS);
            releaseLong.countDown();
            for (Socket s : streams) {
                assertThat(readThrough(s, "[DONE]".getBytes(StandardCharsets.UTF_8))).isTrue();
                s.close();
            }
            awaitValue(sidecar, LONG_STREAMS, "llm_sidecar_requests_total", "end_reason", "completed");

            // 2. 8 clients trickle 15 MiB bodies and go silent; meanwhile a 10 MB request is served
            List<Socket> silent = new ArrayList<>();
            byte[] mib = "y".repeat(1 << 20).getBytes(StandardCharsets.ISO_8859_1);
            for (int i = 0; i < 8; i++) {
                Socket s = connect(sidecar.proxyPort);
                silent.add(s);
                OutputStream out = s.getOutputStream();
                out.write(("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                        + "content-length: " + (16 << 20) + "\r\n\r\n{\"model\":\"m\",\"messages\":[{\"content\":\"")
                        .getBytes(StandardCharsets.ISO_8859_1));
                for (int k = 0; k < 15; k++) {
                    out.write(mib);
                }
                out.flush();
            }
            assertThat(control(sidecar, 10_000_000)).as("a 10 MB request while 8 clients hold 15 MiB each")
                    .isEqualTo("HTTP/1.1 200 OK");
            assertHealthy(sidecar, "with 8 silent 15 MiB bodies");
            for (Socket s : silent) {
                assertThat(closedByPeer(s)).as("a silent body is timed out").isTrue();
                s.close();
            }
            awaitValue(sidecar, 8, "llm_sidecar_client_timeouts_total", "when", "request_body");

            // 3. 200 incomplete request heads
            List<Socket> heads = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                Socket s = connect(sidecar.proxyPort);
                heads.add(s);
                s.getOutputStream().write("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: "
                        .getBytes(StandardCharsets.ISO_8859_1));
            }
            assertHealthy(sidecar, "with 200 incomplete heads");
            for (Socket s : heads) {
                assertThat(closedByPeer(s)).as("an incomplete head is closed").isTrue();
                s.close();
            }
            awaitValue(sidecar, 200, "llm_sidecar_client_timeouts_total", "when", "request_head");

            // 5. a client that stops reading a long stream: cut after the send timeout, the engine released
            try (Socket stalled = connect(sidecar.proxyPort)) {
                stalled.getOutputStream().write(post("endless", SMALL, ""));
                assertThat(new String(stalled.getInputStream().readNBytes(12), StandardCharsets.ISO_8859_1))
                        .isEqualTo("HTTP/1.1 200");
                awaitValue(sidecar, 1, "llm_sidecar_requests_total", "end_reason", "client_send_timeout");
                assertHealthy(sidecar, "after a client stopped reading");
            }

            // 4. one HTTP/2 connection opens 1 000 streams: 100 are served, the rest refused, the sidecar unharmed
            int[] h2 = h2Streams(sidecar.proxyPort, 1000);
            System.out.printf("HostileTrafficIT: h2, 1 000 streams on one connection: %d answered, %d refused, "
                    + "connection ended by the server: %s%n", h2[0], h2[1], h2[2] == 1);
            // at most MAX_CONCURRENT_STREAMS (100) are taken; past it each stream is refused with RST_STREAM, until
            // Netty's guard against a flood of resets (200 in a window: measured, 201 refused, then GOAWAY) ends the
            // connection that earned them, its own streams with it, nobody else's (150 streams: 100 answered, 50
            // refused, the connection kept)
            assertThat(h2[0]).as("streams answered: at most MAX_CONCURRENT_STREAMS").isLessThanOrEqualTo(100);
            assertThat(h2[1]).as("streams refused with RST_STREAM REFUSED_STREAM").isPositive();
            assertThat(h2[0] + h2[1] == 1000 || h2[2] == 1).as("every stream answered or refused, or the connection "
                    + "ended by the server").isTrue();
            assertHealthy(sidecar, "after one h2 connection opened 1 000 streams");
            releaseHeld.countDown();

            // 6. an engine reporting prompt_tokens 2^31 and completion_tokens 2^31 - 1, trace recorder on
            try (Socket s = connect(sidecar.proxyPort)) {
                s.getOutputStream().write(post("absurd", SMALL, ""));
                assertThat(RawUpstream.read(s.getInputStream(), true).head()).startsWith("HTTP/1.1 200");
            }
            awaitValue(sidecar, 1, "llm_sidecar_engine_values_clamped_total", "field", "prompt_tokens");
            assertHealthy(sidecar, "after absurd engine numbers");
            Scrape end = scrape(sidecar);
            assertThat(end.sum("llm_sidecar_engine_values_clamped_total", "field", "completion_tokens")).isEqualTo(1);
            System.out.printf("HostileTrafficIT: JVM after the cases: heap %.1f MB, metaspace %.1f MB, code cache "
                    + "%.1f MB, direct %.1f MB, threads %.0f%n",
                    end.sum("jvm_memory_used_bytes", "area", "heap") / 1048576.0,
                    end.sum("jvm_memory_used_bytes", "id", "Metaspace") / 1048576.0,
                    (end.sum("jvm_memory_used_bytes", "area", "nonheap") - end.sum("jvm_memory_used_bytes", "id",
                            "Metaspace") - end.sum("jvm_memory_used_bytes", "id", "Compressed Class Space"))
                            / 1048576.0,
                    end.sum("jvm_buffer_memory_used_bytes", "id", "direct") / 1048576.0,
                    end.sum("jvm_threads_live_threads"));
            System.out.printf("HostileTrafficIT: requests by end_reason: completed %.0f, client_send_timeout %.0f%n",
                    end.sum("llm_sidecar_requests_total", "end_reason", "completed"),
                    end.sum("llm_sidecar_requests_total", "end_reason", "client_send_timeout"));
        } finally {
            pool.shutdownNow();
        }
    }

    /** 7. A burst of new requests while memory is past the mark (the mark lowered): all shed, the sidecar up. */
    @Test
    void aBurstPastTheMarkIsShedAndTheSidecarStaysUp() throws Exception {
        Path traces = Files.createTempDirectory("hostile-traces");
        try (RawUpstream engine = engine();
                Processes.Sidecar sidecar = sidecar(engine, traces, Map.of("sidecar.limits.shed-heap-fraction",
                        "0.0001"))) {
            for (int i = 0; i < 50; i++) {
                try (Socket s = connect(sidecar.proxyPort)) {
                    s.getOutputStream().write(post("control", SMALL, ""));
                    RawUpstream.Request r = RawUpstream.read(s.getInputStream(), true);
                    assertThat(r.head()).startsWith("HTTP/1.1 503").contains("x-llm-sidecar-error: overloaded")
                            .contains("retry-after: 1");
                }
            }
            assertThat(sidecar.running.process.isAlive()).isTrue();
            assertThat(Processes.get("http://127.0.0.1:" + sidecar.managementPort + "/q/health/ready").statusCode())
                    .as("readiness stays up while shedding").isEqualTo(200);
            Scrape s = scrape(sidecar);
            assertThat(s.sum("llm_sidecar_requests_shed_total")).isEqualTo(50);
            assertThat(s.sum("llm_sidecar_requests_total", "end_reason", "shed")).isEqualTo(50);
            assertThat(rss(sidecar)).isLessThan(CHART_MEMORY_LIMIT);
        }
    }
}
