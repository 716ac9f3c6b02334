package dev.llmsidecar.includeusage;

import dev.llmsidecar.rewrite.ExchangeRewrite;
import dev.llmsidecar.rewrite.Headers;
import dev.llmsidecar.wire.InflatingDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.WireFormat;
import dev.llmsidecar.wire.openai.OpenAiFormat;
import dev.llmsidecar.wire.openai.OpenAiRequest;
import dev.llmsidecar.wire.openai.OpenAiSseDecoder;
import dev.llmsidecar.wire.openai.UsageMode;
import dev.llmsidecar.wire.openai.UsageReport;
import io.netty.buffer.ByteBuf;
import java.util.Locale;

/**
 * include_usage on one exchange: the body edit and {@code Accept-Encoding: identity} where the policy injects, the
 * resend of the client's own request where the engine's answer cannot be given to the client (compressed despite
 * identity, or a 400/422 refusing the member), the OpenAI decoder that removes the usage in its one pass, and at the
 * end what the stream taught the policy. Confined to the exchange's event loop.
 */
final class UsageRewrite implements ExchangeRewrite {

    private final IncludeUsage feature;
    private final String key;
    private final OpenAiRequest request;
    private final boolean inject;
    private final boolean acceptsCompression;

    private UsageMode mode;
    private String clientAcceptEncoding;
    private boolean rejectedInjection;
    private OpenAiSseDecoder decoder;
    private boolean compressed;
    private boolean lengthFramed;

    UsageRewrite(IncludeUsage feature, String key, OpenAiRequest request, IncludeUsagePolicy.Decision decision,
            boolean acceptsCompression) {
        this.feature = feature;
        this.key = key;
        this.request = request;
        this.inject = decision.inject();
        this.mode = decision.handling();
        this.acceptsCompression = acceptsCompression;
    }

    @Override
    public ByteBuf requestBody(ByteBuf clientBody) {
        if (!inject) {
            return clientBody;
        }
        feature.traffic.count(UsageEvent.USAGE_INJECTED);
        var edit = request.usageEdit();
        return edit == null ? clientBody : edit.applyTo(clientBody); // a view: the client's bytes are not copied
    }

    /**
     * Where the sidecar turned include_usage on it asks for {@code Accept-Encoding: identity}: it can remove the usage
     * only from bytes that are not compressed.
     */
    @Override
    public void requestHeaders(Headers upstream) {
        if (mode == UsageMode.REMOVE) {
            clientAcceptEncoding = upstream.get("accept-encoding");
            upstream.set("accept-encoding", "identity");
        }
    }

    /**
     * Whether the client's own request must be sent in place of the one the sidecar turned include_usage on for,
     * before a byte of the answer is forwarded (docs/reliability.md): the engine compressed a success although asked
     * for identity (the sidecar cannot edit it), or refused the request with 400 or 422 (a server that forbids members
     * it does not know, where the client's own request would have been served).
     */
    @Override
    public Verdict responseHead(int status, Headers response) {
        if (rejectedInjection && status / 100 == 2) {
            // the client's own request was served where the one with stream_options was refused: not asked again
            feature.policy.injectionRejected(key);
        }
        if (mode != UsageMode.REMOVE) {
            return Verdict.FORWARD;
        }
        if (status == 400 || status == 422) {
            rejectedInjection = true;
            return resend(IncludeUsagePolicy.Resend.REJECTED, "the engine refused a request for which the sidecar had "
                    + "turned include_usage on (400 or 422)");
        }
        if (status / 100 != 2 || InflatingDecoder.identity(response.get("content-encoding"))) {
            return Verdict.FORWARD;
        }
        feature.policy.compressedDespiteIdentity(key);
        return resend(IncludeUsagePolicy.Resend.COMPRESSED, "the engine compressed a stream for which the sidecar had "
                + "turned include_usage on and asked for identity encoding");
    }

    private Verdict resend(IncludeUsagePolicy.Resend why, String what) {
        feature.traffic.count(why.event);
        feature.warnOnce("retry_" + why.name(), what + "; the client's own request was sent instead. The sidecar "
                + "no longer turns include_usage on for a model once its engine has done so and served the client's "
                + "own request; further cases are counted in llm_sidecar_upstream_retries_total, not logged");
        return Verdict.RESEND_AS_THE_CLIENT_WROTE_IT;
    }

    /** The client's own request goes out: its Accept-Encoding back, and its answer decoded as an unedited stream. */
    @Override
    public void undo(Headers upstream) {
        if (mode == UsageMode.REMOVE) {
            if (clientAcceptEncoding == null) {
                upstream.remove("accept-encoding");
            } else {
                upstream.set("accept-encoding", clientAcceptEncoding);
            }
        }
        mode = UsageMode.OBSERVE;
    }

    @Override
    public StreamDecoder decoder(WireFormat format, TokenEventSink sink, UpstreamResponse response) {
        if (!(format instanceof OpenAiFormat openAi) || !format.streamingResponse(response.contentType())) {
            return null; // a body that does not stream carries its usage anyway
        }
        compressed = !InflatingDecoder.identity(response.headers().apply("content-encoding"));
        lengthFramed = response.hasLength();
        decoder = openAi.sseDecoder(sink, response, mode);
        return decoder;
    }

    @Override
    public boolean editsResponseBody() {
        return decoder != null && mode == UsageMode.REMOVE;
    }

    /** What was removed is counted; what a completed stream showed is learned (and what could not be cut, counted). */
    @Override
    public void ended(boolean completedStream) {
        if (decoder == null) {
            return;
        }
        UsageReport report = decoder.usageReport();
        if (mode == UsageMode.REMOVE) {
            if (report.chunksRemoved() > 0) {
                feature.traffic.count(UsageEvent.USAGE_CHUNKS_REMOVED, report.chunksRemoved());
            }
            if (report.membersRemoved() > 0) {
                feature.traffic.count(UsageEvent.USAGE_MEMBERS_REMOVED, report.membersRemoved());
            }
        }
        if (completedStream) {
            IncludeUsagePolicy.UsageKept kept = feature.policy.observe(key, new IncludeUsagePolicy.Observation(
                    mode == UsageMode.REMOVE, acceptsCompression, compressed, lengthFramed, report));
            if (kept != null) {
                feature.traffic.count(kept.event);
                String why = kept.name().toLowerCase(Locale.ROOT);
                feature.warnOnce("usage_not_removed_" + why, "include_usage was turned on for "
                        + key.substring(0, key.indexOf('\n')) + " model " + IncludeUsage.loggable(request.model())
                        + " but its usage could not be removed exactly (" + why + "); the sidecar no "
                        + "longer turns it on for this model");
            }
        }
    }
}
