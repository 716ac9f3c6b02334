package dev.llmsidecar.support;

import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.DataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A parsed Prometheus text exposition, for asserting series by name and labels. */
public final class Scrape {

    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples = new ArrayList<>();
    private final String text;

    public Scrape(String text) {
        this.text = text;
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int exemplar = line.indexOf(" # {");
            if (exemplar > 0) {
                line = line.substring(0, exemplar); // OpenMetrics exemplar: not part of the sample
            }
            int brace = line.indexOf('{');
            int space = line.lastIndexOf(' ');
            String name;
            Map<String, String> labels = new LinkedHashMap<>();
            if (brace >= 0 && brace < space) {
                name = line.substring(0, brace);
                String body = line.substring(brace + 1, line.lastIndexOf('}'));
                if (body.endsWith(",")) {
                    body = body.substring(0, body.length() - 1); // simpleclient writes a trailing comma
                }
                for (String pair : body.split(",(?=[a-zA-Z_]+=\")")) {
                    int eq = pair.indexOf('=');
                    if (eq > 0) {
                        labels.put(pair.substring(0, eq), pair.substring(eq + 2, pair.length() - 1));
                    }
                }
            } else {
                name = line.substring(0, space);
            }
            samples.add(new Sample(name, labels, Double.parseDouble(line.substring(space + 1))));
        }
    }

    /** The registry as Prometheus scrapes it (text format 0.0.4). */
    public static Scrape of(PrometheusRegistry registry) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try {
            PrometheusTextFormatWriter.create().write(out, registry.scrape());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return new Scrape(out.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    /**
     * The sum of the counter or gauge points of one family (client_java's name: a counter without {@code _total}) whose
     * labels include {@code labelPairs}, read off the registry without rendering the rest: what a test that asks after
     * every request can afford.
     */
    public static double value(PrometheusRegistry registry, String family, String... labelPairs) {
        double total = 0;
        for (MetricSnapshot snapshot : registry.scrape(family::equals)) {
            for (DataPointSnapshot point : snapshot.getDataPoints()) {
                Map<String, String> labels = new LinkedHashMap<>();
                point.getLabels().forEach(l -> labels.put(l.getName(), l.getValue()));
                if (!matches(labels, labelPairs)) {
                    continue;
                }
                if (point instanceof CounterSnapshot.CounterDataPointSnapshot c) {
                    total += c.getValue();
                } else if (point instanceof GaugeSnapshot.GaugeDataPointSnapshot g) {
                    total += g.getValue();
                } else {
                    throw new IllegalArgumentException(family + " is neither a counter nor a gauge");
                }
            }
        }
        return total;
    }

    /** Whether the family has a point whose labels include {@code labelPairs}. */
    public static boolean has(PrometheusRegistry registry, String family, String... labelPairs) {
        for (MetricSnapshot snapshot : registry.scrape(family::equals)) {
            for (DataPointSnapshot point : snapshot.getDataPoints()) {
                Map<String, String> labels = new LinkedHashMap<>();
                point.getLabels().forEach(l -> labels.put(l.getName(), l.getValue()));
                if (matches(labels, labelPairs)) {
                    return true;
                }
            }
        }
        return false;
    }

    public String text() {
        return text;
    }

    /** Sum of every sample of {@code name} whose labels include all of {@code labelPairs} (k1, v1, k2, v2 ...). */
    public double sum(String name, String... labelPairs) {
        double total = 0;
        for (Sample s : samples) {
            if (s.name().equals(name) && matches(s.labels(), labelPairs)) {
                total += s.value();
            }
        }
        return total;
    }

    public boolean has(String name, String... labelPairs) {
        return samples.stream().anyMatch(s -> s.name().equals(name) && matches(s.labels(), labelPairs));
    }

    public List<Sample> samples(String name) {
        return samples.stream().filter(s -> s.name().equals(name)).toList();
    }

    private static boolean matches(Map<String, String> labels, String... pairs) {
        for (int i = 0; i < pairs.length; i += 2) {
            if (!pairs[i + 1].equals(labels.get(pairs[i]))) {
                return false;
            }
        }
        return true;
    }
}
