package dev.llmsidecar.app;

import static org.assertj.core.api.Assertions.assertThat;

import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * /q/llm/ui over plain HTTP: only on the management port, HTML with a strict Content-Security-Policy that allows
 * exactly the page's inline script and style, not cached stale, and with no reference to anything outside it.
 */
@QuarkusTest
@QuarkusTestResource(SimulatedEngineResource.class)
class LivePageRouteTest {

    /** The proxy port is served by the sidecar's own data path; its bound port comes from there. */
    @Inject
    dev.llmsidecar.app.ProxyLifecycle proxyLifecycle;

    URL proxy;

    @org.junit.jupiter.api.BeforeEach
    void proxyUrl() throws Exception {
        proxy = java.net.URI.create("http://127.0.0.1:" + proxyLifecycle.port() + "/").toURL();
    }

    @TestHTTPResource(value = "/llm/ui", management = true)
    URL page;

    /** HTTP/1.1, as curl and browsers speak plain http (the JDK's default h2c upgrade once hung a CI run here). */
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(java.time.Duration.ofSeconds(5)).build();

    HttpResponse<String> get(URI uri) throws Exception {
        return http.send(HttpRequest.newBuilder(uri).timeout(java.time.Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void thePageIsServedOnTheManagementPortAsSelfContainedHtml() throws Exception {
        HttpResponse<String> r = get(page.toURI());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
        assertThat(r.headers().firstValue("cache-control")).hasValue("no-cache");
        assertThat(r.headers().firstValue("x-content-type-options")).hasValue("nosniff");
        String html = r.body();
        assertThat(html).startsWith("<!DOCTYPE html>").contains("<svg", "data-points", "setTimeout(poll");
        // self-contained: no CDN, font, image or API outside the page's own origin
        assertThat(html).doesNotContainIgnoringCase("http://").doesNotContainIgnoringCase("https://")
                .doesNotContain("src=").doesNotContain("<link").doesNotContain("@import").doesNotContain("url(")
                .doesNotContain("//cdn");

        String csp = r.headers().firstValue("content-security-policy").orElseThrow();
        assertThat(csp).contains("default-src 'none'", "connect-src 'self'", "frame-ancestors 'none'")
                .doesNotContain("unsafe-inline").doesNotContain("unsafe-eval").doesNotContain("*");
        // the inline blocks run because the policy names their hashes
        assertThat(csp).contains("script-src " + hash(html, "script")).contains("style-src " + hash(html, "style"));
    }

    @TestHTTPResource(value = "/llm/history", management = true)
    URL history;

    @TestHTTPResource(value = "/llm?format=text", management = true)
    URL text;

    @Test
    void theSidecarKeepsThePagesHistoryFromItsStart() throws Exception {
        io.vertx.core.json.JsonObject h = null;
        long deadline = System.nanoTime() + 10_000_000_000L;
        while ((h == null || h.getJsonArray("t").isEmpty()) && System.nanoTime() < deadline) {
            HttpResponse<String> r = get(history.toURI());
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
            h = new io.vertx.core.json.JsonObject(r.body());
            Thread.sleep(100);
        }
        assertThat(h.getJsonArray("t")).as("sampled at start").isNotEmpty();
        assertThat(h.getLong("step_seconds")).isEqualTo(dev.llmsidecar.live.LiveHistory.STEP.toSeconds());
        assertThat(h.getJsonArray("series").stream().map(s -> ((io.vertx.core.json.JsonObject) s).getJsonArray("path")
                .getList())).contains(java.util.List.of("in_flight"));
    }

    @Test
    void aScreenfulOfTextAtFormatText() throws Exception {
        HttpResponse<String> r = get(text.toURI());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type")).hasValue("text/plain; charset=utf-8");
        assertThat(r.body()).startsWith("in flight ").contains("more: /q/llm (JSON)");
        assertThat(r.body().lines().count()).isLessThan(40);
    }

    @Test
    void theProxyPortDoesNotServeThePage() throws Exception {
        assertThat(page.getPort()).isNotEqualTo(proxy.getPort());
        // on the proxy port /q/llm/ui is just another path: it goes to the engine, which has none
        HttpResponse<String> viaProxy = get(URI.create(proxy + "q/llm/ui"));
        assertThat(viaProxy.statusCode()).isEqualTo(404);
        assertThat(viaProxy.body()).doesNotContain("<html").contains("not found: /q/llm/ui");
    }

    private static String hash(String html, String element) throws Exception {
        Matcher m = Pattern.compile("<" + element + ">(.*?)</" + element + ">", Pattern.DOTALL).matcher(html);
        assertThat(m.find()).as("one inline <%s>", element).isTrue();
        byte[] digest = MessageDigest.getInstance("SHA-256").digest(m.group(1).getBytes(StandardCharsets.UTF_8));
        assertThat(m.find()).as("only one inline <%s>", element).isFalse();
        return "'sha256-" + Base64.getEncoder().encodeToString(digest) + "'";
    }
}
