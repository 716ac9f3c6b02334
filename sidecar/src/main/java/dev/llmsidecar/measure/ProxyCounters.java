package dev.llmsidecar.measure;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.metrics.Series;
import dev.llmsidecar.observe.ProxyEvent;
import java.util.EnumMap;
import java.util.Map;

/**
 * What the proxy did to keep traffic flowing and bytes exact ({@link ProxyEvent}), counted: each event bound once, to
 * the series and label value it names, and exported at 0 from the start (a dashboard shows 0, not "No data"). An
 * event whose series or label is not in the contract fails here, at start.
 */
public final class ProxyCounters {

    private final Map<ProxyEvent, Bound> counters = new EnumMap<>(ProxyEvent.class);

    public ProxyCounters(Recorders recorders) {
        for (ProxyEvent event : ProxyEvent.values()) {
            Series series = Contract.named(event.series);
            LabelValues values = event.label == null ? LabelValues.NONE
                    : LabelValues.of(Label.named(event.label), event.value);
            Bound counter = recorders.bound(series, values);
            counter.record(0);
            counters.put(event, counter);
        }
    }

    public void count(ProxyEvent event, long n) {
        counters.get(event).record(n);
    }
}
