package dev.llmsidecar.export;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Meters registered on first use and then found by name and tag values with one map lookup, so that recording
 * on the event loop never goes through the registry's own (locking) registration path.
 */
final class MeterCache {

    private final MeterRegistry registry;
    private final Map<Key, Object> meters = new ConcurrentHashMap<>();

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
        Key key = new Key(name, tags);
        Object meter = meters.get(key);
        if (meter == null) {
            // first use only: the capturing lambda and the registry's registration stay off the common path
            // the stored key owns its tag array: a caller may reuse the one it passed
            meter = meters.computeIfAbsent(new Key(name, tags.clone()), k -> create.apply(Tags.of(tags)));
        }
        return (M) meter;
    }

    /** Name and tag values, compared by content; no key string is built per lookup. */
    private static final class Key {
        private final String name;
        private final String[] tags;
        private final int hash;

        Key(String name, String[] tags) {
            this.name = name;
            this.tags = tags;
            this.hash = 31 * name.hashCode() + Arrays.hashCode(tags);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && hash == k.hash && name.equals(k.name) && Arrays.equals(tags, k.tags);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }
}
