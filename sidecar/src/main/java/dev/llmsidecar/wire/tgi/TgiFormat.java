package dev.llmsidecar.wire.tgi;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.FinishReason;
import dev.llmsidecar.wire.InspectedRequest;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.JsonReads;
import dev.llmsidecar.wire.JsonWireFormat;
import dev.llmsidecar.wire.ServerTimings;
import dev.llmsidecar.wire.SseDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.Usage;
import io.vertx.core.buffer.Buffer;

/**
 * Hugging Face TGI native API: {@code POST /generate_stream} (SSE, one generated token per event, the last with
 * {@code details.generated_tokens}) and {@code POST /generate} (one JSON body; token counts and timings in the
 * {@code x-prompt-tokens}, {@code x-generated-tokens}, {@code x-queue-time}, {@code x-inference-time} headers).
 * The path decides streaming; requests name no model.
 */
public final class TgiFormat extends JsonWireFormat {

    private final boolean streamPath;

    /** @param streamPath true for {@code /generate_stream} */
    public TgiFormat(JsonFactory json, boolean streamPath) {
        super("tgi", json, streamPath);
        this.streamPath = streamPath;
    }

    /** The path decides streaming, whatever the body says. */
    @Override
    public InspectedRequest inspect(Buffer body) {
        InspectedRequest r = super.inspect(body);
        return new InspectedRequest(r.decodable(), r.model(), streamPath, r.priority(), body);
    }

    @Override
    protected StreamDecoder streamDecoder(TokenEventSink sink, UpstreamResponse response) {
        return new SseDecoder(sink, new Events(sink), response.maxHeldEventBytes());
    }

    @Override
    protected JsonBodyDecoder.BodyHandler bodyHandler(TokenEventSink sink, UpstreamResponse response) {
        long headerPrompt = response.longHeader("x-prompt-tokens");
        long headerGenerated = response.longHeader("x-generated-tokens");
        long queueMs = response.longHeader("x-queue-time");
        long inferenceMs = response.longHeader("x-inference-time");
        return reading(bytes -> TgiEvent.parse(json, bytes, 0, bytes.length), e -> {
            if (e.error()) {
                sink.onStreamError();
                return;
            }
            long generated = e.generatedTokens() >= 0 ? e.generatedTokens() : headerGenerated;
            long prompt = e.inputLength() >= 0 ? e.inputLength() : headerPrompt;
            if (generated >= 0 || prompt >= 0) {
                sink.onUsage(new Usage(prompt, generated, -1));
            }
            if (queueMs >= 0 || inferenceMs >= 0) {
                sink.onServerTimings(new ServerTimings(JsonReads.msToNanos(queueMs), -1, -1,
                        JsonReads.msToNanos(inferenceMs)));
            }
            String finish = FinishReason.tgi(e.finishReason());
            if (finish != null) {
                sink.onFinishReason(finish);
            }
        });
    }

    /** The streaming side: one instance per response. */
    private final class Events implements SseDecoder.EventHandler {
        private final TokenEventSink sink;
        private long tokens;

        Events(TokenEventSink sink) {
            this.sink = sink;
        }

        @Override
        public boolean onEvent(byte[] data, int length, String eventType, long nanos) {
            TgiEvent e = TgiEvent.parse(json, data, 0, length);
            if (e == null) {
                return false;
            }
            if (e.error() || "error".equals(eventType)) {
                sink.onStreamError();
                return true;
            }
            if (e.token()) {
                tokens++;
                sink.onDataChunk(nanos);
                // one event = one generated token (special ones included, as generated_tokens counts them)
                sink.onTokenChunk(nanos, false, tokens);
            }
            if (e.generatedTokens() >= 0 || e.inputLength() >= 0) {
                sink.onUsage(new Usage(e.inputLength(), e.generatedTokens(), -1));
            }
            String finish = FinishReason.tgi(e.finishReason());
            if (finish != null) {
                sink.onFinishReason(finish);
            }
            return true;
        }
    }
}
