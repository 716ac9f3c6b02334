package dev.llmsidecar.live;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * {@code /q/llm?format=text}: what matters of {@link LiveStats} on one screen, read from the same document so that
 * the two never disagree. Per model, one column per window: requests, errors, TTFT / TPOT / ITL / E2E p50 and p99,
 * and per SLO class attainment and goodput; above, the load; below, the knee and where the rest is.
 */
public final class LiveStatsText {

    private static final int LABEL = 22;
    private static final int COLUMN = 20;

    private LiveStatsText() {
    }

    public static String render(JsonObject doc) {
        StringBuilder out = new StringBuilder();
        out.append(load(doc)).append('\n');
        JsonObject windows = doc.getJsonObject("windows", new JsonObject());
        List<String> labels = new ArrayList<>(windows.fieldNames());
        JsonObject models = doc.getJsonObject("models", new JsonObject());
        if (models.isEmpty()) {
            out.append("\nno LLM request finished yet\n");
        }
        for (String name : models.fieldNames()) {
            JsonObject m = models.getJsonObject(name);
            out.append('\n');
            row(out, name, labels, w -> w + coverage(windows.getJsonObject(w)));
            JsonObject requests = m.getJsonObject("requests", new JsonObject());
            row(out, "  requests", labels, w -> cell(requests, w, r -> r.getLong("count")
                    + (r.containsKey("per_second") ? " (" + number(r.getDouble("per_second")) + "/s)" : "")));
            row(out, "  errors", labels, w -> cell(requests, w, r -> r.getLong("errors") + " ("
                    + percent(r.getLong("errors") / (double) r.getLong("count")) + ")"));
            if (labels.stream().anyMatch(w -> cell(requests, w, r -> r.getLong("cancelled")) instanceof Long c && c > 0)) {
                row(out, "  cancelled by client", labels, w -> cell(requests, w, r -> r.getLong("cancelled")));
            }
            for (String metric : List.of("ttft", "tpot", "itl", "e2e")) {
                JsonObject stats = m.getJsonObject(metric);
                if (stats != null) {
                    row(out, "  " + metric.toUpperCase(Locale.ROOT) + " p50 / p99", labels,
                            w -> cell(stats, w, s -> pair(s.getDouble("p50"), s.getDouble("p99"))));
                }
            }
            JsonObject goodput = m.getJsonObject("goodput", new JsonObject());
            for (String cls : goodput.fieldNames()) {
                JsonObject g = goodput.getJsonObject(cls);
                row(out, "  " + cls + ": attainment", labels, w -> cell(g, w, c -> percent(c.getDouble("attainment"))
                        + " of " + c.getLong("requests")));
                row(out, "  " + cls + ": goodput", labels, w -> cell(g, w, c -> c.containsKey("goodput_requests_per_second")
                        ? number(c.getDouble("goodput_requests_per_second")) + "/s, "
                                + number(c.getDouble("goodput_tokens_per_second")) + " tok/s" : null));
            }
        }
        out.append('\n').append(saturation(doc.getJsonObject("saturation")));
        out.append(conversations(doc.getJsonObject("conversations")));
        out.append("more: /q/llm (JSON), /q/llm/ui (live page), /q/metrics (Prometheus); docs/slo.md, docs/metrics.md\n");
        return out.toString();
    }

    private static String load(JsonObject doc) {
        StringBuilder s = new StringBuilder("in flight ").append(doc.getValue("in_flight"))
                .append(", waiting for a first token ").append(doc.getValue("waiting_first_token"))
                .append(", at most ").append(doc.getValue("max_in_flight"));
        if (doc.getValue("stalled_streams") != null) {
            s.append(", stalled ").append(doc.getValue("stalled_streams"));
        }
        JsonObject e = doc.getJsonObject("engine");
        if (e != null) {
            s.append(" · engine ").append(e.getValue("kind", "")).append(Boolean.TRUE.equals(e.getValue("up")) ? " up"
                    : " DOWN");
            if (e.getValue("requests_running") != null) {
                s.append(", running ").append(number(e.getDouble("requests_running")));
            }
            if (e.getValue("requests_waiting") != null) {
                s.append(", queued ").append(number(e.getDouble("requests_waiting")));
            }
            if (e.getValue("kv_cache_usage_ratio") != null) {
                s.append(", KV cache ").append(percent(e.getDouble("kv_cache_usage_ratio")));
            }
        }
        return s.toString();
    }

    /** " (first 63 s)" while the sidecar has not yet run for the whole window. */
    private static String coverage(JsonObject w) {
        return w != null && w.getDouble("covers", 1.0) < 1 ? " (first " + Math.round(w.getDouble("observed_seconds"))
                + " s)" : "";
    }

    private static String saturation(JsonObject s) {
        if (s == null || !s.containsKey("knee_requests")) {
            return "";
        }
        return "saturation knee: " + number(s.getDouble("knee_requests")) + " in flight (" + s.getString("knee_source")
                + ")" + (s.containsKey("load_ratio") ? ", load " + percent(s.getDouble("load_ratio")) + " of it" : "")
                + '\n';
    }

    /** TTFT p50 / p99 by turn and the gap between turns, when sidecar.conversations is on. */
    private static String conversations(JsonObject c) {
        if (c == null) {
            return "";
        }
        StringBuilder s = new StringBuilder("conversations (").append(c.getString("window")).append("):");
        JsonObject ttft = c.getJsonObject("ttft_by_turn", new JsonObject());
        for (String turn : ttft.fieldNames()) {
            JsonObject t = ttft.getJsonObject(turn);
            s.append("  TTFT turn ").append(turn).append(' ').append(pair(t.getDouble("p50"), t.getDouble("p99")));
        }
        JsonObject gaps = c.getJsonObject("turn_gap_by_after", new JsonObject());
        for (String after : gaps.fieldNames()) {
            JsonObject g = gaps.getJsonObject(after);
            s.append("  gap after ").append(after).append(' ').append(pair(g.getDouble("p50"), g.getDouble("p99")));
        }
        return s.append('\n').toString();
    }

    private static Object cell(JsonObject perWindow, String window, Function<JsonObject, Object> value) {
        JsonObject w = perWindow.getJsonObject(window);
        return w == null ? null : value.apply(w);
    }

    private static void row(StringBuilder out, String label, List<String> windows, Function<String, Object> cell) {
        StringBuilder line = new StringBuilder(label);
        pad(line, LABEL);
        for (int i = 0; i < windows.size(); i++) {
            Object v = cell.apply(windows.get(i));
            line.append(v == null ? "-" : v);
            pad(line, LABEL + COLUMN * (i + 1));
        }
        out.append(line.toString().stripTrailing()).append('\n');
    }

    /** Spaces up to column {@code to}, at least one. */
    private static void pad(StringBuilder line, int to) {
        line.append(" ".repeat(Math.max(1, to - line.length())));
    }

    /** "251 / 410 ms", "2.10 / 3.40 s": both in the unit of the larger. */
    static String pair(double p50, double p99) {
        if (p99 >= 1) {
            return String.format(Locale.ROOT, "%.2f / %.2f s", p50, p99);
        }
        String f = p99 < 0.01 ? "%.1f / %.1f ms" : "%.0f / %.0f ms";
        return String.format(Locale.ROOT, f, p50 * 1000, p99 * 1000);
    }

    static String percent(double share) {
        double p = share * 100;
        return String.format(Locale.ROOT, p == Math.rint(p) ? "%.0f%%" : "%.1f%%", p);
    }

    static String number(double v) {
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? String.valueOf((long) v)
                : String.format(Locale.ROOT, Math.abs(v) >= 100 ? "%.0f" : Math.abs(v) >= 10 ? "%.1f" : "%.2f", v);
    }
}
