package dev.llmsidecar.includeusage;

import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.rewrite.ExchangeRewrite;
import dev.llmsidecar.rewrite.RewriteRequest;
import dev.llmsidecar.rewrite.Rewriter;
import dev.llmsidecar.wire.openai.OpenAiRequest;
import dev.llmsidecar.wire.openai.UsageMode;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jboss.logging.Logger;

/**
 * include_usage, as one rewriting feature behind the transport's hook: where a streaming OpenAI chat or completions
 * request did not ask for usage, the sidecar may turn {@code stream_options.include_usage} on to get exact token
 * counts, and removes every trace of it again before the client sees a byte, so the client gets exactly what it would
 * have got directly (docs/metrics.md#include_usage-injection). Its policy learns per model what each engine's streams
 * look like ({@link IncludeUsagePolicy}); each exchange it applies to gets a {@link UsageRewrite}. What it does is
 * counted through the seam ({@link UsageEvent}), as the proxy's own events are.
 */
public final class IncludeUsage implements Rewriter {

    private static final Logger LOG = Logger.getLogger(IncludeUsage.class);
    /** A model name in a log line is cut to this (it comes from a client). */
    private static final int MAX_LOGGED_MODEL_CHARS = 64;

    final IncludeUsagePolicy policy;
    final TrafficObserver traffic;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /** @param enabled sidecar.llm.inject-include-usage */
    public IncludeUsage(boolean enabled, TrafficObserver traffic) {
        this.policy = new IncludeUsagePolicy(enabled);
        this.traffic = traffic;
    }

    @Override
    public ExchangeRewrite start(RewriteRequest request) {
        if (!(request.inspected() instanceof OpenAiRequest openAi)) {
            return ExchangeRewrite.NONE; // the one API with include_usage
        }
        // the model as named (not its label: models folded into "other" may sit behind different servers)
        String key = request.operation().label() + '\n' + (openAi.model() == null ? "" : openAi.model());
        boolean acceptsCompression = acceptsCompression(request.headers().get("accept-encoding"));
        IncludeUsagePolicy.Decision decision = policy.decide(key, openAi.usage(), acceptsCompression,
                request.http10());
        if (decision.skip() != null) {
            traffic.count(decision.skip().event);
        }
        if (decision.handling() == UsageMode.PASS) {
            return ExchangeRewrite.NONE;
        }
        return new UsageRewrite(this, key, openAi, decision, acceptsCompression);
    }

    /** Logs {@code message} at WARN the first time {@code kind} happens; later ones are counted, not logged. */
    void warnOnce(String kind, String message) {
        if (warned.add(kind)) {
            LOG.warn(message);
        }
    }

    static String loggable(String model) {
        return model == null ? "(none)" : model.length() <= MAX_LOGGED_MODEL_CHARS ? model
                : model.substring(0, MAX_LOGGED_MODEL_CHARS) + "…";
    }

    /**
     * True when an Accept-Encoding allows any content coding other than identity: an element whose coding is not
     * empty or {@code identity} and whose {@code q} is not 0. Read in place (once per request: no split strings).
     */
    static boolean acceptsCompression(String acceptEncoding) {
        if (acceptEncoding == null) {
            return false;
        }
        int n = acceptEncoding.length();
        int at = 0;
        while (at <= n) {
            int end = acceptEncoding.indexOf(',', at);
            if (end < 0) {
                end = n;
            }
            int semicolon = acceptEncoding.indexOf(';', at);
            int codingEnd = semicolon >= 0 && semicolon < end ? semicolon : end;
            int from = skipSpace(acceptEncoding, at, codingEnd);
            int to = trimEnd(acceptEncoding, from, codingEnd);
            boolean identity = to - from == 8 && acceptEncoding.regionMatches(true, from, "identity", 0, 8);
            if (to > from && !identity && !refused(acceptEncoding, codingEnd, end)) {
                return true;
            }
            at = end + 1;
        }
        return false;
    }

    /** Whether the parameters in {@code [from, to)} (each after a ';') give a q of 0 (the last q given counts). */
    private static boolean refused(String s, int from, int to) {
        boolean refused = false;
        int at = from;
        while (at < to) {
            int next = s.indexOf(';', at + 1);
            int end = next < 0 || next > to ? to : next;
            int p = skipSpace(s, at + 1, end);
            if (end - p >= 2 && (s.charAt(p) == 'q' || s.charAt(p) == 'Q') && s.charAt(p + 1) == '=') {
                int v = skipSpace(s, p + 2, end);
                int ve = trimEnd(s, v, end);
                try {
                    refused = Double.parseDouble(s.substring(v, ve)) <= 0;
                } catch (NumberFormatException e) {
                    refused = false; // an unreadable q refuses nothing
                }
            }
            at = end;
        }
        return refused;
    }

    private static int skipSpace(String s, int from, int to) {
        while (from < to && Character.isWhitespace(s.charAt(from))) {
            from++;
        }
        return from;
    }

    private static int trimEnd(String s, int from, int to) {
        while (to > from && Character.isWhitespace(s.charAt(to - 1))) {
            to--;
        }
        return to;
    }
}
