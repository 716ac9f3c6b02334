package dev.llmsidecar.rewrite;

/**
 * One request and response rewriting feature, behind the transport's one hook (like vertx-http-proxy's
 * ProxyInterceptor): given an inspected LLM request, the rewrite of that exchange, or {@link ExchangeRewrite#NONE}.
 * Called from every event loop. The transport knows no feature; a feature knows no socket. Registered by the
 * composition root.
 *
 * <p>One body-editing rewriter is supported: a feature that edits the response body does so in the decoder it
 * chooses ({@link ExchangeRewrite#decoder}), the one pass over each read, and an exchange has one decoder, so a second
 * such feature could not be chained after it without being silently left out. A second one needs its edits merged
 * into that one pass first.
 */
public interface Rewriter {

    /** No rewriting at all. */
    Rewriter NONE = request -> ExchangeRewrite.NONE;

    ExchangeRewrite start(RewriteRequest request);
}
