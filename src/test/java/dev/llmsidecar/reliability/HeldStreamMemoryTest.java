package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.ProxyFixture.Received;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A stream stays open for minutes; the prompt that started it must not stay in memory that long. Real prompts are
 * tens to hundreds of kilobytes, so a proxy that keeps them per open stream runs out of heap at a few hundred
 * streams.
 */
class HeldStreamMemoryTest {

    static final int STREAMS = 20;
    static final int PROMPT_BYTES = 2 * 1024 * 1024;
    static final byte[] FIRST = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
            .getBytes(StandardCharsets.UTF_8);
    static final byte[] LAST = "data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8);

    /**
     * An upstream that reads each request and throws its body away, sends one event, holds the stream until
     * released, then ends it: whatever memory grows while the streams are held is the sidecar's.
     */
    static final class HoldingUpstream implements AutoCloseable {
        final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        final CountDownLatch started = new CountDownLatch(STREAMS);
        final CountDownLatch release = new CountDownLatch(1);
        final List<Socket> sockets = new java.util.concurrent.CopyOnWriteArrayList<>();

        HoldingUpstream() throws Exception {
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        Socket s = server.accept();
                        sockets.add(s);
                        Thread t = new Thread(() -> serve(s), "holding-upstream");
                        t.setDaemon(true);
                        t.start();
                    }
                } catch (Exception e) {
                    // closed
                }
            }, "holding-upstream-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private void serve(Socket s) {
            try (s) {
                InputStream in = s.getInputStream();
                StringBuilder head = new StringBuilder();
                while (!head.toString().endsWith("\r\n\r\n")) {
                    int b = in.read();
                    if (b < 0) {
                        return;
                    }
                    head.append((char) b);
                }
                long length = -1;
                for (String line : head.toString().split("\r\n")) {
                    if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                        length = Long.parseLong(line.substring(15).trim());
                    }
                }
                assertThat(length).as("the sidecar forwards an inspected body with its length").isPositive();
                in.skipNBytes(length);
                OutputStream out = s.getOutputStream();
                out.write(("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                        + "connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                RawUpstream.writeChunk(out, FIRST);
                started.countDown();
                release.await(60, TimeUnit.SECONDS);
                RawUpstream.writeChunk(out, LAST);
                RawUpstream.writeEnd(out);
            } catch (Exception e) {
                // the test failed or ended
            }
        }

        String url() {
            return "http://127.0.0.1:" + server.getLocalPort();
        }

        @Override
        public void close() throws Exception {
            release.countDown();
            server.close();
            for (Socket s : sockets) {
                s.close();
            }
        }
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
        try (HoldingUpstream upstream = new HoldingUpstream();
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), upstream.url())) {
            // one stream first: classes loaded, pools and buffers warm, before the baseline
            upstream.release.countDown();
            assertThat(f.post(f.proxyPort, "/v1/chat/completions", prompt.toString(), Map.of()).status()).isEqualTo(200);
        }
        try (HoldingUpstream upstream = new HoldingUpstream();
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), upstream.url())) {
            long before = usedHeapAfterGc();
            List<Future<Received>> streams = new ArrayList<>();
            for (int i = 0; i < STREAMS; i++) {
                streams.add(f.send(f.proxyPort, HttpMethod.POST, "/v1/chat/completions", prompt, Map.of()));
            }
            assertThat(upstream.started.await(30, TimeUnit.SECONDS)).isTrue();
            long held = usedHeapAfterGc() - before;
            upstream.release.countDown();
            for (Future<Received> s : streams) {
                Received r = ProxyFixture.await(s);
                assertThat(r.body().getBytes()).isEqualTo((new String(FIRST, StandardCharsets.UTF_8)
                        + new String(LAST, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8));
            }
            // 20 prompts of 2 MB: kept, they would be 40 MB or more
            assertThat(held).as("heap held by %d open streams with %d-byte prompts", STREAMS, PROMPT_BYTES)
                    .isLessThan(12L * 1024 * 1024);
        }
    }
}
