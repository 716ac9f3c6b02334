package dev.llmsidecar.wire;

/**
 * One row of the route table: an LLM call recognised by method and path, its operation label (OTel
 * {@code gen_ai.operation.name}: chat, text_completion, embeddings) and the wire format that decodes it.
 *
 * @param path the request path (POST only)
 * @param label the operation label
 * @param format the request and response wire format
 */
public record LlmOperation(String path, String label, WireFormat format) {
}
