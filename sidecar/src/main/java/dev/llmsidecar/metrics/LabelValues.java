package dev.llmsidecar.metrics;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The label values of one series, each given by the label it fills: {@code LabelValues.of(MODEL, m).and(OPERATION,
 * op)}. {@link Recorders} puts them into the series' declared order and refuses a set that is not exactly the
 * series' labels (one missing, one too many), so swapping two values is impossible and a wrong set fails where it is
 * bound, not as a wrong series. Immutable; a value may be null only for an OTLP-only attribute (left out there).
 */
public final class LabelValues {

    /** No labels, for a series that declares none. */
    public static final LabelValues NONE = new LabelValues(new Label[0], new Object[0]);

    private final Label[] labels;
    private final Object[] values;

    private LabelValues(Label[] labels, Object[] values) {
        this.labels = labels;
        this.values = values;
    }

    public static LabelValues of(Label label, Object value) {
        return NONE.and(label, value);
    }

    /** These values and {@code label} = {@code value}; a label given twice is refused. */
    public LabelValues and(Label label, Object value) {
        for (Label l : labels) {
            if (l == label) {
                throw new IllegalArgumentException(label + " given twice");
            }
        }
        Label[] l = Arrays.copyOf(labels, labels.length + 1);
        Object[] v = Arrays.copyOf(values, values.length + 1);
        l[labels.length] = label;
        v[values.length] = value;
        return new LabelValues(l, v);
    }

    /** These values and all of {@code more}. */
    public LabelValues and(LabelValues more) {
        LabelValues all = this;
        for (int i = 0; i < more.labels.length; i++) {
            all = all.and(more.labels[i], more.values[i]);
        }
        return all;
    }

    /**
     * The values in the order {@code series} declares its labels; refuses a set of labels that is not exactly the
     * series' own, naming what is missing and what does not belong.
     */
    Object[] inOrderOf(Series series) {
        List<Label> declared = series.labels();
        Object[] ordered = new Object[declared.size()];
        int filled = 0;
        for (int i = 0; i < labels.length; i++) {
            int at = declared.indexOf(labels[i]);
            if (at < 0) {
                throw wrongLabels(series);
            }
            ordered[at] = values[i];
            filled++;
        }
        // every given label is the series' own and none is given twice ({@link #and}): as many means all
        if (filled != declared.size()) {
            throw wrongLabels(series);
        }
        return ordered;
    }

    private IllegalArgumentException wrongLabels(Series series) {
        List<Label> declared = series.labels();
        List<Label> given = Arrays.asList(labels);
        List<Label> missing = new ArrayList<>(declared);
        missing.removeAll(given);
        List<Label> unexpected = new ArrayList<>(given);
        unexpected.removeAll(declared);
        return new IllegalArgumentException(series + " has labels " + declared + ": missing " + missing
                + ", not its own " + unexpected);
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("{");
        for (int i = 0; i < labels.length; i++) {
            s.append(i == 0 ? "" : ", ").append(labels[i]).append('=').append(values[i]);
        }
        return s.append('}').toString();
    }
}
