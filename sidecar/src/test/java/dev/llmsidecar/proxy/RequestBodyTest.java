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
        InspectBudget budget = new InspectBudget(1000);
        RequestBody body = new RequestBody(true, true, 1000, 100, budget);
        assertThat(body.mode()).isEqualTo(RequestBody.Mode.INSPECT);
        body.startGathering(ByteBufAllocator.DEFAULT, 7);
        assertThat(budget.used()).as("the declared length, taken at once").isEqualTo(7);
        HttpContent a = piece("{\"a\":");
        LastHttpContent b = last("1}");
        assertThat(body.accept(a)).isEqualTo(RequestBody.Step.GATHERING);
        assertThat(body.accept(b)).isEqualTo(RequestBody.Step.WHOLE);
        assertThat(a.refCnt()).as("the pieces went into the gathered body, not copied").isEqualTo(1);
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
        assertThat(budget.used()).as("given back with the last copy").isZero();
    }

    @Test
    void aBodyTooLargeToInspectStreamsOnFromWhatWasGathered() {
        RequestBody body = new RequestBody(true, true, 1000, 4, new InspectBudget(1000));
        body.startGathering(ByteBufAllocator.DEFAULT, -1);
        assertThat(body.accept(piece("abc"))).isEqualTo(RequestBody.Step.GATHERING);
        assertThat(body.accept(piece("def"))).isEqualTo(RequestBody.Step.TOO_LARGE_TO_INSPECT);
        assertThat(body.mode()).isEqualTo(RequestBody.Mode.PIPE);
        assertThat(body.skipped()).isEqualTo(RequestBody.Skipped.TOO_LARGE);
        assertThat(body.whole()).as("not held whole: no second attempt").isFalse();
        StringBuilder queued = new StringBuilder();
        for (HttpContent c; (c = body.pollQueued()) != null;) {
            queued.append(c.content().toString(US_ASCII));
            c.release();
        }
        assertThat(queued.toString()).isEqualTo("abcdef");
        HttpContent next = piece("g");
        assertThat(body.accept(next)).isEqualTo(RequestBody.Step.FORWARD);
        assertThat(next.refCnt()).as("forwarded pieces stay the caller's").isEqualTo(1);
        next.release();
    }

    @Test
    void theCapCountsEveryByteAndADeclaredLengthIsRefusedBeforeAny() {
        RequestBody body = new RequestBody(true, false, 5, 100, new InspectBudget(1000));
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
        RequestBody body = new RequestBody(false, true, 5, 100, new InspectBudget(1000));
        assertThat(body.mode()).isEqualTo(RequestBody.Mode.NONE);
        assertThat(body.whole()).isTrue();
        assertThat(body.wholeLength()).isZero();
        assertThat(body.ended()).as("no body followed the head").isFalse();
        assertThat(body.wholeContent()).isSameAs(LastHttpContent.EMPTY_LAST_CONTENT);
        HttpContent stray = last("");
        assertThat(body.accept(stray)).isEqualTo(RequestBody.Step.DROPPED);
        assertThat(stray.refCnt()).isZero();
    }

    /** Past the process-wide budget a body is piped, whether its length was declared or not. */
    @Test
    void aBodyPastTheBudgetIsPipedAndTheBudgetComesBackWithItsLastCopy() {
        InspectBudget budget = new InspectBudget(10);
        RequestBody holding = new RequestBody(true, true, 1000, 100, budget);
        holding.startGathering(ByteBufAllocator.DEFAULT, 8);
        assertThat(budget.used()).isEqualTo(8);
        RequestBody declared = new RequestBody(true, true, 1000, 100, budget);
        declared.startGathering(ByteBufAllocator.DEFAULT, 5);
        assertThat(declared.mode()).as("5 declared bytes do not fit the 2 left").isEqualTo(RequestBody.Mode.PIPE);
        assertThat(declared.skipped()).isEqualTo(RequestBody.Skipped.BUDGET);
        RequestBody chunked = new RequestBody(true, true, 1000, 100, budget);
        chunked.startGathering(ByteBufAllocator.DEFAULT, -1);
        assertThat(chunked.accept(piece("ab"))).isEqualTo(RequestBody.Step.GATHERING);
        assertThat(budget.used()).isEqualTo(10);
        assertThat(chunked.accept(piece("c"))).isEqualTo(RequestBody.Step.TOO_LARGE_TO_INSPECT);
        assertThat(chunked.skipped()).isEqualTo(RequestBody.Skipped.BUDGET);
        for (HttpContent c; (c = chunked.pollQueued()) != null;) {
            c.release();
        }
        chunked.release();
        holding.release();
        declared.release();
        assertThat(budget.used()).isZero();
    }
}
