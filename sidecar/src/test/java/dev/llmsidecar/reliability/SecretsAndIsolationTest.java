package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.CapturedLogs;
import dev.llmsidecar.support.ProxyFixture.Received;
import dev.llmsidecar.support.ProxyFixture;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;

/**
 * Secrets and bodies never reach the logs, even at TRACE and on every failure path; management paths on the proxy
 * port are just paths of the upstream. (The packaged app's port split is checked in SidecarApplicationTest.)
 */
class SecretsAndIsolationTest {

    static final String SECRET = "sk-test-SECRET-0123456789";
    static final String PROMPT = "PROMPT-TEXT-must-not-be-logged";
    static final String STREAM = "{\"model\":\"sim-llama-8b\",\"stream\":true,\"max_tokens\":5,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"" + PROMPT + "\"}]}";

    @Test
    void authorizationApiKeysAndBodiesNeverAppearInLogs() throws Exception {
        CapturedLogs logs = new CapturedLogs(Level.FINE);
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        Map<String, String> secrets = Map.of("authorization", "Bearer " + SECRET, "api-key", SECRET,
                "x-api-key", SECRET, "cookie", "session=" + SECRET);
        try {
            EngineBehaviour engine = EngineBehaviour.defaults().withTiming(Duration.ofMillis(5), Duration.ofMillis(5));
            try (ProxyFixture f = new ProxyFixture(engine, Map.of("sidecar.upstream.idle-timeout", "PT2S"))) {
                assertThat(f.post(f.proxyPort, "/v1/chat/completions", STREAM, secrets).text()).contains("[DONE]");
                f.post(f.proxyPort, "/v1/chat/completions", STREAM, with(secrets, "x-sim-fail-after-chunks", "2"));
                f.post(f.proxyPort, "/v1/chat/completions", STREAM, with(secrets, "x-sim-stall-after-chunks", "1"));
                f.post(f.proxyPort, "/v1/chat/completions", STREAM, with(secrets, "x-sim-status", "401"));
                f.post(f.proxyPort, "/v1/chat/completions", "not json " + PROMPT, secrets);
            }
            try (ProxyFixture f = new ProxyFixture(engine, Map.of(), "http://127.0.0.1:" + closedPort)) {
                assertThat(f.post(f.proxyPort, "/v1/chat/completions", STREAM, secrets).status()).isEqualTo(502);
            }
        } finally {
            logs.close();
        }
        List<String> logged = logs.entries().stream().map(CapturedLogs.Entry::toString).toList();
        assertThat(logged).as("debug logging was really on").anyMatch(l -> l.contains("upstream"));
        assertThat(logged).noneMatch(l -> l.contains(SECRET)).noneMatch(l -> l.contains(PROMPT));
    }

    @Test
    void managementPathsOnTheProxyPortGoToTheUpstream() {
        try (ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of())) {
            for (String path : List.of("/q/metrics", "/q/health", "/q/health/ready", "/q/health/live", "/q/llm")) {
                Received r = ProxyFixture.await(f.send(f.proxyPort, io.vertx.core.http.HttpMethod.GET, path,
                        io.vertx.core.buffer.Buffer.buffer(), Map.of()));
                assertThat(r.status()).as(path).isEqualTo(404);
                assertThat(r.text()).as("answered by the engine, not the sidecar").contains("not found: " + path);
            }
        }
    }

    static Map<String, String> with(Map<String, String> base, String k, String v) {
        java.util.HashMap<String, String> m = new java.util.HashMap<>(base);
        m.put(k, v);
        return m;
    }
}
