package dev.llmsidecar.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * grafana/dashboards: in sync with grafana/generate.mjs, valid against npm {@code @grafana/schema} (tsc), with the
 * template variables and exemplar settings the bundle promises. Their queries run in OpsEndToEndTest.
 */
class OpsDashboardsTest {

    static final Path DASHBOARDS = OpsTools.ROOT.resolve("grafana/dashboards");

    @Test
    void committedDashboardsAreTheGeneratorsOutput() throws Exception {
        Path node = OpsTools.require("node", "apt-get install nodejs");
        Path out = OpsTools.outDir().resolve("dashboards");
        OpsTools.run(Duration.ofSeconds(60), OpsTools.ROOT, node.toString(), "grafana/generate.mjs", out.toString())
                .assertOk("generate.mjs");
        List<Path> committed = list(DASHBOARDS);
        assertThat(committed.stream().map(p -> p.getFileName().toString()))
                .containsExactlyElementsOf(list(out).stream().map(p -> p.getFileName().toString()).toList());
        for (Path p : committed) {
            assertThat(Files.readString(out.resolve(p.getFileName())))
                    .as(p + " differs from `node grafana/generate.mjs` output").isEqualTo(Files.readString(p));
        }
    }

    @Test
    void dashboardsAreValidAgainstTheGrafanaSchema() {
        OpsTools.Result r = OpsTools.nodeValidate("dashboards", DASHBOARDS.toString()).assertOk("@grafana/schema");
        assertThat(r.output()).contains("dashboards: 5 checked");
    }

    @Test
    void theDashboardsHaveTheirVariablesAndExemplarsOnLatencyPanels() throws Exception {
        List<Path> files = list(DASHBOARDS);
        assertThat(files).extracting(p -> p.getFileName().toString()).containsExactly("llm-sidecar-conversations.json", "llm-sidecar-health.json",
                "llm-sidecar-latency.json", "llm-sidecar-slo.json", "llm-sidecar-traffic.json");
        int exemplarTargets = 0;
        for (Path f : files) {
            JsonObject d = new JsonObject(Files.readString(f));
            assertThat(d.getJsonObject("templating").getJsonArray("list").stream()
                    .map(v -> ((JsonObject) v).getString("name")))
                    .contains("datasource", "namespace", "pod", "model", "slo_class");
            for (Object p : d.getJsonArray("panels")) {
                JsonObject panel = (JsonObject) p;
                boolean latency = "s".equals(panel.getJsonObject("fieldConfig").getJsonObject("defaults")
                        .getString("unit"));
                for (Object t : panel.getJsonArray("targets")) {
                    JsonObject target = (JsonObject) t;
                    if (latency && target.getString("expr").contains("_seconds_bucket")) {
                        assertThat(target.getBoolean("exemplar")).as(f + " " + panel.getString("title")).isTrue();
                        exemplarTargets++;
                    }
                }
            }
        }
        assertThat(exemplarTargets).isGreaterThanOrEqualTo(20);
        JsonObject latency = new JsonObject(Files.readString(DASHBOARDS.resolve("llm-sidecar-latency.json")));
        assertThat(latency.getJsonArray("panels").stream().map(p -> ((JsonObject) p).getString("type")))
                .contains("heatmap", "timeseries");
    }

    static List<Path> list(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
    }
}
