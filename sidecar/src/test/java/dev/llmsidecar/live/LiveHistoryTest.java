package dev.llmsidecar.live;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The live page's history in the sidecar: a ring of fixed size, one float column per plotted series. */
class LiveHistoryTest {

    static JsonObject doc(int inFlight, Object... modelP50) {
        JsonObject models = new JsonObject();
        for (int i = 0; i < modelP50.length; i += 2) {
            models.put((String) modelP50[i], new JsonObject().put("ttft", new JsonObject().put("1m",
                    new JsonObject().put("count", 3).put("mean", 0.2).put("p50", modelP50[i + 1]))));
        }
        return new JsonObject().put("in_flight", inFlight).put("max_in_flight", 9).put("models", models);
    }

    static List<Object> values(JsonObject rendered, String... path) {
        for (Object s : rendered.getJsonArray("series")) {
            if (((JsonObject) s).getJsonArray("path").getList().equals(List.of(path))) {
                return ((JsonObject) s).getJsonArray("values").getList();
            }
        }
        return null;
    }

    @Test
    void keepsThePlottedLeavesOfTheLastRowsOldestFirstWithNullWhereASeriesHadNone() {
        LiveHistory h = new LiveHistory("1m", 3, 16);
        h.sample(1_000, doc(1, "a", 0.25));
        h.sample(6_000, doc(2, "b", 0.5));
        h.sample(11_000, doc(3, "a", 0.125, "b", 0.75));
        h.sample(16_000, doc(4, "a", 0.2));
        JsonObject r = h.render(17_000);
        assertThat(r.getLong("now")).isEqualTo(17_000);
        assertThat(r.getLong("step_seconds")).isEqualTo(5);
        assertThat(r.getLong("span_seconds")).isEqualTo(900);
        assertThat(r.getString("window")).isEqualTo("1m");
        assertThat(r.getJsonArray("t").getList()).containsExactly(6_000L, 11_000L, 16_000L);
        assertThat(values(r, "in_flight")).containsExactly(2.0, 3.0, 4.0);
        assertThat(values(r, "models", "a", "ttft", "1m", "p50")).containsExactly(null, 0.125, 0.2);
        assertThat(values(r, "models", "b", "ttft", "1m", "p50")).containsExactly(0.5, 0.75, null);
        // what the page does not plot is not kept
        assertThat(values(r, "max_in_flight")).isNull();
        assertThat(values(r, "models", "a", "ttft", "1m", "count")).isNull();
        assertThat(r.getJsonArray("series")).hasSize(3);
        assertThat(r.containsKey("values_not_kept")).isFalse();
    }

    @Test
    void anEngineThatIsDownIsNotPlotted() {
        LiveHistory h = new LiveHistory("1m", 4, 16);
        h.sample(0, new JsonObject().put("engine", new JsonObject().put("up", true).put("kind", "vllm")
                .put("requests_waiting", 2).put("requests_running", 5)));
        h.sample(5_000, new JsonObject().put("engine", new JsonObject().put("up", false)
                .put("requests_waiting", 7).put("requests_running", 0)));
        JsonObject r = h.render(6_000);
        assertThat(values(r, "engine", "requests_waiting")).containsExactly(2.0, null);
        assertThat(values(r, "engine", "requests_running")).containsExactly(5.0, null);
    }

    @Test
    void aFullTableGivesAColumnWithoutValuesToANewSeriesAndCountsWhatItCouldNotKeep() {
        LiveHistory h = new LiveHistory("1m", 3, 2);
        h.sample(0, doc(1, "a", 0.1));
        h.sample(1, doc(1, "b", 0.2)); // no room for b: in_flight and a hold both columns
        assertThat(h.render(2).getLong("values_not_kept")).isEqualTo(1);
        h.sample(2, doc(1));
        h.sample(3, doc(1));
        assertThat(values(h.render(4), "models", "a", "ttft", "1m", "p50")).isNull(); // out of the ring
        h.sample(4, doc(1, "b", 0.3)); // a's column has no value left: b gets it
        JsonObject r = h.render(5);
        assertThat(h.series()).isEqualTo(2);
        assertThat(values(r, "models", "b", "ttft", "1m", "p50")).containsExactly(null, null, 0.3);
        assertThat(r.getLong("values_not_kept")).isEqualTo(1);
    }

    /**
     * The bound of the class comment, measured: histories filled to the worst case (every column in use, every row,
     * model names of 128 characters, none shared) each hold less than {@link LiveHistory#MEMORY_BOUND_BYTES}.
     */
    @Test
    void aFullHistoryStaysWithinItsMemoryBound() throws Exception {
        int instances = 8;
        List<LiveHistory> kept = new ArrayList<>();
        long before = usedHeapAfterGc();
        for (int n = 0; n < instances; n++) {
            LiveHistory h = new LiveHistory("1m");
            JsonObject doc = worstCase(n, 70);
            for (long row = 0; row < 200; row++) {
                h.sample(row * 5_000, doc);
            }
            assertThat(h.series()).isEqualTo(LiveHistory.MAX_SERIES);
            kept.add(h);
        }
        long perHistory = (usedHeapAfterGc() - before) / instances;
        System.out.printf("LiveHistoryTest: a full history holds %d bytes (bound %d)%n", perHistory,
                LiveHistory.MEMORY_BOUND_BYTES);
        assertThat(kept).hasSize(instances);
        assertThat(perHistory).isLessThan(LiveHistory.MEMORY_BOUND_BYTES);
    }

    /** {@code models} models of 128-character names, with three SLO classes: more series than the table holds. */
    static JsonObject worstCase(int instance, int models) {
        JsonObject m = new JsonObject();
        for (int i = 0; i < models; i++) {
            char[] name = new char[128];
            Arrays.fill(name, (char) ('a' + i % 26));
            String model = instance + "-" + i + new String(name).substring(String.valueOf(i).length() + 2);
            JsonObject one = new JsonObject();
            for (String metric : List.of("ttft", "tpot", "itl")) {
                one.put(metric, new JsonObject().put("1m", new JsonObject().put("p50", 0.1).put("p90", 0.2).put("p99", 0.3)));
            }
            JsonObject goodput = new JsonObject();
            for (String cls : List.of("default", "batch", "bulk")) {
                goodput.put(cls, new JsonObject().put("1m", new JsonObject().put("attainment", 0.99)
                        .put("goodput_requests_per_second", 2.5).put("goodput_tokens_per_second", 160.0)));
            }
            m.put(model, one.put("goodput", goodput));
        }
        return new JsonObject().put("in_flight", 3).put("waiting_first_token", 1).put("models", m)
                .put("engine", new JsonObject().put("up", true).put("requests_waiting", 0).put("requests_running", 3));
    }

    static long usedHeapAfterGc() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(50);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
