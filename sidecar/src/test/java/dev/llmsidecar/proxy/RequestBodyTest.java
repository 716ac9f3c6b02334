package dev.llmsidecar.proxy;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import org.junit.jupiter.api.Test;

/** The request body's modes, cap, gathering and second-attempt bookkeeping, without a socket. */
class RequestBodyTest {

    private static HttpContent piece(String s) {
        return new DefaultHttpContent(Unpooled.copiedBuffer(s, US_ASCII));
    }

    private static LastHttpContent last(String s) {
        return new DefaultLastHttpContent(Unpooled.copiedBuffer(s, US_ASCII));
    }

    @Test
    void anLlmBodyIsGatheredWholeAndKeptWithTheClientsOwnForASecondAttempt() {
        RequestBody body = new RequestBody(true, true, 1000, 100);
        assertThat(body.mode()).isEqualTo(RequestBody.Mode.INSPECT);
        body.startGathering(ByteBufAllocator.DEFAULT);
        HttpContent a = piece("{\"a\":");
        LastHttpContent b = last("1}");
        assertThat(body.accept(a)).isEqualTo(RequestBody.Step.GATHERING);
        assertThat(body.accept(b)).isEqualTo(RequestBody.Step.WHOLE);
        assertThat(a.refCnt()).as("the pieces went into the gathered body").isEqualTo(1);
        ByteBuf own = body.gathered();
        assertThat(own.toString(US_ASCII)).isEqualTo("{\"a\":1}");
        ByteBuf edited = Unpooled.copiedBuffer("{\"a\":1,\"b\":2}", US_ASCII);
        body.holdWhole(edited, own);
        assertThat(body.whole()).isTrue();
        assertThat(body.wholeLength()).isEqualTo(13);
        LastHttpContent first = body.wholeContent();
        assertThat(first.content().toString(US_ASCII)).isEqualTo("{\"a\":1,\"b\":2}");
        first.release();
        body.backToTheClientsOwn();
        assertThat(edited.refCnt()).as("the edit is let go").isZero();
        assertThat(body.wholeLength()).isEqualTo(7);
        body.release();
        assertThat(own.refCnt()).isZero();
    }

    @Test
    void aBodyTooLargeToInspectStreamsOnFromWhatWasGathered() {
        RequestBody body = new RequestBody(true, true, 1000, 4);
        body.startGathering(ByteBufAllocator.DEFAULT);
        assertThat(body.accept(piece("abc"))).isEqualTo(RequestBody.Step.GATHERING);
        assertThat(body.accept(piece("def"))).isEqualTo(RequestBody.Step.TOO_LARGE_TO_INSPECT);
        assertThat(body.mode()).isEqualTo(RequestBody.Mode.PIPE);
        assertThat(body.whole()).as("not held whole: no second attempt").isFalse();
        HttpContent queued = body.pollQueued();
        assertThat(queued.content().toString(US_ASCII)).isEqualTo("abcdef");
        queued.release();
        HttpContent next = piece("g");
        assertThat(body.accept(next)).isEqualTo(RequestBody.Step.FORWARD);
        assertThat(next.refCnt()).as("forwarded pieces stay the caller's").isEqualTo(1);
        next.release();
    }

    @Test
    void theCapCountsEveryByteAndADeclaredLengthIsRefusedBeforeAny() {
        RequestBody body = new RequestBody(true, false, 5, 100);
        assertThat(body.declaredTooLarge(6)).isTrue();
        assertThat(body.declaredTooLarge(5)).isFalse();
        HttpContent a = piece("abc");
        assertThat(body.accept(a)).isEqualTo(RequestBody.Step.FORWARD);
        a.release();
        HttpContent b = piece("def");
        assertThat(body.accept(b)).isEqualTo(RequestBody.Step.TOO_LARGE);
        assertThat(b.refCnt()).as("released").isZero();
    }

    @Test
    void withoutABodyNothingIsKeptAndStrayPiecesAreDropped() {
        RequestBody body = new RequestBody(false, true, 5, 100);
        assertThat(body.mode()).isEqualTo(RequestBody.Mode.NONE);
        assertThat(body.whole()).isTrue();
        assertThat(body.wholeLength()).isZero();
        assertThat(body.ended()).as("no body followed the head").isFalse();
        assertThat(body.wholeContent()).isSameAs(LastHttpContent.EMPTY_LAST_CONTENT);
        HttpContent stray = last("");
        assertThat(body.accept(stray)).isEqualTo(RequestBody.Step.DROPPED);
        assertThat(stray.refCnt()).isZero();
    }
}
