package dev.llmsidecar.export;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Meters registered on first use and then found by name and tag values with one map lookup, so that recording
 * on the event loop never goes through the registry's own (locking) registration path.
 */
final class MeterCache {

    private final MeterRegistry registry;
    private final Map<String, Object> meters = new ConcurrentHashMap<>();

    MeterCache(MeterRegistry registry) {
        this.registry = registry;
    }

    /** @param tags tag names and values, alternating */
    Counter counter(String name, String description, String... tags) {
        return get(name, tags, t -> Counter.builder(name).description(description).tags(t).register(registry));
    }

    /** Any meter type: {@code create} builds and registers it from the tags on first use. */
    @SuppressWarnings("unchecked")
    <M> M get(String name, String[] tags, Function<Tags, M> create) {
        String key = name + '\0' + String.join("\0", tags);
        return (M) meters.computeIfAbsent(key, k -> create.apply(Tags.of(tags)));
    }
}
