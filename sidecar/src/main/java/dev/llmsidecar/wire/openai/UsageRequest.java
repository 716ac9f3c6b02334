package dev.llmsidecar.wire.openai;

/** What a streaming request says about usage in the stream (OpenAI {@code stream_options.include_usage}). */
public enum UsageRequest {
    /** The format has no such option, or the request does not stream. */
    NOT_APPLICABLE,
    /** No include_usage (no stream_options, {@code null}, or an empty object): the sidecar may add it. */
    ABSENT,
    /** The client asked for usage itself: it gets the usage chunk, nothing to remove. */
    ASKED,
    /** The client said {@code "include_usage": false}: never overridden. */
    DECLINED,
    /** stream_options carries other members (or is not an object): left as the client wrote it. */
    OTHER_OPTIONS
}
