package dev.llmsidecar.rewrite;

import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import io.netty.buffer.ByteBuf;
import java.util.List;

/** The rewrites of several features on one exchange ({@link Rewriter#of}). */
final class ChainedRewrite implements ExchangeRewrite {

    private final List<ExchangeRewrite> rewrites;

    ChainedRewrite(List<ExchangeRewrite> rewrites) {
        this.rewrites = rewrites;
    }

    @Override
    public ByteBuf requestBody(ByteBuf clientBody) {
        ByteBuf body = clientBody;
        for (ExchangeRewrite r : rewrites) {
            ByteBuf next = r.requestBody(body);
            if (next != body && body != clientBody) {
                body.release(); // an intermediate edit: the transport keeps only the client's own and the last
            }
            body = next;
        }
        return body;
    }

    @Override
    public void requestHeaders(Headers upstream) {
        rewrites.forEach(r -> r.requestHeaders(upstream));
    }

    @Override
    public Verdict responseHead(int status, Headers response) {
        Verdict verdict = Verdict.FORWARD;
        for (ExchangeRewrite r : rewrites) {
            if (r.responseHead(status, response) == Verdict.RESEND_AS_THE_CLIENT_WROTE_IT) {
                verdict = Verdict.RESEND_AS_THE_CLIENT_WROTE_IT;
            }
        }
        return verdict;
    }

    @Override
    public void undo(Headers upstreamRequest) {
        rewrites.forEach(r -> r.undo(upstreamRequest));
    }

    @Override
    public StreamDecoder decoder(WireFormat format, TokenEventSink sink, UpstreamResponse response) {
        for (ExchangeRewrite r : rewrites) {
            StreamDecoder d = r.decoder(format, sink, response);
            if (d != null) {
                return d;
            }
        }
        return null;
    }

    @Override
    public boolean editsResponseBody() {
        for (ExchangeRewrite r : rewrites) {
            if (r.editsResponseBody()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void ended(boolean completedStream) {
        rewrites.forEach(r -> r.ended(completedStream));
    }
}
