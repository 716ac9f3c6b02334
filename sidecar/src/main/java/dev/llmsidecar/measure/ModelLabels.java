package dev.llmsidecar.measure;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds the {@code model} label. A name has a label of its own when it is pinned, when the engine lists it
 * ({@code /v1/models} and the other listings, at most {@value #MAX_LISTED} names ever), or once the engine answered a
 * request naming it with 2xx (the first {@code max} such names: {@link #admit}); any other name is {@value #OTHER}.
 * Model names come from request bodies: without a cap any client could create unbounded series, and a name that only
 * earns a slot from the engine's answer cannot be taken by names the engine rejects (50 such names used to take every
 * slot, and a real model then counted as other). The cost: a model the engine does not list counts as other until its
 * first 2xx answer has ended. The one model the engine serves names the requests that name none.
 */
public final class ModelLabels {

    public static final String OTHER = "other";
    public static final String UNKNOWN = "unknown";
    private static final int MAX_LENGTH = 128;
    /** Names the engine listed that keep a label of their own, whatever the cap (an engine's listing is short). */
    static final int MAX_LISTED = 16;

    private final Set<String> pinned;
    private final Set<String> admitted = ConcurrentHashMap.newKeySet();
    private final AtomicInteger admittedCount = new AtomicInteger();
    private final int max;
    private final Set<String> listed = ConcurrentHashMap.newKeySet();
    private volatile String serving;

    public ModelLabels(int max, Collection<String> pinned) {
        this.max = max;
        this.pinned = Set.copyOf(pinned);
    }

    /** The label value for a request's model (null or blank: "unknown"). Takes no slot. */
    public String label(String model) {
        if (model == null || model.isBlank()) {
            return UNKNOWN;
        }
        if (model.length() > MAX_LENGTH) {
            return OTHER;
        }
        return pinned.contains(model) || listed.contains(model) || admitted.contains(model) ? model : OTHER;
    }

    /** The engine answered a request naming {@code model} with 2xx: a label of its own while slots remain. */
    public void admit(String model) {
        if (model == null || model.isBlank() || model.length() > MAX_LENGTH || pinned.contains(model)
                || listed.contains(model) || admitted.contains(model)) {
            return;
        }
        // reserve a slot first so concurrent callers can never admit more than max names
        if (admittedCount.incrementAndGet() > max || !admitted.add(model)) {
            admittedCount.decrementAndGet();
        }
    }

    /**
     * What the engine's listing names now (empty when it names none or cannot be read): each a label of its own (at
     * most {@value #MAX_LISTED} names ever: an engine changes its models when it restarts, not per request), and the
     * one served model, when it lists exactly one, names the requests that name none.
     */
    public synchronized void listed(List<String> names) {
        for (String name : names) {
            if (name != null && !name.isBlank() && name.length() <= MAX_LENGTH && listed.size() < MAX_LISTED) {
                listed.add(name);
            }
        }
        serving = names.size() == 1 ? names.get(0) : null;
    }

    /** The model a request that names none is for: the engine's one served model, or null. */
    public String serving() {
        return serving;
    }
}
