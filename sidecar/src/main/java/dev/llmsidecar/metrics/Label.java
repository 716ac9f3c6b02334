package dev.llmsidecar.metrics;

/**
 * A label of the metrics contract: its Prometheus name and its OpenTelemetry attribute key. Values are bounded by
 * whoever records them (models by the model cap, everything else by a fixed set). A label with no Prometheus name
 * exists on the OTLP side only, where the semantic conventions ask for it and a Prometheus series would gain nothing
 * but width (the provider and server address are the same for every series of one sidecar).
 */
public enum Label {
    MODEL("model", "gen_ai.request.model"),
    OPERATION("operation", "gen_ai.operation.name"),
    STREAMING("streaming", "llm_sidecar.streaming", Type.BOOLEAN),
    OUTCOME("outcome", "llm_sidecar.outcome"),
    TOKEN_TYPE("token_type", "gen_ai.token.type"),
    CACHE("cache", "llm_sidecar.prefix_cache"),
    SOURCE("source", "llm_sidecar.output_tokens_source"),
    FINISH_REASON("finish_reason", "llm_sidecar.finish_reason"),
    FORMAT("format", "llm_sidecar.wire_format"),
    ROUTE("route", "llm_sidecar.route"),
    STATUS_CLASS("status_class", "llm_sidecar.status_class"),
    SLO_CLASS("slo_class", "llm_sidecar.slo_class"),
    OBJECTIVE("objective", "llm_sidecar.objective"),
    CRITERION("criterion", "llm_sidecar.slo.criterion"),
    REASON("reason", "llm_sidecar.reason"),
    /** How a declared SLO target was taken: accepted, clamped, unparseable. */
    HANDLING("handling", "llm_sidecar.slo.declared_handling"),
    WHEN("when", "llm_sidecar.when"),
    PEER("peer", "llm_sidecar.peer"),
    RESULT("result", "llm_sidecar.result"),
    ENGINE("engine", "llm_sidecar.engine"),
    METRIC("metric", "llm_sidecar.metric"),
    WINDOW("window", "llm_sidecar.window"),
    /** Who sent the request (sidecar.tenants); exported only on the series sidecar.tenants.series names. */
    TENANT("tenant", "llm_sidecar.tenant"),
    LOAD_BAND("load_band", "llm_sidecar.load_band"),
    PHASE("phase", "llm_sidecar.engine.phase"),
    GPU("gpu", "llm_sidecar.gpu"),
    /**
     * The request's scheduling priority (sidecar.priority: vLLM's {@code priority} body field, or a header), bounded
     * by an allowlist; exported only on the series sidecar.priority.series names.
     */
    PRIORITY("priority", "llm_sidecar.request.priority"),
    /** How an LLM request ended (timeline.EndReason): only on llm_sidecar.requests and the abandoned tokens. */
    END_REASON("end_reason", "llm_sidecar.end_reason"),
    /** A memory budget: heap, direct, request_bodies (llm_sidecar_memory_*_bytes). */
    BUDGET("budget", "llm_sidecar.memory.budget"),
    /** An engine-reported number capped before use (timeline.ClampedValue): prompt_tokens, tokens_per_chunk, ... */
    FIELD("field", "llm_sidecar.engine.field"),
    /** Where an open stream is: first_token or generation (timeline.StreamPhase). */
    STREAM_PHASE("stream_phase", "llm_sidecar.stream_phase"),
    /** A request's turn in its conversation, bucketed (sidecar.conversations). */
    TURN("turn", "llm_sidecar.conversation.turn"),
    /** What a conversation's request answers: the user, or a tool's result. */
    AFTER("after", "llm_sidecar.conversation.after"),
    /** Whether the request's conversation was seen before here (warm) or not (cold). */
    PREFIX("prefix", "llm_sidecar.conversation.prefix"),
    /** How a request links to the turn before it. */
    LINK("link", "llm_sidecar.conversation.link"),
    /** Where an agent's time went: in the model, or in its tools. */
    PART("part", "llm_sidecar.conversation.part"),
    // OTLP only
    PROVIDER(null, "gen_ai.provider.name"),
    ERROR_TYPE(null, "error.type"),
    SERVER_ADDRESS(null, "server.address"),
    SERVER_PORT(null, "server.port", Type.LONG);

    /** The value type of the OTLP attribute (Prometheus label values are strings). */
    public enum Type { STRING, BOOLEAN, LONG }

    private final String prometheus;
    private final String otel;
    private final Type type;

    Label(String prometheus, String otel) {
        this(prometheus, otel, Type.STRING);
    }

    Label(String prometheus, String otel, Type type) {
        this.prometheus = prometheus;
        this.otel = otel;
        this.type = type;
    }

    /** The Prometheus label name, or null for an OTLP-only attribute. */
    public String prometheus() {
        return prometheus;
    }

    public String otel() {
        return otel;
    }

    public Type type() {
        return type;
    }

    public boolean otelOnly() {
        return prometheus == null;
    }
}
