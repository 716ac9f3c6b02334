package dev.llmsidecar.wire;

import io.vertx.core.http.HttpMethod;

/**
 * The LLM calls the sidecar times, recognised by method and path. Label values follow OTel
 * {@code gen_ai.operation.name}.
 */
public enum LlmOperation {
    CHAT("chat", "/v1/chat/completions"),
    TEXT_COMPLETION("text_completion", "/v1/completions");

    private final String label;
    private final String path;

    LlmOperation(String label, String path) {
        this.label = label;
        this.path = path;
    }

    public String label() {
        return label;
    }

    /** Returns the operation for an LLM call, or null for traffic that is only proxied and counted. */
    public static LlmOperation match(HttpMethod method, String path) {
        if (method != HttpMethod.POST || path == null) {
            return null;
        }
        String p = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        for (LlmOperation op : values()) {
            if (op.path.equals(p)) {
                return op;
            }
        }
        return null;
    }
}
