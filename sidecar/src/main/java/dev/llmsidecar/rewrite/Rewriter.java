package dev.llmsidecar.rewrite;

import java.util.ArrayList;
import java.util.List;

/**
 * One request and response rewriting feature, behind the transport's one hook (like vertx-http-proxy's
 * ProxyInterceptor): given an inspected LLM request, the rewrite of that exchange, or {@link ExchangeRewrite#NONE}.
 * Called from every event loop. The transport knows no feature; a feature knows no socket. Registered by the
 * composition root.
 */
public interface Rewriter {

    /** No rewriting at all. */
    Rewriter NONE = request -> ExchangeRewrite.NONE;

    ExchangeRewrite start(RewriteRequest request);

    /**
     * Several features, each given the request in turn; an exchange gets the rewrites that apply to it, in order
     * (the body passes through each, the first decoder offered is taken, a resend asked by any undoes them all).
     */
    static Rewriter of(List<Rewriter> features) {
        if (features.isEmpty()) {
            return NONE;
        }
        if (features.size() == 1) {
            return features.get(0);
        }
        List<Rewriter> all = List.copyOf(features);
        return request -> {
            List<ExchangeRewrite> applied = new ArrayList<>(all.size());
            for (Rewriter r : all) {
                ExchangeRewrite rewrite = r.start(request);
                if (rewrite != ExchangeRewrite.NONE) {
                    applied.add(rewrite);
                }
            }
            return applied.isEmpty() ? ExchangeRewrite.NONE
                    : applied.size() == 1 ? applied.get(0) : new ChainedRewrite(applied);
        };
    }
}
