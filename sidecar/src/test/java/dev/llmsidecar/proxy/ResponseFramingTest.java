package dev.llmsidecar.proxy;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

/** How an engine's head is framed for each kind of client, without a socket. */
class ResponseFramingTest {

    private static HttpResponse head(String... headers) {
        HttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        for (int i = 0; i < headers.length; i += 2) {
            r.headers().add(headers[i], headers[i + 1]);
        }
        return r;
    }

    @Test
    void aStreamWithoutLengthGoesChunkedToAnHttp11ClientAndHopByHopHeadersStay() {
        HttpResponse r = head("content-type", "text/event-stream", "transfer-encoding", "chunked",
                "connection", "keep-alive", "keep-alive", "timeout=5", "x-request-id", "abc");
        ResponseFraming.Framed f = ResponseFraming.frame(r, HttpVersion.HTTP_1_1, false, false, false, false);
        assertThat(f).isEqualTo(new ResponseFraming.Framed(true, false));
        assertThat(r.headers().get("transfer-encoding")).isEqualTo("chunked");
        assertThat(r.headers().contains("keep-alive")).as("hop-by-hop").isFalse();
        assertThat(r.headers().contains("connection")).isFalse();
        assertThat(r.headers().get("x-request-id")).isEqualTo("abc");
        assertThat(r.protocolVersion()).isEqualTo(HttpVersion.HTTP_1_1);
    }

    @Test
    void anHttp10ClientGetsTheBodyDelimitedByTheClose() {
        HttpResponse r = head("transfer-encoding", "chunked");
        ResponseFraming.Framed f = ResponseFraming.frame(r, HttpVersion.HTTP_1_0, false, false, false, false);
        assertThat(f).isEqualTo(new ResponseFraming.Framed(true, true));
        assertThat(r.headers().contains("transfer-encoding")).isFalse();
        assertThat(r.headers().get("connection")).isEqualTo("close");
        assertThat(r.protocolVersion()).isEqualTo(HttpVersion.HTTP_1_0);
    }

    @Test
    void anHttp10KeepAliveClientWithALengthKeepsItsConnection() {
        HttpResponse r = head("content-length", "12");
        ResponseFraming.Framed f = ResponseFraming.frame(r, HttpVersion.HTTP_1_0, false, false, false, false);
        assertThat(f).isEqualTo(new ResponseFraming.Framed(false, false));
        assertThat(r.headers().get("connection")).isEqualTo("keep-alive");
        assertThat(r.headers().get("content-length")).isEqualTo("12");
    }

    @Test
    void aLengthFramedBodyARewriteEditsGoesChunked() {
        HttpResponse r = head("content-length", "400", "content-type", "text/event-stream");
        ResponseFraming.Framed f = ResponseFraming.frame(r, HttpVersion.HTTP_1_1, false, false, true, false);
        assertThat(f.streamed()).isTrue();
        assertThat(r.headers().contains("content-length")).isFalse();
        assertThat(r.headers().get("transfer-encoding")).isEqualTo("chunked");
    }

    @Test
    void bodylessResponsesAndHttp2StreamsAreNotChunkedAndClosingIsSaid() {
        HttpResponse noContent = head();
        assertThat(ResponseFraming.frame(noContent, HttpVersion.HTTP_1_1, false, true, false, true))
                .isEqualTo(new ResponseFraming.Framed(false, true));
        assertThat(noContent.headers().contains("transfer-encoding")).isFalse();
        assertThat(noContent.headers().get("connection")).isEqualTo("close");

        HttpResponse h2 = head("transfer-encoding", "chunked");
        assertThat(ResponseFraming.frame(h2, HttpVersion.HTTP_1_1, true, false, false, true))
                .isEqualTo(new ResponseFraming.Framed(true, true));
        assertThat(h2.headers().contains("transfer-encoding")).as("HTTP/2 frames the body itself").isFalse();
        assertThat(h2.headers().contains("connection")).isFalse();
    }
}
