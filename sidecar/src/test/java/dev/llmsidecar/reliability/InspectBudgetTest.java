package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Clients that send part of a large body and go silent hold the inspect budget, not the sidecar (issue 41): before
 * it, three such clients held 57 of the 64 MiB of direct memory and every other request over 7 MiB was reset
 * mid-upload. With a budget, a body that does not fit goes to the engine uninspected and is served; the budget comes
 * back when the silent clients are timed out.
 */
class InspectBudgetTest {

    static final int BUDGET = 3_000_000;

    static String body(int bytes) {
        String head = "{\"model\":\"sim-llama-8b\",\"max_tokens\":3,\"messages\":[{\"role\":\"user\",\"content\":\"";
        String tail = "\"}]}";
        return head + "x".repeat(bytes - head.length() - tail.length()) + tail;
    }

    @Test
    void silentClientsHoldTheBudgetAndLargerBodiesArePipedAndServed() throws Exception {
        Map<String, String> config = Map.of("sidecar.limits.inspect-budget", Integer.toString(BUDGET),
                "sidecar.limits.request-body-timeout", "PT2S");
        List<Socket> silent = new ArrayList<>();
        try (ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), config)) {
            // three clients declare 2 MB bodies, send half of each, and stop: the first takes 2 MB of the 3 MB budget,
            // the other two do not fit and are piped to the engine as they come
            byte[] half = body(2_000_000).substring(0, 1_000_000).getBytes(StandardCharsets.ISO_8859_1);
            for (int i = 0; i < 3; i++) {
                Socket s = new Socket(InetAddress.getLoopbackAddress(), f.proxyPort);
                s.setSoTimeout(20_000);
                silent.add(s);
                OutputStream out = s.getOutputStream();
                out.write(("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                        + "content-length: 2000000\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                out.write(half);
                out.flush();
            }
            EndReasonsTest.awaitValue(f, v -> v == 2, "llm_sidecar_body_inspection_skipped_total", "reason", "budget");
            // meanwhile a 2.5 MB request does not fit what is left: piped, and served
            var large = f.post(f.proxyPort, "/v1/chat/completions", body(2_500_000), Map.of());
            assertThat(large.status()).isEqualTo(200);
            assertThat(large.text()).contains("chat.completion");
            // a small one fits and is inspected: its model is the one its body names
            var small = f.post(f.proxyPort, "/v1/chat/completions", body(10_000), Map.of());
            assertThat(small.status()).isEqualTo(200);
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_body_inspection_skipped_total", "reason", "budget")).isEqualTo(3);
            // the silent clients are timed out; the budget they held comes back: the same 2.5 MB body is inspected
            EndReasonsTest.awaitValue(f, v -> v >= 1, "llm_sidecar_client_timeouts_total", "when", "request_body");
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (f.proxy().inspectBudgetUsed() != 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(f.proxy().inspectBudgetUsed()).as("bytes held for inspection once the clients are gone")
                    .isZero();
            var again = f.post(f.proxyPort, "/v1/chat/completions", body(2_500_000), Map.of());
            assertThat(again.status()).isEqualTo(200);
            assertThat(f.scrape().sum("llm_sidecar_body_inspection_skipped_total", "reason", "budget")).isEqualTo(3);
            f.allowOpenRequestsAtClose(); // the two piped silent clients' requests are open until their sockets close
        } finally {
            for (Socket s : silent) {
                s.close();
            }
        }
    }
}
