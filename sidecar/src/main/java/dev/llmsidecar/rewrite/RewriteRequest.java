package dev.llmsidecar.rewrite;

import dev.llmsidecar.wire.InspectedRequest;
import dev.llmsidecar.wire.LlmOperation;

/**
 * An LLM request as a rewrite sees it, once its whole body has been read and inspected.
 *
 * @param operation the API called
 * @param inspected what its format read from the body (a format's own subclass where it reads more)
 * @param headers the client's request headers (read only: edits go through {@link ExchangeRewrite#requestHeaders})
 * @param http10 the client speaks HTTP/1.0 (a response cannot be re-framed chunked for it)
 */
public record RewriteRequest(LlmOperation operation, InspectedRequest inspected, Headers headers, boolean http10) {
}
