package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.testkit.RawUpstream;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A stream stays open for minutes; the request that started it must not stay in memory that long. Real prompts are
 * tens to hundreds of kilobytes, so a proxy that keeps them per open stream runs out of heap at a few hundred
 * streams; request headers are a few kilobytes (SDK headers, API keys, tracing), kept per open stream they are a
 * large part of the heap at a few thousand.
 */
class HeldStreamMemoryTest {

    static final int STREAMS = 20;
    static final int PROMPT_BYTES = 2 * 1024 * 1024;
    static final byte[] FIRST = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
            .getBytes(StandardCharsets.UTF_8);
    static final byte[] LAST = "data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8);

    /**
     * An upstream that throws each request body away, sends one event, holds the stream until released, then ends
     * it: whatever memory grows while the streams are held is the sidecar's.
     */
    static RawUpstream holdingUpstream(CountDownLatch started, CountDownLatch release) throws Exception {
        return RawUpstream.discardingBodies((r, s, out) -> {
            assertThat(Long.parseLong(r.header("content-length")))
                    .as("the sidecar forwards an inspected body with its length").isPositive();
            RawUpstream.writeHead(out, "text/event-stream");
            RawUpstream.writeChunk(out, FIRST);
            started.countDown();
            release.await(60, TimeUnit.SECONDS);
            RawUpstream.writeChunk(out, LAST);
            RawUpstream.writeEnd(out);
        });
    }

    static long usedHeapAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    @Test
    void aHeldStreamDoesNotKeepItsPrompt() throws Exception {
        StringBuilder json = new StringBuilder(PROMPT_BYTES + 100)
                .append("{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"");
        json.append("x".repeat(PROMPT_BYTES));
        json.append("\"}]}");
        Buffer prompt = Buffer.buffer(json.toString());
        json.setLength(0);
        try (RawUpstream upstream = holdingUpstream(new CountDownLatch(1), new CountDownLatch(0));
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), upstream.url())) {
            // one stream first: classes loaded, pools and buffers warm, before the baseline
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", prompt.toString(), Map.of()).status()).isEqualTo(200);
        }
        CountDownLatch started = new CountDownLatch(STREAMS);
        CountDownLatch release = new CountDownLatch(1);
        try (RawUpstream upstream = holdingUpstream(started, release);
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), upstream.url())) {
            long before = usedHeapAfterGc();
            List<Future<Received>> streams = new ArrayList<>();
            for (int i = 0; i < STREAMS; i++) {
                streams.add(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", prompt, Map.of()));
            }
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            long held = usedHeapAfterGc() - before;
            release.countDown();
            for (Future<Received> s : streams) {
                Received r = ProxyFixture.await(s);
                assertThat(r.body().getBytes()).isEqualTo((new String(FIRST, StandardCharsets.UTF_8)
                        + new String(LAST, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8));
            }
            // 20 prompts of 2 MB: kept, they would be 40 MB or more
            assertThat(held).as("heap held by %d open streams with %d-byte prompts", STREAMS, PROMPT_BYTES)
                    .isLessThan(12L * 1024 * 1024);
        } finally {
            release.countDown();
        }
    }

    static final int HEADER_STREAMS = 150;

    /** An inspected LLM request (forwarded whole) and a path passed through untouched (its body piped). */
    @ParameterizedTest
    @ValueSource(strings = {"/v1/chat/completions", "/internal/passthrough"})
    void aHeldStreamDoesNotKeepItsRequestHeaders(String path) throws Exception {
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 24; i++) {
            many.append("x-client-header-").append(i).append(": ").append(Character.toString('a' + i).repeat(200))
                    .append("\r\n");
        }
        int headerBytes = many.length();
        long withFew = heapHeldByRawStreams(path, "x-client-header: 1\r\n");
        long withMany = heapHeldByRawStreams(path, many.toString());
        // the upstream here keeps each request head it read, one copy (measured: 1.0 per stream); kept by the sidecar
        // for the life of the stream, the headers' strings and their three maps add about 2.3 copies more
        assertThat(withMany - withFew)
                .as("heap held by %d open streams to %s: %d with few headers, %d with %d more header bytes each",
                        HEADER_STREAMS, path, withFew, withMany, headerBytes)
                .isLessThan(2L * HEADER_STREAMS * headerBytes);
    }

    /**
     * Opens {@link #HEADER_STREAMS} streams from raw sockets that all send the same bytes (the client side holds no
     * copy per stream), measures the heap they hold once each has its first event, then ends them and checks what
     * each client received.
     */
    static long heapHeldByRawStreams(String path, String extraHeaders) throws Exception {
        String body = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        byte[] request = ("POST " + path + " HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                + extraHeaders + "content-length: " + body.length() + "\r\n\r\n" + body)
                .getBytes(StandardCharsets.ISO_8859_1);
        try (RawUpstream upstream = holdingUpstream(new CountDownLatch(1), new CountDownLatch(0));
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), upstream.url())) {
            // classes loaded, pools and buffers warm, before the baseline
            assertThat(f.post(f.proxyPort, path, body, Map.of()).status()).isEqualTo(200);
        }
        CountDownLatch started = new CountDownLatch(HEADER_STREAMS);
        CountDownLatch release = new CountDownLatch(1);
        List<Socket> clients = new ArrayList<>();
        try (RawUpstream upstream = holdingUpstream(started, release);
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), upstream.url())) {
            long before = usedHeapAfterGc();
            for (int i = 0; i < HEADER_STREAMS; i++) {
                Socket s = new Socket(InetAddress.getLoopbackAddress(), f.proxyPort);
                s.setSoTimeout(30_000);
                clients.add(s);
                s.getOutputStream().write(request);
            }
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            long held = usedHeapAfterGc() - before;
            release.countDown();
            for (Socket s : clients) {
                InputStream in = s.getInputStream();
                RawUpstream.Request response = RawUpstream.read(in, true);
                assertThat(response.head()).startsWith("HTTP/1.1 200");
                assertThat(response.body()).isEqualTo((new String(FIRST, StandardCharsets.UTF_8)
                        + new String(LAST, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8));
            }
            return held;
        } finally {
            release.countDown();
            for (Socket s : clients) {
                s.close();
            }
        }
    }

    static final int PER_STREAM_STREAMS = 400;
    /**
     * The data path's budget for one open stream: client connection, upstream connection, exchange, decoder. The
     * measure: the live bytes of the JVM's class histogram (a full collection, then every reachable object), with the
     * streams held through the sidecar less the same streams held directly, per stream; each run's baseline taken once
     * the threads of what was closed before have ended and every event loop of the proxy has read once. Measured
     * 6.1 KB on 2026-11-28 (6 121 and 6 135 bytes in two runs of this class): the two Netty channels with their
     * pipelines and HTTP codecs about 3 KB, the exchange, raw relay, decoder and timeline about 1 KB, the rest byte and
     * object arrays. Earlier figures (3.5 KB in some runs, 6.4-7.2 KB in others) moved with two fixed costs that fell
     * inside or outside the measured run by timing: the previous run's upstream threads (their buffer caches) and the
     * event loops' first buffer caches (about 80 KB a thread). Since 2026-11-29 a warm round of the same streams runs on
     * the same proxy before the baseline (the pools it fills are the threads', not the streams'): 5.3 to 5.7 KB. Issue
     * 35 asks for 4 KB; the relay does not reach it (docs/bench/profile.md), so the bound stays where issue 27's run
     * left it.
     */
    static final long PER_STREAM_BUDGET_BYTES = 7 * 1024;

    /**
     * What one open stream costs the sidecar in live heap (the bytes of reachable objects,
     * {@link #liveHeapBytes}): {@link #PER_STREAM_STREAMS} streams held through the sidecar, less the same streams held
     * directly against the same upstream (the clients' and the upstream's own sockets and threads are in both), per
     * stream. A realistic request: an SDK's dozen headers, a chat body.
     */
    @Test
    void anOpenStreamCostsAtMostSevenKilobytesOfLiveHeap() throws Exception {
        String headers = "user-agent: OpenAI/Python 1.52.0\r\naccept: application/json\r\nauthorization: Bearer sk-"
                + "x".repeat(48) + "\r\nx-stainless-lang: python\r\nx-stainless-package-version: 1.52.0\r\n"
                + "x-stainless-os: Linux\r\nx-stainless-arch: x64\r\nx-stainless-runtime: CPython\r\n"
                + "x-stainless-runtime-version: 3.11.7\r\nx-stainless-retry-count: 0\r\naccept-encoding: gzip, deflate\r\n";
        long direct = heapHeldByStreams(null, headers, PER_STREAM_STREAMS);
        long proxied = heapHeldByStreams("/v1/chat/completions", headers, PER_STREAM_STREAMS);
        long perStream = (proxied - direct) / PER_STREAM_STREAMS;
        System.out.printf("live heap per open stream: %d bytes (%d streams: %d through the sidecar, %d direct)%n",
                perStream, PER_STREAM_STREAMS, proxied, direct);
        // and at least the two channels with their pipelines and codecs (about 3 KB): a measure that missed the
        // streams (closed early, held nowhere) would read about 0 and pass the budget empty
        assertThat(perStream).as("live heap per open stream, bytes").isLessThanOrEqualTo(PER_STREAM_BUDGET_BYTES)
                .isGreaterThanOrEqualTo(3 * 1024);
    }

    /** Every stream's events come in this many writes, one a millisecond, as an engine's batches arrive. */
    static final int WRITES = 100;

    /** Heap held by {@code n} open streams, through the sidecar on {@code path}, or direct to the upstream (null). */
    static long heapHeldByStreams(String path, String extraHeaders, int n) throws Exception {
        return heapHeldByStreams(path, extraHeaders, n, 1);
    }

    /** The latches of one round of streams: the upstream counts each stream's last event and holds it until released. */
    static final class Round {
        volatile CountDownLatch started = new CountDownLatch(0);
        volatile CountDownLatch release = new CountDownLatch(0);

        Round next(int streams) {
            started = new CountDownLatch(streams);
            release = new CountDownLatch(1);
            return this;
        }
    }

    /**
     * An upstream that throws each request body away, sends {@code events} token events (the last one's content "z")
     * in {@link #WRITES} chunks a millisecond apart, holds the stream until its round is released, then ends it.
     */
    static RawUpstream eventsUpstream(int events, Round round) throws Exception {
        byte[] event = FIRST;
        byte[] last = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"z\"}}]}\n\n"
                .getBytes(StandardCharsets.UTF_8);
        return RawUpstream.discardingBodies((r, s, out) -> {
            CountDownLatch started = round.started;
            CountDownLatch release = round.release;
            RawUpstream.writeHead(out, "text/event-stream");
            int sent = 0;
            int perWrite = Math.max(1, events / WRITES);
            while (sent < events) {
                if (sent > 0) {
                    Thread.sleep(1);
                }
                int batch = Math.min(perWrite, events - sent);
                java.io.ByteArrayOutputStream chunk = new java.io.ByteArrayOutputStream(batch * event.length + 64);
                for (int i = 0; i < batch; i++) {
                    chunk.write(sent + i == events - 1 ? last : event);
                }
                RawUpstream.writeChunk(out, chunk.toByteArray());
                sent += batch;
            }
            started.countDown();
            release.await(120, TimeUnit.SECONDS);
            RawUpstream.writeChunk(out, LAST);
            RawUpstream.writeEnd(out);
        });
    }

    /** Reads until the last event's content ("z") has arrived: the whole stream so far went through. */
    static void readThroughLastEvent(Socket s) throws Exception {
        byte[] marker = "\"content\":\"z\"".getBytes(StandardCharsets.UTF_8);
        InputStream in = s.getInputStream();
        byte[] buffer = new byte[64 * 1024];
        int matched = 0;
        while (true) {
            int read = in.read(buffer);
            assertThat(read).as("the stream ended before its last event").isPositive();
            for (int i = 0; i < read; i++) {
                matched = buffer[i] == marker[matched] ? matched + 1 : (buffer[i] == marker[0] ? 1 : 0);
                if (matched == marker.length) {
                    return;
                }
            }
        }
    }

    /**
     * As {@link #heapHeldByStreams(String, String, int)}, each stream held after {@code events} token events. The
     * same {@code n} streams run once first on the same proxy and are cut, so that what the proxy's threads keep after
     * such a round (the pooled allocator's thread caches, recycled write entries and handles, counters' contention
     * cells: bounded per thread, not per stream) is mostly in the baseline; the baseline is taken once the cut
     * streams' connections have closed ({@link #settledLiveHeapBytes}). What those pools still gain in the measured
     * round is not a stream's: {@link StreamLengthMemoryTest} measures with them off.
     */
    static long heapHeldByStreams(String path, String extraHeaders, int n, int events) throws Exception {
        int threadsAtStart = ManagementFactory.getThreadMXBean().getThreadCount();
        String body = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        byte[] request = ("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                + extraHeaders + "content-length: " + body.length() + "\r\n\r\n" + body)
                .getBytes(StandardCharsets.ISO_8859_1);
        try (RawUpstream upstream = holdingUpstream(new CountDownLatch(1), new CountDownLatch(0));
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), upstream.url())) {
            // classes loaded before the baseline
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", body, Map.of()).status()).isEqualTo(200);
        }
        awaitThreadsBackTo(threadsAtStart);
        Round round = new Round();
        List<Socket> clients = new ArrayList<>();
        try (RawUpstream upstream = eventsUpstream(events, round);
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), SLOW_WINDOWS, upstream.url())) {
            f.allowOpenRequestsAtClose(); // the streams are cut when the fixture closes, before the clients do
            int port = path == null ? upstream.server.getLocalPort() : f.proxyPort;
            if (path != null) {
                touchEveryEventLoop(f.proxyPort);
            }
            int threadsWithProxy = ManagementFactory.getThreadMXBean().getThreadCount();
            // the warm round: cut by its clients, then the upstream's threads end
            List<Socket> warm = openStreams(port, request, n, round.next(n));
            for (Socket s : warm) {
                s.close();
            }
            round.release.countDown();
            awaitThreadsBackTo(threadsWithProxy);
            f.assertNothingInFlight();
            long before = settledLiveHeapBytes();
            clients.addAll(openStreams(port, request, n, round.next(n)));
            return liveHeapBytes() - before;
        } finally {
            round.release.countDown();
            for (Socket s : clients) {
                s.close();
            }
            awaitThreadsBackTo(threadsAtStart);
        }
    }

    /** Opens {@code n} streams and reads each through its last event: every stream is open end to end. */
    static List<Socket> openStreams(int port, byte[] request, int n, Round round) throws Exception {
        List<Socket> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Socket s = new Socket(InetAddress.getLoopbackAddress(), port);
            s.setSoTimeout(30_000);
            clients.add(s);
            s.getOutputStream().write(request);
        }
        for (Socket s : clients) {
            readThroughLastEvent(s);
        }
        assertThat(round.started.await(60, TimeUnit.SECONDS)).as("every stream's last event written").isTrue();
        return clients;
    }

    /**
     * The sliding windows' slices (`sidecar.windows.durations`, docs/configuration.md) are allocated as time passes, every 10 s at the
     * shipped windows: a fixed cost per model, about 400 KB each time, that fell inside a measured round now and then.
     * At 10-minute slices none does.
     */
    static final Map<String, String> SLOW_WINDOWS = Map.of("sidecar.windows.durations", "PT1H,PT6H",
            "sidecar.windows.drift-short", "PT1H", "sidecar.windows.drift-baseline", "PT6H");

    /**
     * {@link #liveHeapBytes} once two reads 100 ms apart agree within 4 KB (at most 20 reads): a connection that was
     * cut closes on its event loop after the request has ended (an ended stream's upstream channel, about 1.5 KB, was
     * still reachable now and then when the baseline was taken).
     */
    static long settledLiveHeapBytes() throws Exception {
        long previous = liveHeapBytes();
        for (int i = 0; i < 20; i++) {
            Thread.sleep(100);
            long now = liveHeapBytes();
            if (Math.abs(now - previous) <= 4096) {
                return now;
            }
            previous = now;
        }
        throw new AssertionError("the live heap did not settle within 20 reads");
    }

    /**
     * Has each of the proxy's event loops read something (a request line the proxy refuses with 400, on connections
     * of their own) before the baseline: a thread's first pooled allocation creates its buffer cache (about 80 small
     * size classes, each with a 256-entry queue: some 80 KB a thread), a fixed cost that would otherwise fall inside
     * the measured run and count as about 800 bytes per stream.
     */
    static void touchEveryEventLoop(int port) throws Exception {
        for (int i = 0; i < 8; i++) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write("NOT-HTTP\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                byte[] status = new byte[12];
                assertThat(s.getInputStream().readNBytes(status, 0, 12)).isEqualTo(12);
                assertThat(new String(status, StandardCharsets.ISO_8859_1)).isEqualTo("HTTP/1.1 400");
            }
        }
    }

    /**
     * Waits until the threads of what was closed have ended, failing after 20 s. The upstream's threads (one per
     * connection) end after their sockets close, each holding the JDK's per-thread buffer cache (a 1024-entry
     * ByteBuffer array); those of one run still alive when the next takes its baseline died during that run and were
     * subtracted from its figure: the measure varied between 3.5 and 7.2 KB by that alone.
     */
    static void awaitThreadsBackTo(int threads) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (ManagementFactory.getThreadMXBean().getThreadCount() > threads) {
            // a baseline taken with them alive would move the measure by kilobytes a stream: fail, never measure
            assertThat(System.nanoTime()).as("threads back to %d within 20 s (now %d)", threads,
                    ManagementFactory.getThreadMXBean().getThreadCount()).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    /**
     * The bytes of every object reachable now: the JVM's class histogram (what {@code jcmd GC.class_histogram}
     * prints), which runs a full collection first and sums the live objects. The heap's "used" figure after a
     * collection would count, besides, whole regions for the large arrays of buffer pools and region remainders,
     * which move by a megabyte at a time and are not per stream.
     */
    static long liveHeapBytes() throws Exception {
        String histogram = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        Matcher total = Pattern.compile("(?m)^Total\\s+\\d+\\s+(\\d+)\\s*$").matcher(histogram);
        assertThat(total.find()).as("the class histogram's total line").isTrue();
        return Long.parseLong(total.group(1));
    }
}
