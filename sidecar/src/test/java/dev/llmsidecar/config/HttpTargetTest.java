package dev.llmsidecar.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmsidecar.support.TestConfigs;
import java.net.URI;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The upstream URL is taken apart once, with one default-port rule, and every user reads the same parts. */
class HttpTargetTest {

    static HttpTarget upstream(String url) {
        return TestConfigs.sidecar(url, Map.of()).upstream().url(); // as the application reads it
    }

    @Test
    void httpWithAPort() {
        HttpTarget t = upstream("http://127.0.0.1:8000");
        assertThat(t).extracting(HttpTarget::ssl, HttpTarget::host, HttpTarget::port, HttpTarget::basePath)
                .containsExactly(false, "127.0.0.1", 8000, "");
        assertThat(t.authority()).isEqualTo("127.0.0.1:8000");
        assertThat(t.requestUri("/v1/chat/completions?x=1")).isEqualTo("/v1/chat/completions?x=1");
        assertThat(t.under("/metrics")).isEqualTo(URI.create("http://127.0.0.1:8000/metrics"));
    }

    @Test
    void withoutAPortTheSchemesDefault() {
        HttpTarget http = upstream("http://engine");
        assertThat(http.port()).isEqualTo(80);
        assertThat(http.authority()).as("the default port is not written").isEqualTo("engine");
        HttpTarget https = upstream("HTTPS://engine.example/");
        assertThat(https).extracting(HttpTarget::ssl, HttpTarget::port, HttpTarget::basePath)
                .containsExactly(true, 443, "");
        assertThat(https.authority()).isEqualTo("engine.example");
        assertThat(upstream("https://engine.example:8443").authority()).isEqualTo("engine.example:8443");
        assertThat(upstream("http://engine:443").ssl()).as("the scheme says, not the port").isFalse();
    }

    @Test
    void ipv6LiteralsConnectWithoutBracketsAndNameThemselvesWith() {
        HttpTarget t = upstream("http://[::1]:8000/base");
        assertThat(t.host()).isEqualTo("::1");
        assertThat(t.authority()).isEqualTo("[::1]:8000");
        assertThat(t.under("/health")).isEqualTo(URI.create("http://[::1]:8000/base/health"));
        assertThat(upstream("https://[2001:db8::7]").authority()).isEqualTo("[2001:db8::7]");
        assertThat(upstream("https://[2001:db8::7]").port()).isEqualTo(443);
    }

    @Test
    void aPathPrefixGoesBeforeEveryRequestAndProbe() {
        HttpTarget t = upstream("http://gateway:8080/engines/llama/");
        assertThat(t.basePath()).isEqualTo("/engines/llama");
        assertThat(t.requestUri("/v1/models")).isEqualTo("/engines/llama/v1/models");
        assertThat(t.under("v1/models")).isEqualTo(URI.create("http://gateway:8080/engines/llama/v1/models"));
        HttpTarget probe = HttpTarget.of(t.under("/health"));
        assertThat(probe.ownRequestUri()).isEqualTo("/engines/llama/health");
        assertThat(HttpTarget.of(URI.create("http://e:1")).ownRequestUri()).isEqualTo("/");
        assertThat(HttpTarget.of(URI.create("http://e:1/ready?full=1")).ownRequestUri()).isEqualTo("/ready?full=1");
    }

    @Test
    void anythingButHttpOrWithoutAHostStopsTheStartNamingTheProperty() {
        assertThatThrownBy(() -> upstream("ftp://engine")).hasStackTraceContaining("sidecar.upstream.url")
                .hasStackTraceContaining("ftp://engine");
        assertThatThrownBy(() -> upstream("http:///nohost")).hasStackTraceContaining("sidecar.upstream.url")
                .hasStackTraceContaining("http:///nohost");
        assertThatThrownBy(() -> HttpTarget.of(URI.create("ftp://engine"))).hasMessageContaining("http or https");
        assertThatThrownBy(() -> HttpTarget.of(URI.create("http:///nohost"))).hasMessageContaining("no host");
    }
}
