package dev.llmsidecar.includeusage;

import dev.llmsidecar.wire.openai.UsageMode;
import dev.llmsidecar.wire.openai.UsageReport;
import dev.llmsidecar.wire.openai.UsageRequest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides, per streaming request, whether the sidecar may turn {@code stream_options.include_usage} on, so that the
 * client still gets the engine's exact bytes once the usage is removed again.
 *
 * <p>What include_usage changes differs per engine: vLLM and SGLang add one {@code "choices":[]} chunk; OpenAI adds
 * that chunk and {@code "usage":null} to every other one; some servers merge usage into the final chunk; llama.cpp
 * adds the chunk and moves its {@code timings} from the final chunk into it. Removal can restore the engine's bytes
 * only if the engine sends no usage members of its own, so the sidecar learns that first, per API and model label,
 * from a stream it did not edit: until one has completed it does not inject ({@code learning}); if the engine sends
 * usage, token counts or usage members unprompted, it never injects (nothing to gain, and nothing it could remove
 * exactly); if an injected stream shows that include_usage changed more than it adds, or that the engine frames
 * streams with Content-Length, it stops injecting for that key; likewise when the engine refused the injected request
 * (400 or 422: a server that forbids members it does not know) and then served the client's own. Compression is
 * learned the same way: a client that accepts a compressed response is injected only once the engine has been seen to
 * answer such a client uncompressed.
 * State is a few booleans per key, keys are bounded by the model-label cap; calls come from every event loop.
 */
public final class IncludeUsagePolicy {

    /** Why the sidecar did not turn include_usage on for a streaming request that did not ask for usage. */
    public enum UsageSkip {
        /** The client said {@code "include_usage": false}. */
        CLIENT_DECLINED(UsageEvent.USAGE_SKIPPED_CLIENT_DECLINED),
        /** stream_options carries other members: left as the client wrote it. */
        STREAM_OPTIONS(UsageEvent.USAGE_SKIPPED_STREAM_OPTIONS),
        /** An HTTP/1.0 client: a Content-Length-framed stream could not be re-framed for it. */
        HTTP10_CLIENT(UsageEvent.USAGE_SKIPPED_HTTP10_CLIENT),
        /** No stream of this model and API has been seen yet without injection. */
        LEARNING(UsageEvent.USAGE_SKIPPED_LEARNING),
        /** The engine sends usage or token counts (or usage members) on its own. */
        ENGINE_REPORTS_USAGE(UsageEvent.USAGE_SKIPPED_ENGINE_REPORTS_USAGE),
        /** include_usage was seen to change more than it adds (llama.cpp moves its timings to the usage chunk). */
        LAYOUT(UsageEvent.USAGE_SKIPPED_LAYOUT),
        /** The engine frames its streams with Content-Length. */
        CONTENT_LENGTH(UsageEvent.USAGE_SKIPPED_CONTENT_LENGTH),
        /** The client accepts compressed responses and the engine compresses (or may). */
        COMPRESSION(UsageEvent.USAGE_SKIPPED_COMPRESSION),
        /** The engine refused a request with stream_options (400 or 422) and served the client's own. */
        ENGINE_REJECTS(UsageEvent.USAGE_SKIPPED_ENGINE_REJECTS);

        /** What it counts as. */
        public final UsageEvent event;

        UsageSkip(UsageEvent event) {
            this.event = event;
        }
    }

    /**
     * Why usage the sidecar asked for could not be removed (the client saw it). A compressed answer is not among
     * them: the sidecar asks for identity when it injects, and sends the client's own request where an engine
     * compresses all the same, before a byte of the answer is forwarded.
     */
    public enum UsageKept {
        /** The usage chunk carried members the stream's other chunks did not (see {@link UsageSkip#LAYOUT}). */
        LAYOUT(UsageEvent.USAGE_NOT_REMOVED_LAYOUT),
        /**
         * A usage member in a chunk that stayed could not be cut exactly: its name written with escapes, or its object
         * spread over data lines with another kind of line among them.
         */
        MEMBER(UsageEvent.USAGE_NOT_REMOVED_MEMBER);

        /** What it counts as. */
        public final UsageEvent event;

        UsageKept(UsageEvent event) {
            this.event = event;
        }
    }

    /**
     * Why the client's own request was sent in place of the one with include_usage turned on, before a byte of the
     * answer was forwarded.
     */
    public enum Resend {
        /** The engine compressed the answer although asked for identity. */
        COMPRESSED(UsageEvent.RETRY_COMPRESSED_AFTER_INJECTION),
        /** The engine refused the injected request with 400 or 422. */
        REJECTED(UsageEvent.RETRY_INJECTION_REJECTED);

        /** What it counts as. */
        public final UsageEvent event;

        Resend(UsageEvent event) {
            this.event = event;
        }
    }

    /** What to do with one request. */
    public record Decision(boolean inject, UsageSkip skip, UsageMode handling) {
    }

    /**
     * What one completed 2xx stream showed.
     *
     * @param injected the sidecar had turned include_usage on
     * @param acceptedCompression the client's Accept-Encoding allowed a compressed response
     * @param compressed the response had a Content-Encoding
     * @param lengthFramed the response had a Content-Length
     * @param report what the decoder saw (an inflated copy for a compressed response)
     */
    public record Observation(boolean injected, boolean acceptedCompression, boolean compressed, boolean lengthFramed,
            UsageReport report) {
    }

    private enum Compresses { UNKNOWN, YES, NO }

    /** What is known of one API and model's streams. */
    /**
     * @param compresses whether the engine compresses a stream for a client that accepts it
     * @param compressesUnasked the engine compressed a stream for a client that did not accept it
     */
    private record Layout(boolean known, boolean reportsUsage, boolean altered, boolean lengthFramed,
            Compresses compresses, boolean compressesUnasked, boolean rejects) {
        static final Layout UNKNOWN = new Layout(false, false, false, false, Compresses.UNKNOWN, false, false);
    }

    /**
     * Layouts kept, one per API and model name (names, not labels: models folded into the label "other" may sit
     * behind different servers). A model beyond this many is never injected.
     */
    static final int MAX_LAYOUTS = 1024;

    private final boolean enabled;
    private final Map<String, Layout> layouts = new ConcurrentHashMap<>();

    /** @param enabled sidecar.llm.inject-include-usage */
    public IncludeUsagePolicy(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * @param key the API and model name of the request
     * @param usage what the request says about usage
     * @param acceptsCompression the client's Accept-Encoding allows a compressed response
     * @param http10 the client speaks HTTP/1.0 (no chunked re-framing possible)
     * @return the decision; {@code skip} is null where there is nothing to count (usage asked for, not a stream)
     */
    public Decision decide(String key, UsageRequest usage, boolean acceptsCompression, boolean http10) {
        switch (usage) {
            case NOT_APPLICABLE, ASKED:
                return new Decision(false, null, UsageMode.PASS);
            case OTHER_OPTIONS:
                return new Decision(false, UsageSkip.STREAM_OPTIONS, UsageMode.PASS);
            default:
                break;
        }
        Layout layout = layouts.getOrDefault(key, Layout.UNKNOWN);
        UsageMode unedited = needsObservation(layout, acceptsCompression) ? UsageMode.OBSERVE : UsageMode.PASS;
        if (usage == UsageRequest.DECLINED) {
            return new Decision(false, UsageSkip.CLIENT_DECLINED, unedited);
        }
        if (!enabled) {
            return new Decision(false, null, UsageMode.PASS);
        }
        UsageSkip skip = skip(layout, acceptsCompression, http10);
        return skip == null ? new Decision(true, null, UsageMode.REMOVE) : new Decision(false, skip, unedited);
    }

    private static UsageSkip skip(Layout layout, boolean acceptsCompression, boolean http10) {
        if (!layout.known) {
            return UsageSkip.LEARNING;
        }
        if (layout.reportsUsage) {
            return UsageSkip.ENGINE_REPORTS_USAGE;
        }
        if (layout.rejects) {
            return UsageSkip.ENGINE_REJECTS;
        }
        if (layout.altered) {
            return UsageSkip.LAYOUT;
        }
        if (layout.lengthFramed) {
            return UsageSkip.CONTENT_LENGTH;
        }
        if ((acceptsCompression && layout.compresses != Compresses.NO) || layout.compressesUnasked) {
            return UsageSkip.COMPRESSION;
        }
        if (http10) {
            return UsageSkip.HTTP10_CLIENT;
        }
        return null;
    }

    private static boolean needsObservation(Layout layout, boolean acceptsCompression) {
        return !layout.known || (acceptsCompression && layout.compresses == Compresses.UNKNOWN);
    }

    /**
     * Learns from a completed stream; returns why usage the sidecar asked for reached the client, or null.
     */
    public UsageKept observe(String key, Observation o) {
        UsageKept kept = o.injected() ? kept(o) : null;
        if (layouts.size() < MAX_LAYOUTS || layouts.containsKey(key)) {
            layouts.compute(key, (k, old) -> learn(old == null ? Layout.UNKNOWN : old, o));
        }
        return kept;
    }

    private static UsageKept kept(Observation o) {
        return o.report().layoutDiffers() ? UsageKept.LAYOUT : o.report().membersKept() > 0 ? UsageKept.MEMBER : null;
    }

    /**
     * The engine compressed a stream the sidecar had turned include_usage on for, although it asked for identity:
     * it compresses unasked, so the sidecar does not inject for this key again.
     */
    public void compressedDespiteIdentity(String key) {
        if (layouts.size() < MAX_LAYOUTS || layouts.containsKey(key)) {
            layouts.compute(key, (k, old) -> {
                Layout l = old == null ? Layout.UNKNOWN : old;
                return new Layout(l.known, l.reportsUsage, l.altered, l.lengthFramed, Compresses.YES, true, l.rejects);
            });
        }
    }

    /**
     * The engine refused a request the sidecar had turned include_usage on for (400 or 422), then served the client's
     * own: it forbids stream_options, so the sidecar does not inject for this key again.
     */
    public void injectionRejected(String key) {
        if (layouts.size() < MAX_LAYOUTS || layouts.containsKey(key)) {
            layouts.compute(key, (k, old) -> {
                Layout l = old == null ? Layout.UNKNOWN : old;
                return new Layout(l.known, l.reportsUsage, l.altered, l.lengthFramed, l.compresses,
                        l.compressesUnasked, true);
            });
        }
    }

    private static Layout learn(Layout l, Observation o) {
        Compresses compresses = l.compresses;
        if (o.compressed()) {
            compresses = Compresses.YES;
        } else if (o.acceptedCompression() && compresses == Compresses.UNKNOWN) {
            compresses = Compresses.NO;
        }
        boolean unasked = l.compressesUnasked || (o.compressed() && !o.acceptedCompression());
        if (o.injected()) {
            return new Layout(l.known, l.reportsUsage, l.altered || kept(o) != null,
                    l.lengthFramed || o.lengthFramed(), compresses, unasked, l.rejects);
        }
        boolean unprompted = o.report().usageMembers() || o.report().tokenCounts();
        return new Layout(true, l.reportsUsage || unprompted, l.altered, o.lengthFramed(), compresses, unasked,
                l.rejects);
    }
}
