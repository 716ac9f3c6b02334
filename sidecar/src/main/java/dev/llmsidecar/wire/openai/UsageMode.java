package dev.llmsidecar.wire.openai;

/** What a streaming decoder does about usage in the stream (OpenAI-style SSE only). */
public enum UsageMode {
    /** Nothing: the bytes pass as they are. */
    PASS,
    /** The request was not edited; note what the engine sends unprompted (usage members, token counts). */
    OBSERVE,
    /** The sidecar turned include_usage on: remove every trace of it (usage-only chunks, usage members). */
    REMOVE
}
