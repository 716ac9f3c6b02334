package dev.llmsidecar.metrics;

import dev.llmsidecar.metrics.Recorder.Bound;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

/** A series and label values, compared by content: the key of a recorder's handles (no string built per lookup). */
public final class BoundKey {

    private final Series series;
    private final Object[] values;
    private final int hash;

    BoundKey(Series series, Object[] values) {
        this.series = series;
        this.values = values;
        this.hash = 31 * System.identityHashCode(series) + Arrays.hashCode(values);
    }

    /** A key that owns its values, to store (a caller may reuse the array it passed). */
    BoundKey owned() {
        return new BoundKey(series, values.clone());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof BoundKey k && hash == k.hash && series == k.series && Arrays.equals(values, k.values);
    }

    @Override
    public int hashCode() {
        return hash;
    }

    /**
     * A recorder's handles, bound once per series and label values: found again with one map lookup, so recording
     * on the event loop never goes through a registry's own (locking) registration path.
     */
    public static final class Handles {
        private final Map<BoundKey, Bound> bound = new ConcurrentHashMap<>();

        public Bound get(Series series, Object[] values, BiFunction<Series, Object[], Bound> create) {
            Bound b = bound.get(new BoundKey(series, values));
            if (b == null) {
                BoundKey owned = new BoundKey(series, values.clone());
                b = bound.computeIfAbsent(owned, k -> create.apply(series, owned.values));
            }
            return b;
        }
    }
}
