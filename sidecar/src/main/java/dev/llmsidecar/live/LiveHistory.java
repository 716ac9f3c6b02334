package dev.llmsidecar.live;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The last minutes of what the live page plots, kept in the sidecar so that a page opened late draws them at once
 * ({@code /q/llm/history}). Every {@link #STEP} the page's numbers ({@link LiveStats#renderPlotted}) go into a ring
 * of {@link #SPAN} / {@link #STEP} rows, one float column per series, a series being a leaf's path in that document
 * (e.g. models / sim-llama-8b / ttft / 1m / p99).
 *
 * <p>Memory is fixed whatever the traffic: at most {@link #MAX_SERIES} columns of one float per row, plus their
 * paths, whose model names {@code ModelLabels} bounds to 128 characters. With 180 rows that is 1024 × 736 bytes of
 * columns, about 0.75 MB, and at most about 0.25 MB of paths: under {@link #MEMORY_BOUND_BYTES}. 1024 columns hold
 * the default 52 model labels with three SLO classes (4 + 52 × (9 + 3 × 3) series). A column without a value in the
 * whole ring is given to the next new series; a value of a new series finding none is not kept, and counted.
 */
public final class LiveHistory {

    public static final Duration STEP = Duration.ofSeconds(5);
    public static final Duration SPAN = Duration.ofMinutes(15);
    static final int MAX_SERIES = 1024;
    static final long MEMORY_BOUND_BYTES = 1 << 20;
    /** The leaves the page reads (the rest of a window's stats it never plots). */
    private static final Set<String> PLOTTED = Set.of("in_flight", "waiting_first_token", "requests_waiting",
            "requests_running", "p50", "p90", "p99", "attainment", "goodput_requests_per_second",
            "goodput_tokens_per_second");

    private final String window;
    private final int capacity;
    private final int maxSeries;
    private final long[] times;
    private final float[][] columns;
    private final List<List<String>> paths = new ArrayList<>();
    /** The sample number of each column's last value: older than the ring, and the column is free. */
    private final long[] lastValue;
    private final Map<List<String>, Integer> columnOf = new HashMap<>();
    private long samples;
    private long valuesNotKept;

    /** @param window the label of the window the page plots (the shortest), said in the answer */
    public LiveHistory(String window) {
        this(window, (int) (SPAN.toMillis() / STEP.toMillis()), MAX_SERIES);
    }

    LiveHistory(String window, int capacity, int maxSeries) {
        this.window = window;
        this.capacity = capacity;
        this.maxSeries = maxSeries;
        this.times = new long[capacity];
        this.columns = new float[maxSeries][];
        this.lastValue = new long[maxSeries];
    }

    /** Adds one row: the plotted leaves of {@code plotted} at {@code wallMillis}. */
    public synchronized void sample(long wallMillis, JsonObject plotted) {
        int row = (int) (samples % capacity);
        times[row] = wallMillis;
        for (float[] column : columns) {
            if (column != null) {
                column[row] = Float.NaN;
            }
        }
        boolean full = false;
        List<Object[]> leaves = new ArrayList<>();
        leaves(plotted, new ArrayList<>(), leaves);
        for (Object[] leaf : leaves) {
            @SuppressWarnings("unchecked")
            List<String> path = (List<String>) leaf[0];
            Integer c = columnOf.get(path);
            if (c == null && !full) {
                c = freeColumn();
                full = c == null;
                if (c != null) {
                    columnOf.put(path, c);
                    paths.set(c, path);
                }
            }
            if (c == null) {
                valuesNotKept++;
                continue;
            }
            columns[c][row] = ((Number) leaf[1]).floatValue();
            lastValue[c] = samples;
        }
        samples++;
    }

    private static void leaves(JsonObject o, List<String> at, List<Object[]> out) {
        if (at.size() == 1 && at.get(0).equals("engine") && Boolean.FALSE.equals(o.getValue("up"))) {
            return; // the page does not plot an engine that is down
        }
        for (Map.Entry<String, Object> e : o) {
            List<String> path = new ArrayList<>(at);
            path.add(e.getKey());
            if (e.getValue() instanceof JsonObject child) {
                leaves(child, path, out);
            } else if (e.getValue() instanceof Number n && PLOTTED.contains(e.getKey()) && Double.isFinite(n.doubleValue())) {
                out.add(new Object[] {List.copyOf(path), n});
            }
        }
    }

    /** A column never used, or one without a value in the ring (its old series is forgotten); null if none. */
    private Integer freeColumn() {
        for (int c = 0; c < maxSeries; c++) {
            if (columns[c] == null) {
                columns[c] = new float[capacity];
                Arrays.fill(columns[c], Float.NaN);
                paths.add(null);
                return c;
            }
            if (lastValue[c] <= samples - capacity) {
                columnOf.remove(paths.get(c));
                Arrays.fill(columns[c], Float.NaN);
                paths.set(c, null);
                return c;
            }
        }
        return null;
    }

    /** The columns in use (for tests of the bound). */
    synchronized int series() {
        return columnOf.size();
    }

    /**
     * The answer of /q/llm/history: the sample times (epoch milliseconds, oldest first), and each series' values
     * (null where it had none); {@code now} lets a browser whose clock differs place them on its own.
     */
    public synchronized JsonObject render(long wallMillis) {
        int rows = (int) Math.min(samples, capacity);
        int first = (int) ((samples - rows) % capacity);
        JsonArray t = new JsonArray();
        for (int i = 0; i < rows; i++) {
            t.add(times[(first + i) % capacity]);
        }
        JsonArray series = new JsonArray();
        for (int c = 0; c < paths.size(); c++) {
            List<String> path = paths.get(c);
            if (path != null && lastValue[c] > samples - 1 - rows) {
                JsonArray values = new JsonArray();
                for (int i = 0; i < rows; i++) {
                    float v = columns[c][(first + i) % capacity];
                    // the float's own shortest decimal, not its double expansion
                    values.add(Float.isNaN(v) ? null : Double.valueOf(Float.toString(v)));
                }
                series.add(new JsonObject().put("path", new JsonArray(new ArrayList<Object>(path))).put("values", values));
            }
        }
        JsonObject out = new JsonObject().put("now", wallMillis).put("step_seconds", STEP.toSeconds())
                .put("span_seconds", SPAN.toSeconds()).put("window", window).put("t", t).put("series", series);
        return valuesNotKept > 0 ? out.put("values_not_kept", valuesNotKept) : out;
    }
}
