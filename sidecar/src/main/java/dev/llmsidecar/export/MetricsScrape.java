package dev.llmsidecar.export;

import io.micrometer.prometheus.PrometheusMeterRegistry;
import io.prometheus.client.exporter.common.TextFormat;

/** Renders the registry in the format a scraper asked for. */
public final class MetricsScrape {

    private MetricsScrape() {
    }

    /**
     * @param accept the scraper's Accept header (Prometheus asks for OpenMetrics first)
     * @return the content type chosen and the body
     */
    public static Rendered render(PrometheusMeterRegistry registry, String accept) {
        String type = TextFormat.chooseContentType(accept);
        String body = registry.scrape(type);
        return new Rendered(type, type.equals(TextFormat.CONTENT_TYPE_OPENMETRICS_100) ? withoutCountExemplars(body) : body);
    }

    public record Rendered(String contentType, String body) {
    }

    /**
     * Micrometer puts the last bucket exemplar on each histogram's {@code _count} line too, and Prometheus before
     * 2.43 (Debian 12 ships 2.42) rejects the whole scrape for it ("metric name ..._count does not support
     * exemplars"). Bucket exemplars stay.
     */
    static String withoutCountExemplars(String openMetrics) {
        StringBuilder out = new StringBuilder(openMetrics.length());
        int start = 0;
        while (start < openMetrics.length()) {
            int end = openMetrics.indexOf('\n', start);
            end = end < 0 ? openMetrics.length() : end + 1;
            int exemplar = openMetrics.indexOf(" # {", start);
            if (exemplar >= 0 && exemplar < end && isCountSample(openMetrics, start, exemplar)) {
                out.append(openMetrics, start, exemplar).append('\n');
            } else {
                out.append(openMetrics, start, end);
            }
            start = end;
        }
        return out.toString();
    }

    private static boolean isCountSample(String text, int lineStart, int limit) {
        int nameEnd = lineStart;
        while (nameEnd < limit && text.charAt(nameEnd) != '{' && text.charAt(nameEnd) != ' ') {
            nameEnd++;
        }
        return text.startsWith("_count", nameEnd - 6);
    }
}
