package dev.llmsidecar.measure;

import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds the {@code model} label: pinned names always pass, the first {@code max} other names seen pass, any
 * later name becomes {@value #OTHER}. Model names come from request bodies, so without a cap any client could
 * create unbounded series. The model the engine serves is pinned in effect (the first {@value #MAX_SERVED} such
 * names: an engine changes its model when it restarts, not per request); it names the requests that name none.
 */
public final class ModelLabels {

    public static final String OTHER = "other";
    public static final String UNKNOWN = "unknown";
    private static final int MAX_LENGTH = 128;
    static final int MAX_SERVED = 8;

    private final Set<String> pinned;
    private final Set<String> admitted = ConcurrentHashMap.newKeySet();
    private final AtomicInteger admittedCount = new AtomicInteger();
    private final int max;
    private final Set<String> served = ConcurrentHashMap.newKeySet();
    private volatile String serving;

    public ModelLabels(int max, Collection<String> pinned) {
        this.max = max;
        this.pinned = Set.copyOf(pinned);
    }

    /** The label value for a request's model (null or blank: "unknown"). */
    public String label(String model) {
        if (model == null || model.isBlank()) {
            return UNKNOWN;
        }
        if (model.length() > MAX_LENGTH) {
            return OTHER;
        }
        if (pinned.contains(model) || served.contains(model) || admitted.contains(model)) {
            return model;
        }
        // reserve a slot first so concurrent callers can never admit more than max names
        if (admittedCount.incrementAndGet() <= max) {
            if (admitted.add(model)) {
                return model;
            }
            admittedCount.decrementAndGet();
            return model;
        }
        admittedCount.decrementAndGet();
        return OTHER;
    }

    /** The one model the engine serves now, as it names it; null when it does not say or serves several. */
    public synchronized void serving(String model) {
        if (model != null && served.size() < MAX_SERVED) {
            served.add(model);
        }
        serving = model;
    }

    /** The model a request that names none is for: the engine's one served model, or null. */
    public String serving() {
        return serving;
    }
}
