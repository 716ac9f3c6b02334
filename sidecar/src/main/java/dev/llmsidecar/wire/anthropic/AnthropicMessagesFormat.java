package dev.llmsidecar.wire.anthropic;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.wire.ConversationShape;
import dev.llmsidecar.wire.FinishReason;
import dev.llmsidecar.wire.JsonBodyDecoder;
import dev.llmsidecar.wire.JsonWireFormat;
import dev.llmsidecar.wire.SseDecoder;
import dev.llmsidecar.wire.StreamDecoder;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.UpstreamResponse;
import dev.llmsidecar.wire.Usage;

/**
 * Anthropic Messages ({@code POST /v1/messages}). Tokens are {@code content_block_delta} events with text
 * ({@code text_delta}, {@code input_json_delta}: answer; {@code thinking_delta}: reasoning). Input and cache
 * usage come with {@code message_start}, output tokens (cumulative) with {@code message_delta}. Input tokens are
 * reported OpenAI-style: {@code input_tokens + cache_read_input_tokens + cache_creation_input_tokens}, of which
 * {@code cache_read_input_tokens} are cached.
 */
public final class AnthropicMessagesFormat extends JsonWireFormat {

    public AnthropicMessagesFormat(JsonFactory json) {
        this(json, ConversationShape.NONE);
    }

    /** @param conversations MESSAGES with sidecar.conversations on (the top-level system is not read) */
    public AnthropicMessagesFormat(JsonFactory json, ConversationShape conversations) {
        super("anthropic_messages", json, false, conversations);
    }

    @Override
    public String providerName() {
        return "anthropic";
    }

    @Override
    protected StreamDecoder streamDecoder(TokenEventSink sink, UpstreamResponse response) {
        return new SseDecoder(sink, new Events(sink), response.maxHeldEventBytes(), responseModel());
    }

    @Override
    protected JsonBodyDecoder.BodyHandler bodyHandler(TokenEventSink sink, UpstreamResponse response) {
        return reading(bytes -> AnthropicEvent.parse(json, bytes, 0, bytes.length), m -> {
            if ("error".equals(m.type())) {
                sink.onStreamError();
                return;
            }
            UsageState usage = new UsageState();
            usage.add(m.usage());
            if (usage.known()) {
                sink.onUsage(usage.toUsage());
            }
            String finish = m.toolUse() && m.stopReason() == null ? FinishReason.TOOL_CALLS
                    : FinishReason.anthropic(m.stopReason());
            if (finish != null) {
                sink.onFinishReason(finish);
            }
        });
    }

    /** Usage is spread over message_start and message_delta; later values win per member. */
    private static final class UsageState {
        long input = -1;
        long output = -1;
        long cacheRead = -1;
        long cacheCreation = -1;

        void add(AnthropicEvent.Counts c) {
            if (c == null) {
                return;
            }
            input = c.input() >= 0 ? c.input() : input;
            output = c.output() >= 0 ? c.output() : output;
            cacheRead = c.cacheRead() >= 0 ? c.cacheRead() : cacheRead;
            cacheCreation = c.cacheCreation() >= 0 ? c.cacheCreation() : cacheCreation;
        }

        boolean known() {
            return input >= 0 || output >= 0;
        }

        Usage toUsage() {
            long prompt = input < 0 ? -1 : input + Math.max(0, cacheRead) + Math.max(0, cacheCreation);
            return new Usage(prompt, output, cacheRead);
        }

        Usage promptOnly() {
            return new Usage(toUsage().promptTokens(), -1, cacheRead);
        }
    }

    /** The streaming side: one instance per response. */
    private final class Events implements SseDecoder.EventHandler {
        private final TokenEventSink sink;
        private final UsageState usage = new UsageState();

        Events(TokenEventSink sink) {
            this.sink = sink;
        }

        @Override
        public boolean onEvent(byte[] data, int length, String eventType, long nanos) {
            AnthropicEvent e = AnthropicEvent.parse(json, data, 0, length);
            if (e == null) {
                return false;
            }
            String type = e.type() != null ? e.type() : eventType;
            if (type == null) {
                return false;
            }
            switch (type) {
                case "ping" -> {
                }
                case "error" -> sink.onStreamError();
                case "message_start" -> {
                    sink.onDataChunk(nanos);
                    usage.add(e.usage());
                    // message_start's output_tokens is a placeholder; the count comes with message_delta
                    sink.onUsage(usage.promptOnly());
                }
                case "message_delta" -> {
                    usage.add(e.usage());
                    if (usage.known()) {
                        sink.onUsage(usage.toUsage());
                    }
                    String finish = FinishReason.anthropic(e.stopReason());
                    if (finish != null) {
                        sink.onFinishReason(finish);
                    }
                }
                case "content_block_delta" -> {
                    sink.onDataChunk(nanos);
                    if (e.answerDelta() || e.thinkingDelta()) {
                        sink.onTokenChunk(nanos, !e.answerDelta(), -1);
                    }
                }
                case "content_block_start" -> sink.onDataChunk(nanos);
                case "message_stop" -> sink.onTerminator();
                default -> {
                    // content_block_stop and future event types carry no tokens
                }
            }
            return true;
        }
    }
}
