package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.ServedRequest;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The protocols clients speak to the proxy port besides HTTP/1.1: HTTP/1.0 (no chunked framing: a stream is
 * close-delimited) and cleartext HTTP/2, by prior knowledge and by Upgrade. Each gets the engine's bytes exactly, and
 * each request is measured like any other.
 */
class ClientProtocolsTest {

    static final EngineBehaviour ENGINE = EngineBehaviour.defaults()
            .withTiming(Duration.ofMillis(20), Duration.ofMillis(5)).withOutputTokens(6);
    static final String STREAM = "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    static final String WHOLE = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    /** A raw HTTP/1.0 exchange: the whole answer as sent (the connection closes after it). */
    static String http10(int port, String body) throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            byte[] b = body.getBytes(StandardCharsets.UTF_8);
            s.getOutputStream().write(("POST /v1/chat/completions HTTP/1.0\r\nhost: x\r\ncontent-type: application/json"
                    + "\r\ncontent-length: " + b.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write(b);
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            in.transferTo(got);
            return got.toString(StandardCharsets.UTF_8);
        }
    }

    static String entity(String response) {
        return response.substring(response.indexOf("\r\n\r\n") + 4);
    }

    static String engineBytes(ProxyFixture f) {
        ServedRequest served = f.engine.served().get(f.engine.served().size() - 1);
        return served.responseBody().toString(StandardCharsets.UTF_8);
    }

    @Test
    void anHttp10ClientGetsAStreamCloseDelimitedAndAWholeAnswerWithItsLength() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE, ProxyFixture.pinned("m"))) {
            f.engine.recordResponses(true);
            String stream = http10(f.proxyPort, STREAM);
            assertThat(stream).startsWith("HTTP/1.0 200");
            String head = stream.substring(0, stream.indexOf("\r\n\r\n")).toLowerCase(java.util.Locale.ROOT);
            assertThat(head).doesNotContain("transfer-encoding").doesNotContain("content-length");
            assertThat(entity(stream)).isEqualTo(engineBytes(f)).endsWith("data: [DONE]\n\n");

            String whole = http10(f.proxyPort, WHOLE);
            assertThat(whole).startsWith("HTTP/1.0 200").containsIgnoringCase("content-length:");
            assertThat(entity(whole)).isEqualTo(engineBytes(f));
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_requests_total", "model", "m", "outcome", "ok")).isEqualTo(2);
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count", "model", "m", "streaming", "true"))
                    .isEqualTo(1);
            // an HTTP/1.0 client could not be sent a stream re-framed without usage: it is never injected
            assertThat(s.sum("llm_sidecar_usage_injected_total")).isZero();
        }
    }

    @Test
    void h2cByPriorKnowledgeStreamsTheEnginesBytes() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE, ProxyFixture.pinned("m"))) {
            f.engine.recordResponses(true);
            Vertx vertx = f.vertx;
            HttpClient h2 = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                    .setHttp2ClearTextUpgrade(false));
            try {
                for (String body : new String[] {STREAM, WHOLE}) {
                    var response = ProxyFixture.await(h2.request(new RequestOptions().setHost("127.0.0.1")
                            .setPort(f.proxyPort).setMethod(HttpMethod.POST).setURI("/v1/chat/completions")
                            .putHeader("content-type", "application/json"))
                            .compose(req -> req.send(Buffer.buffer(body)))
                            .compose(res -> res.body().map(b -> Map.entry(res, b))));
                    assertThat(response.getKey().version()).isEqualTo(HttpVersion.HTTP_2);
                    assertThat(response.getKey().statusCode()).isEqualTo(200);
                    assertThat(response.getValue().toString(StandardCharsets.UTF_8)).isEqualTo(engineBytes(f));
                }
            } finally {
                ProxyFixture.await(h2.close());
            }
            Scrape s = f.settledScrape();
            assertThat(s.sum("llm_sidecar_requests_total", "model", "m", "outcome", "ok")).isEqualTo(2);
            assertThat(s.sum("llm_sidecar_inter_token_latency_seconds_count", "model", "m")).isEqualTo(5);
        }
    }

    @Test
    void h2cByUpgradeStreamsTheEnginesBytes() throws Exception {
        try (ProxyFixture f = new ProxyFixture(ENGINE, ProxyFixture.pinned("m"))) {
            f.engine.recordResponses(true);
            java.net.http.HttpClient jdk = java.net.http.HttpClient.newBuilder()
                    .version(java.net.http.HttpClient.Version.HTTP_2).build();
            for (String body : new String[] {WHOLE, STREAM}) {
                HttpResponse<String> r = jdk.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + f.proxyPort + "/v1/chat/completions"))
                        .header("content-type", "application/json").timeout(Duration.ofSeconds(10))
                        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).isEqualTo(engineBytes(f));
            }
            // the JDK client upgrades its first connection; either way both answers were exact
            assertThat(f.settledScrape().sum("llm_sidecar_requests_total", "model", "m", "outcome", "ok"))
                    .isEqualTo(2);
        }
    }
}
