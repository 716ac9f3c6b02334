package dev.llmsidecar.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * deploy/prometheus/rules.yml with Debian's promtool: syntax ({@code check rules}), the unit tests where every alert
 * fires and stays silent ({@code test rules}), runbook coverage, and the copies in the chart and kustomize.
 */
class OpsRulesTest {

    static final Path DIR = OpsTools.ROOT.resolve("deploy/prometheus");

    @Test
    void promtoolChecksTheRules() {
        Path promtool = OpsTools.require("promtool", "apt-get install prometheus");
        OpsTools.Result r = OpsTools.run(Duration.ofSeconds(60), DIR, promtool.toString(), "check", "rules", "rules.yml")
                .assertOk("promtool check rules");
        Matcher m = Pattern.compile("SUCCESS: (\\d+) rules found").matcher(r.output());
        assertThat(m.find()).as(r.output()).isTrue();
        assertThat(Integer.parseInt(m.group(1))).isGreaterThanOrEqualTo(34);
    }

    @Test
    void promtoolUnitTestsPass() {
        Path promtool = OpsTools.require("promtool", "apt-get install prometheus");
        OpsTools.Result r = OpsTools.run(Duration.ofSeconds(120), DIR, promtool.toString(), "test", "rules",
                "rules_test.yml").assertOk("promtool test rules");
        assertThat(r.output()).contains("SUCCESS").doesNotContain("FAILED");
    }

    @Test
    void everyAlertHasARunbookSectionAndFiresAndStaysSilentInTheUnitTests() {
        OpsTools.nodeValidate("rules", DIR.resolve("rules.yml").toString(), DIR.resolve("rules_test.yml").toString(),
                OpsTools.ROOT.resolve("docs/runbooks.md").toString()).assertOk("validate.mjs rules");
    }

    @Test
    void chartAndKustomizeCarryTheSameRules() {
        OpsTools.nodeValidate("rules-sync", DIR.resolve("rules.yml").toString(),
                OpsTools.ROOT.resolve("deploy/kustomize/prometheusrule.yaml").toString(),
                OpsTools.ROOT.resolve("deploy/kustomize/add-to-existing/prometheusrule.yaml").toString(),
                OpsTools.ROOT.resolve("charts/llm-sidecar/files/rules.yml").toString())
                .assertOk("rule copies in sync (run deploy/prometheus/sync.sh)");
    }

    @Test
    void rulesAndDashboardsOnlyUseSeriesOfTheMetricsContract() throws Exception {
        String contract = Files.readString(OpsTools.ROOT.resolve("docs/metrics.md"))
                + Files.readString(OpsTools.ROOT.resolve("docs/slo.md"));
        Set<String> unknown = new TreeSet<>();
        Set<String> seen = new TreeSet<>();
        Pattern series = Pattern.compile("\\b((?:gen_ai|llm_sidecar)_[a-z0-9_]+)");
        try (var files = Files.walk(OpsTools.ROOT.resolve("grafana/dashboards"))) {
            for (Path f : Stream.concat(files.filter(p -> p.toString().endsWith(".json")),
                    Stream.of(DIR.resolve("rules.yml"))).toList()) {
                Matcher m = series.matcher(Files.readString(f));
                while (m.find()) {
                    String name = m.group(1).replaceAll("_(bucket|count|sum|max)$", "");
                    seen.add(name);
                    if (!contract.contains("`" + name + "`") && !contract.contains("`" + name + "{")) {
                        unknown.add(f.getFileName() + ": " + name);
                    }
                }
            }
        }
        assertThat(seen).hasSizeGreaterThan(30);
        assertThat(unknown).as("series not in docs/metrics.md or docs/slo.md").isEmpty();
    }

}
