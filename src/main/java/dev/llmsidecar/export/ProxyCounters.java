package dev.llmsidecar.export;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy.UsageKept;
import dev.llmsidecar.wire.openai.IncludeUsagePolicy.UsageSkip;
import java.util.EnumMap;
import java.util.Map;

/**
 * What the proxy did to keep traffic flowing and bytes exact, counted: include_usage injected, skipped and removed,
 * requests retried on a fresh upstream connection, idle connections retired, bodies over the cap, connection resets,
 * responses it could not decode. Every label value is known in advance, so every series is exported at 0 from the
 * start (a dashboard shows 0, not "No data"). Specified in docs/metrics.md.
 */
public final class ProxyCounters {

    public enum Peer {
        CLIENT("client"), UPSTREAM("upstream");

        public final String label;

        Peer(String label) {
            this.label = label;
        }
    }

    private final Counter usageInjected;
    private final Map<UsageSkip, Counter> usageSkipped;
    private final Map<UsageKept, Counter> usageKept;
    private final Counter usageChunksRemoved;
    private final Counter usageMembersRemoved;
    private final Counter retriedClosedBeforeResponse;
    private final Counter idleConnectionsRetired;
    private final Counter bodyTooLargeDeclared;
    private final Counter bodyTooLargeStreamed;
    private final Map<Peer, Counter> resets;
    private final Counter notDecodedEncoding;
    private final Counter lengthFramedReframed;

    public ProxyCounters(MeterRegistry registry) {
        usageInjected = Counter.builder("llm_sidecar.usage_injected")
                .description("Streaming requests where the sidecar turned stream_options.include_usage on")
                .register(registry);
        usageSkipped = perValue(registry, UsageSkip.class, "llm_sidecar.usage_injection_skipped",
                "Streaming requests without include_usage that the sidecar left as they were, by reason",
                "reason", s -> s.label);
        usageKept = perValue(registry, UsageKept.class, "llm_sidecar.usage_not_removed",
                "Injected streams whose usage could not be removed exactly, by reason", "reason", k -> k.label);
        usageChunksRemoved = Counter.builder("llm_sidecar.usage_chunks_stripped")
                .description("Injected usage-only chunks removed from the client stream").register(registry);
        usageMembersRemoved = Counter.builder("llm_sidecar.usage_members_removed")
                .description("Usage members removed from chunks that reached the client (e.g. \"usage\":null)")
                .register(registry);
        lengthFramedReframed = Counter.builder("llm_sidecar.usage_reframed")
                .description("Content-Length-framed injected streams sent to the client chunked after removal")
                .register(registry);
        retriedClosedBeforeResponse = Counter.builder("llm_sidecar.upstream_retries")
                .description("Requests sent again on a new upstream connection, by reason")
                .tag("reason", "closed_before_response").register(registry);
        idleConnectionsRetired = Counter.builder("llm_sidecar.upstream_idle_connections_retired")
                .description("Pooled upstream connections closed when taken, idle for the keep-alive timeout or longer")
                .register(registry);
        bodyTooLargeDeclared = Counter.builder("llm_sidecar.request_body_too_large")
                .description("Requests refused with 413: body over sidecar.proxy.max-request-body-bytes")
                .tag("when", "declared").register(registry);
        bodyTooLargeStreamed = Counter.builder("llm_sidecar.request_body_too_large")
                .description("Requests refused with 413: body over sidecar.proxy.max-request-body-bytes")
                .tag("when", "streamed").register(registry);
        resets = perValue(registry, Peer.class, "llm_sidecar.connection_errors",
                "Connections that failed (reset, broken pipe) outside an exchange's own handling", "peer", p -> p.label);
        notDecodedEncoding = Counter.builder("llm_sidecar.responses_not_decoded")
                .description("Successful LLM responses forwarded without decoding, by reason")
                .tag("reason", "content_encoding").register(registry);
    }

    /** One counter per value of a label, all registered now (at 0). */
    private static <E extends Enum<E>> Map<E, Counter> perValue(MeterRegistry registry, Class<E> values, String name,
            String description, String tag, java.util.function.Function<E, String> label) {
        Map<E, Counter> counters = new EnumMap<>(values);
        for (E value : values.getEnumConstants()) {
            counters.put(value, Counter.builder(name).description(description).tag(tag, label.apply(value))
                    .register(registry));
        }
        return counters;
    }

    public void usageInjected() {
        usageInjected.increment();
    }

    public void usageSkipped(UsageSkip reason) {
        usageSkipped.get(reason).increment();
    }

    public void usageNotRemoved(UsageKept reason) {
        usageKept.get(reason).increment();
    }

    public void usageRemoved(int chunks, int members) {
        if (chunks > 0) {
            usageChunksRemoved.increment(chunks);
        }
        if (members > 0) {
            usageMembersRemoved.increment(members);
        }
    }

    public void usageReframed() {
        lengthFramedReframed.increment();
    }

    public void retriedClosedBeforeResponse() {
        retriedClosedBeforeResponse.increment();
    }

    public void idleConnectionRetired() {
        idleConnectionsRetired.increment();
    }

    public void bodyTooLarge(boolean declared) {
        (declared ? bodyTooLargeDeclared : bodyTooLargeStreamed).increment();
    }

    public void connectionError(Peer peer) {
        resets.get(peer).increment();
    }

    public void notDecodedForEncoding() {
        notDecodedEncoding.increment();
    }
}
