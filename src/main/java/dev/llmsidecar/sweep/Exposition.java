package dev.llmsidecar.sweep;

import dev.llmsidecar.export.contract.CumulativeHistogram;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One scrape of a Prometheus text exposition (0.0.4 or OpenMetrics; exemplars and timestamps are ignored), with
 * selection by name and labels. Every selection sums over the label sets that match, so series split by labels the
 * sweep does not name (tenant, slo_class ...) add up.
 */
public final class Exposition {

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples;
    private final Map<String, List<Sample>> byName = new LinkedHashMap<>();

    private Exposition(List<Sample> samples) {
        this.samples = samples;
        for (Sample s : samples) {
            byName.computeIfAbsent(s.name(), k -> new ArrayList<>()).add(s);
        }
    }

    /** Parses an exposition; a line that cannot be read fails with its line number. */
    public static Exposition parse(String text) {
        List<Sample> samples = new ArrayList<>();
        int lineNo = 0;
        for (String line : text.split("\n")) {
            lineNo++;
            line = line.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            try {
                samples.add(parseLine(line));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("metrics line " + lineNo + " cannot be read: " + line, e);
            }
        }
        return new Exposition(samples);
    }

    private static Sample parseLine(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        String name = line.substring(0, i);
        Map<String, String> labels = new TreeMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (true) {
                while (line.charAt(i) == ' ' || line.charAt(i) == ',') {
                    i++;
                }
                if (line.charAt(i) == '}') {
                    i++;
                    break;
                }
                int eq = line.indexOf('=', i);
                String key = line.substring(i, eq).strip();
                i = eq + 1;
                if (line.charAt(i) != '"') {
                    throw new IllegalArgumentException("label value not quoted");
                }
                i++;
                StringBuilder value = new StringBuilder();
                while (line.charAt(i) != '"') {
                    char c = line.charAt(i);
                    if (c == '\\') {
                        char n = line.charAt(++i);
                        value.append(n == 'n' ? '\n' : n);
                    } else {
                        value.append(c);
                    }
                    i++;
                }
                i++;
                labels.put(key, value.toString());
            }
        }
        String rest = line.substring(i).strip();
        int exemplar = rest.indexOf('#');
        if (exemplar >= 0) {
            rest = rest.substring(0, exemplar).strip();
        }
        String[] parts = rest.split("\\s+");
        return new Sample(name, Collections.unmodifiableMap(labels), parseValue(parts[0]));
    }

    static double parseValue(String v) {
        return switch (v) {
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(v);
        };
    }

    public List<Sample> samples() {
        return Collections.unmodifiableList(samples);
    }

    public boolean has(String name) {
        return byName.containsKey(name);
    }

    /** Samples of {@code name} whose labels include every pair of {@code match}. */
    public List<Sample> select(String name, Map<String, String> match) {
        List<Sample> out = new ArrayList<>();
        for (Sample s : byName.getOrDefault(name, List.of())) {
            if (matches(s.labels(), match)) {
                out.add(s);
            }
        }
        return out;
    }

    /** Sum of the matching samples of a counter or gauge (0 when none matches). */
    public double sum(String name, Map<String, String> match) {
        double total = 0;
        for (Sample s : select(name, match)) {
            total += s.value();
        }
        return total;
    }

    /** The value of an unlabelled gauge, or NaN when absent. */
    public double gauge(String name) {
        List<Sample> s = byName.get(name);
        return s == null || s.isEmpty() ? Double.NaN : s.get(0).value();
    }

    /** Distinct values of {@code label} on {@code name}. */
    public List<String> labelValues(String name, String label) {
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
    public CumulativeHistogram histogram(String base, Map<String, String> match) {
        CumulativeHistogram.Merge merge = new CumulativeHistogram.Merge(base);
        for (String name : List.of(base + "_bucket", base + "_sum", base + "_count")) {
            for (Sample s : select(name, match)) {
                merge.add(s.name(), s.labels(), s.value());
            }
        }
        CumulativeHistogram merged = merge.result();
        return merged == null ? CumulativeHistogram.EMPTY : merged;
    }

    private static boolean matches(Map<String, String> labels, Map<String, String> match) {
        for (Map.Entry<String, String> e : match.entrySet()) {
            if (!e.getValue().equals(labels.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }
}
