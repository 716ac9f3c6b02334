package dev.llmsidecar.measure;

import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.observe.ProxyEvent;
import dev.llmsidecar.observe.TrafficEvent;
import java.util.Arrays;
import java.util.function.Function;

/**
 * What the proxy and the features did to keep traffic flowing and bytes exact ({@link TrafficEvent}), counted: each
 * event bound once to its series ({@link EventSeries}) and exported at 0 from the start (a dashboard shows 0, not "No
 * data"). The proxy's events ({@link ProxyEvent}) are bound here; a feature's enum where the app registers it
 * ({@link #register}), before traffic. Counting an event is an array read by its ordinal: nothing allocated.
 */
public final class ProxyCounters {

    /** A feature's enum and the counter of each of its constants, by ordinal. */
    private record Family(Class<?> type, Bound[] counters) {
    }

    private final Recorders recorders;
    /** The proxy's events' counters, by ordinal. */
    private final Bound[] proxy;
    /** The registered features' (replaced whole by {@link #register}; read by every event loop). */
    private volatile Family[] features = new Family[0];

    public ProxyCounters(Recorders recorders) {
        this.recorders = recorders;
        this.proxy = bind(ProxyEvent.class, EventSeries::of);
    }

    /**
     * Binds every constant of a feature's event enum, by {@code series} (a switch without a default branch, so that a
     * constant without its series does not compile), and exports each at 0. Called once per enum where the app is
     * wired, before the feature counts.
     */
    public synchronized <E extends Enum<E> & TrafficEvent> void register(Class<E> type,
            Function<E, EventSeries> series) {
        if (ProxyEvent.class.equals(type) || family(type) != null) {
            throw new IllegalStateException(type.getName() + " is registered already");
        }
        Family[] more = Arrays.copyOf(features, features.length + 1);
        more[features.length] = new Family(type, bind(type, series));
        features = more;
    }

    private <E extends Enum<E>> Bound[] bind(Class<E> type, Function<E, EventSeries> series) {
        E[] events = type.getEnumConstants();
        Bound[] counters = new Bound[events.length];
        for (E event : events) {
            EventSeries s = series.apply(event);
            Bound counter = recorders.bound(s.series(), s.values());
            counter.record(0);
            counters[event.ordinal()] = counter;
        }
        return counters;
    }

    public void count(TrafficEvent event, long n) {
        if (event instanceof ProxyEvent p) {
            proxy[p.ordinal()].record(n);
            return;
        }
        Enum<?> e = (Enum<?>) event; // events are enum constants (TrafficEvent)
        Family f = family(e.getDeclaringClass());
        if (f == null) {
            throw new IllegalStateException(e.getDeclaringClass().getName() + " counted but never registered");
        }
        f.counters[e.ordinal()].record(n);
    }

    private Family family(Class<?> type) {
        for (Family f : features) {
            if (f.type == type) {
                return f;
            }
        }
        return null;
    }
}
