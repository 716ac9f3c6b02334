package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The official openai npm client, unchanged, through the sidecar. Needs node and {@code npm install} in
 * sidecar/src/test/node (.ci/run does it); outside CI the test is skipped when they are missing, in CI it fails.
 */
class NodeOpenAiClientTest {

    static final Path DIR = Path.of("src/test/node");

    @Test
    void openaiNpmClientStreamsAndCompletesThroughTheSidecar() throws Exception {
        boolean ready = Files.exists(DIR.resolve("node_modules/openai/package.json"));
        if (System.getenv("CI") == null) {
            assumeTrue(ready, "run npm install in sidecar/src/test/node to enable");
        }
        assertThat(ready).as("src/test/node/node_modules/openai (npm install)").isTrue();
        EngineBehaviour b = EngineBehaviour.defaults().withTiming(Duration.ofMillis(10), Duration.ofMillis(2));
        try (ProxyFixture f = new ProxyFixture(b, Map.of())) {
            Process p = new ProcessBuilder("node", "openai-client.mjs", "http://127.0.0.1:" + f.proxyPort + "/v1")
                    .directory(DIR.toFile()).redirectErrorStream(true).start();
            try {
                assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                assertThat(p.exitValue()).as(out).isZero();
                JsonObject result = new JsonObject(out.substring(out.lastIndexOf('\n') + 1));
                assertThat(result.getString("streamed")).isEqualTo("The quick brown fox jumps over");
                assertThat(result.getJsonObject("usage").getInteger("completion_tokens")).isEqualTo(4);
                assertThat(result.getString("completion")).isEqualTo("The quick brown");
            } finally {
                p.destroyForcibly();
            }
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_requests_total", "outcome", "ok")).isEqualTo(4);
            // the first stream taught the sidecar the layout; the second was injected and its usage chunk removed
            assertThat(s.sum("llm_sidecar_usage_injection_skipped_total", "reason", "learning")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_usage_injected_total")).isEqualTo(1);
            assertThat(s.sum("llm_sidecar_usage_chunks_stripped_total")).isEqualTo(1);
        }
    }
}
