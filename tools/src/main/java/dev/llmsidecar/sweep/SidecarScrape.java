package dev.llmsidecar.sweep;

import dev.llmsidecar.engine.ExpositionParser.Sample;
import dev.llmsidecar.engine.ExpositionParser;
import dev.llmsidecar.metrics.CumulativeHistogram;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * One scrape of the sidecar's metrics, read by the sidecar's own parser, with selection by name and labels. Every
 * selection sums over the label sets that match, so series split by labels the sweep does not name (tenant,
 * slo_class ...) add up.
 */
final class SidecarScrape {

    private final Map<String, List<Sample>> byName = new LinkedHashMap<>();

    private SidecarScrape(List<Sample> samples) {
        for (Sample s : samples) {
            byName.computeIfAbsent(s.name(), k -> new ArrayList<>()).add(s);
        }
    }

    /**
     * Reads an exposition. The parser skips a line it cannot read; the sweep refuses the scrape instead, naming the
     * line, since a figure summed without it would be silently wrong.
     */
    static SidecarScrape parse(String text) {
        ExpositionParser.Result read = ExpositionParser.parse(text);
        ExpositionParser.Rejected first = read.firstRejected();
        if (first != null) {
            throw new IllegalArgumentException("metrics line " + first.lineNumber() + " cannot be read: "
                    + first.line().strip() + (read.rejectedLines() > 1
                            ? " (and " + (read.rejectedLines() - 1) + " more lines)" : ""));
        }
        return new SidecarScrape(read.samples());
    }

    boolean has(String name) {
        return byName.containsKey(name);
    }

    /** Samples of {@code name} whose labels include every pair of {@code match}. */
    List<Sample> select(String name, Map<String, String> match) {
        List<Sample> out = new ArrayList<>();
        for (Sample s : byName.getOrDefault(name, List.of())) {
            if (s.labels().entrySet().containsAll(match.entrySet())) {
                out.add(s);
            }
        }
        return out;
    }

    /** Sum of the matching samples of a counter or gauge (0 when none matches). */
    double sum(String name, Map<String, String> match) {
        double total = 0;
        for (Sample s : select(name, match)) {
            total += s.value();
        }
        return total;
    }

    /** The value of an unlabelled gauge, or NaN when absent. */
    double gauge(String name) {
        List<Sample> s = byName.get(name);
        return s == null ? Double.NaN : s.get(0).value();
    }

    /** Distinct values of {@code label} on {@code name}, sorted. */
    List<String> labelValues(String name, String label) {
        TreeSet<String> values = new TreeSet<>();
        for (Sample s : byName.getOrDefault(name, List.of())) {
            String v = s.labels().get(label);
            if (v != null) {
                values.add(v);
            }
        }
        return new ArrayList<>(values);
    }

    /**
     * The histogram {@code base} ({@code base_bucket}, {@code base_count}, {@code base_sum}) merged over every label
     * set matching {@code match} ({@link CumulativeHistogram.Merge}). Empty when no series matches.
     */
    CumulativeHistogram histogram(String base, Map<String, String> match) {
        CumulativeHistogram.Merge merge = new CumulativeHistogram.Merge(base);
        for (String name : List.of(base + "_bucket", base + "_sum", base + "_count")) {
            for (Sample s : select(name, match)) {
                merge.add(s.name(), s.labels(), s.value());
            }
        }
        CumulativeHistogram merged = merge.result();
        return merged == null ? CumulativeHistogram.EMPTY : merged;
    }
}
