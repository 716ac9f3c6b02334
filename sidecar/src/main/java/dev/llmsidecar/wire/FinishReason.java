package dev.llmsidecar.wire;

/** Maps each format's stop reasons onto the OpenAI finish_reason vocabulary the metrics label uses. */
public final class FinishReason {

    public static final String STOP = "stop";
    public static final String LENGTH = "length";
    public static final String TOOL_CALLS = "tool_calls";
    public static final String CONTENT_FILTER = "content_filter";
    public static final String ABORT = "abort";
    public static final String ERROR = "error";

    private FinishReason() {
    }

    /** Anthropic {@code stop_reason}. */
    public static String anthropic(String reason) {
        if (reason == null) {
            return null;
        }
        return switch (reason) {
            case "end_turn", "stop_sequence" -> STOP;
            case "max_tokens", "model_context_window_exceeded" -> LENGTH;
            case "tool_use" -> TOOL_CALLS;
            case "refusal" -> CONTENT_FILTER;
            default -> reason;
        };
    }

    /** TGI {@code details.finish_reason}. */
    public static String tgi(String reason) {
        if (reason == null) {
            return null;
        }
        return switch (reason) {
            case "eos_token", "stop_sequence" -> STOP;
            case "length" -> LENGTH;
            default -> reason;
        };
    }

    /** llama.cpp {@code stop_type}. */
    public static String llamaCpp(String stopType) {
        if (stopType == null) {
            return null;
        }
        return switch (stopType) {
            case "eos", "word" -> STOP;
            case "limit" -> LENGTH;
            default -> stopType;
        };
    }
}
