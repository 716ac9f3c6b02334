package dev.llmsidecar.measure;

import static dev.llmsidecar.metrics.Contract.BODY_TOO_LARGE;
import static dev.llmsidecar.metrics.Contract.CONNECTION_ERRORS;
import static dev.llmsidecar.metrics.Contract.IDLE_CONNECTIONS_RETIRED;
import static dev.llmsidecar.metrics.Contract.NOT_DECODED;
import static dev.llmsidecar.metrics.Contract.UPSTREAM_RETRIES;
import static dev.llmsidecar.metrics.Contract.USAGE_CHUNKS_STRIPPED;
import static dev.llmsidecar.metrics.Contract.USAGE_INJECTED;
import static dev.llmsidecar.metrics.Contract.USAGE_MEMBERS_REMOVED;
import static dev.llmsidecar.metrics.Contract.USAGE_NOT_REMOVED;
import static dev.llmsidecar.metrics.Contract.USAGE_REFRAMED;
import static dev.llmsidecar.metrics.Contract.USAGE_SKIPPED;
import static dev.llmsidecar.metrics.Label.PEER;
import static dev.llmsidecar.metrics.Label.REASON;
import static dev.llmsidecar.metrics.Label.WHEN;

import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import dev.llmsidecar.observe.Peer;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy.Resend;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy.UsageKept;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy.UsageSkip;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Function;

/**
 * What the proxy did to keep traffic flowing and bytes exact, counted: include_usage injected, skipped and removed,
 * requests retried on a fresh upstream connection, idle connections retired, bodies over the cap, connection resets,
 * responses it could not decode. Every label value is known in advance, so every series is exported at 0 from the
 * start (a dashboard shows 0, not "No data"). Declared in the metrics contract (docs/metrics.md).
 */
public final class ProxyCounters {


    private final Bound usageInjected;
    private final Map<UsageSkip, Bound> usageSkipped;
    private final Map<UsageKept, Bound> usageKept;
    private final Bound usageChunksRemoved;
    private final Bound usageMembersRemoved;
    private final Bound usageReframed;
    private final Bound retriedClosedBeforeResponse;
    private final Map<Resend, Bound> retriedWithoutInjection;
    private final Bound idleConnectionsRetired;
    private final Bound bodyTooLargeDeclared;
    private final Bound bodyTooLargeStreamed;
    private final Map<Peer, Bound> connectionErrors;
    private final Bound notDecodedEncoding;

    public ProxyCounters(Recorders recorders) {
        usageInjected = start(recorders, USAGE_INJECTED, LabelValues.NONE);
        usageSkipped = perValue(recorders, UsageSkip.class, USAGE_SKIPPED, REASON, s -> s.label);
        usageKept = perValue(recorders, UsageKept.class, USAGE_NOT_REMOVED, REASON, k -> k.label);
        usageChunksRemoved = start(recorders, USAGE_CHUNKS_STRIPPED, LabelValues.NONE);
        usageMembersRemoved = start(recorders, USAGE_MEMBERS_REMOVED, LabelValues.NONE);
        usageReframed = start(recorders, USAGE_REFRAMED, LabelValues.NONE);
        retriedClosedBeforeResponse = start(recorders, UPSTREAM_RETRIES,
                LabelValues.of(REASON, "closed_before_response"));
        retriedWithoutInjection = perValue(recorders, Resend.class, UPSTREAM_RETRIES, REASON, r -> r.label);
        idleConnectionsRetired = start(recorders, IDLE_CONNECTIONS_RETIRED, LabelValues.NONE);
        bodyTooLargeDeclared = start(recorders, BODY_TOO_LARGE, LabelValues.of(WHEN, "declared"));
        bodyTooLargeStreamed = start(recorders, BODY_TOO_LARGE, LabelValues.of(WHEN, "streamed"));
        connectionErrors = perValue(recorders, Peer.class, CONNECTION_ERRORS, PEER, p -> p.label);
        notDecodedEncoding = start(recorders, NOT_DECODED, LabelValues.of(REASON, "content_encoding"));
    }

    /** A counter bound once and exported at 0 from the start. */
    private static Bound start(Recorders recorders, Series series, LabelValues values) {
        Bound counter = recorders.bound(series, values);
        counter.record(0);
        return counter;
    }

    /** One counter per value of a label, all exported at 0 now. */
    private static <E extends Enum<E>> Map<E, Bound> perValue(Recorders recorders, Class<E> values, Series series,
            Label label, Function<E, String> value) {
        Map<E, Bound> counters = new EnumMap<>(values);
        for (E v : values.getEnumConstants()) {
            counters.put(v, start(recorders, series, LabelValues.of(label, value.apply(v))));
        }
        return counters;
    }


    public void usageInjected() {
        usageInjected.record(1);
    }

    public void usageSkipped(UsageSkip reason) {
        usageSkipped.get(reason).record(1);
    }

    public void usageNotRemoved(UsageKept reason) {
        usageKept.get(reason).record(1);
    }

    public void usageRemoved(int chunks, int members) {
        if (chunks > 0) {
            usageChunksRemoved.record(chunks);
        }
        if (members > 0) {
            usageMembersRemoved.record(members);
        }
    }

    public void usageReframed() {
        usageReframed.record(1);
    }

    public void retriedClosedBeforeResponse() {
        retriedClosedBeforeResponse.record(1);
    }

    /** The client's own request sent in place of one whose include_usage answer came compressed. */
    public void retriedWithoutInjection(Resend why) {
        retriedWithoutInjection.get(why).record(1);
    }

    public void idleConnectionRetired() {
        idleConnectionsRetired.record(1);
    }

    public void bodyTooLarge(boolean declared) {
        (declared ? bodyTooLargeDeclared : bodyTooLargeStreamed).record(1);
    }

    public void connectionError(Peer peer) {
        connectionErrors.get(peer).record(1);
    }

    public void notDecodedForEncoding() {
        notDecodedEncoding.record(1);
    }
}
