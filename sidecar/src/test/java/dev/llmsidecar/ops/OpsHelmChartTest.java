package dev.llmsidecar.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * charts/llm-sidecar through helm-java (Helm 3 in-process): {@code lint --strict}, {@code template} with default and
 * non-default values (ci/nondefault-values.yaml), the output validated as Kubernetes objects (kubernetes-models,
 * incl. prometheus-operator CRDs), yamllint-clean, the PrometheusRule equal to deploy/prometheus/rules.yml and the
 * dashboards ConfigMap equal to grafana/dashboards. helm-java's template has Helm's default capabilities (no
 * monitoring.coreos.com), so "auto" renders no operator objects unless a test says true.
 */
class OpsHelmChartTest {

    static final Path CHART = OpsTools.ROOT.resolve("charts/llm-sidecar");
    static final Path RULES = OpsTools.ROOT.resolve("deploy/prometheus/rules.yml");
    static final String IMAGE = "registry.example.com/llm-sidecar";
    static final String IMAGE_REQUIRED = "image.repository is required: no image is published; build "
            + "sidecar/src/main/docker/Dockerfile.jvm and push it to your registry (docs/deployment.md)";

    /** helm template of the chart as release llama in namespace llm, with the one required value set. */
    static TemplateCommand template() {
        return template(CHART);
    }

    static TemplateCommand template(Path chart) {
        return new Helm(chart).template().withName("llama").withNamespace("llm").set("image.repository", IMAGE);
    }

    static Path write(String name, String out) throws IOException {
        Path file = OpsTools.outDir().resolve(name);
        Files.writeString(file, out);
        return file;
    }

    /** The rendered document of one template file (e.g. "service.yaml"); fails when absent. */
    static String doc(String out, String template) {
        List<String> docs = Arrays.stream(out.split("(?m)^---$"))
                .filter(d -> d.contains("# Source: llm-sidecar/templates/" + template + "\n")).toList();
        assertThat(docs).as(template + " in\n" + out).hasSize(1);
        return docs.get(0);
    }

    static boolean rendered(String out, String template) {
        return out.contains("# Source: llm-sidecar/templates/" + template + "\n");
    }

    /** The sidecar's and the engine's container in the Deployment (the sidecar comes first). */
    static String[] containers(String out) {
        String deployment = doc(out, "deployment.yaml");
        int engine = deployment.indexOf("        - name: vllm\n");
        assertThat(engine).as("engine container").isPositive();
        return new String[] {deployment.substring(deployment.indexOf("        - name: llm-sidecar\n"), engine),
                deployment.substring(engine)};
    }

    /**
     * A copy of the chart under target/ops/charts/NAME/llm-sidecar with {@code edit} applied to {@code file}, which
     * must change it (so a test never silently runs the unmodified chart).
     */
    static Path chartCopy(String name, String file, UnaryOperator<String> edit) throws IOException {
        Path root = OpsTools.outDir().resolve("charts").resolve(name);
        if (Files.exists(root)) {
            try (Stream<Path> old = Files.walk(root)) {
                for (Path p : old.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        Path copy = root.resolve("llm-sidecar");
        try (Stream<Path> files = Files.walk(CHART)) {
            for (Path p : files.toList()) {
                Path target = copy.resolve(CHART.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target);
                }
            }
        }
        Path edited = copy.resolve(file);
        String before = Files.readString(edited);
        String after = edit.apply(before);
        assertThat(after).as("edit of " + file).isNotEqualTo(before);
        Files.writeString(edited, after);
        return copy;
    }

    static long count(String text, String what) {
        return Pattern.compile(Pattern.quote(what)).matcher(text).results().count();
    }

    @Test
    void lintStrictPassesWithTheImageSet() throws Exception {
        // helm-java's lint takes no values: lint a copy whose values.yaml names an image
        Path copy = chartCopy("lint", "values.yaml", v -> v.replace("\n  repository: \"\"\n",
                "\n  repository: " + IMAGE + "\n"));
        LintResult lint = new Helm(copy).lint().strict().call();
        assertThat(lint.isFailed()).as(String.join("\n", lint.getMessages())).isFalse();
    }

    @Test
    void renderingWithoutAnImageRepositoryFailsWithTheBuildHint() {
        assertThatThrownBy(() -> new Helm(CHART).template().withName("x").call())
                .hasMessageContaining(IMAGE_REQUIRED);
        assertThatThrownBy(() -> new Helm(CHART).template().withName("x").set("image.tag", "0.1.0").call())
                .hasMessageContaining(IMAGE_REQUIRED);
    }

    @Test
    void defaultValuesRenderEngineAndSidecarWithoutOperatorObjects() throws Exception {
        String out = template().call();
        Path file = write("helm-default.yaml", out);

        // installs on a cluster without the Prometheus operator: no monitoring.coreos.com object by default
        assertThat(out).contains("kind: ConfigMap", "kind: Deployment", "kind: Service", "kind: PodDisruptionBudget",
                "name: llama-llm-sidecar-metrics", "name: llama-llm-sidecar-dashboards")
                .doesNotContain("monitoring.coreos.com", "kind: ServiceMonitor", "kind: PodMonitor",
                        "kind: PrometheusRule", "kind: NetworkPolicy", "kind: PersistentVolumeClaim");
        // the sidecar owns the service port; the engine is on loopback
        assertThat(out).contains("- name: llm-sidecar", "- name: vllm", "containerPort: 8000", "containerPort: 9000",
                "--host=127.0.0.1", "--port=8001", "sidecar.upstream.url=http://127.0.0.1:8001",
                "sidecar.slo.objectives.interactive.ttft=PT0.5S", "sidecar.slo.objectives.interactive.slo-class=default",
                "path: /q/health/ready", "path: /q/health/live", "readOnlyRootFilesystem: true", "runAsNonRoot: true",
                "image: \"" + IMAGE + ":0.1.0\"");
        assertThat(out).doesNotContain("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SDK_DISABLED");
        // the trace recorder is off: no volume, no secret, no property
        assertThat(out).doesNotContain("sidecar.trace.", "SIDECAR_TRACE_", "name: traces", "fsGroup");
        startsWithTheRenderedProperties(out);
        // the image's measured JVM flags, nothing added
        assertThat(out).doesNotContain("JAVA_OPTS_APPEND", "-Xmx", "JAVA_MAX_MEM_RATIO");
        assertThat(out.indexOf("- name: llm-sidecar")).isLessThan(out.indexOf("- name: vllm"));

        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.yamllint(file, CHART.resolve("values.yaml"), CHART.resolve("ci"), CHART.resolve("Chart.yaml"));
    }

    @Test
    void monitorAndRulesRenderWhenEnabledAndSelectTheMetricsService() throws Exception {
        String out = template().set("serviceMonitor.enabled", "true").set("prometheusRules.enabled", "true").call();
        Path file = write("helm-monitoring.yaml", out);

        assertThat(out).contains("kind: ServiceMonitor", "kind: PrometheusRule", "path: /q/metrics",
                "replacement: llm-sidecar").doesNotContain("kind: PodMonitor");
        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.nodeValidate("rules-sync", RULES.toString(), file.toString()).assertOk("PrometheusRule == rules.yml");
        OpsTools.Result selects = OpsTools.nodeValidate("selects", file.toString()).assertOk("ServiceMonitor targets");
        // the metrics Service alone, not the clients' one
        assertThat(selects.stdout().lines().toList()).containsExactly(
                "ServiceMonitor/llama-llm-sidecar -> Service/llama-llm-sidecar-metrics port management"
                        + " -> Deployment/llama-llm-sidecar port management");
        OpsTools.yamllint(file);

        String pods = template().set("podMonitor.enabled", "true").call();
        Path podFile = write("helm-podmonitor.yaml", pods);
        assertThat(pods).contains("kind: PodMonitor").doesNotContain("kind: ServiceMonitor", "kind: PrometheusRule");
        OpsTools.nodeValidate("selects", podFile.toString()).assertOk("PodMonitor targets");

        assertThat(template().set("serviceMonitor.enabled", "false").set("prometheusRules.enabled", "false").call())
                .doesNotContain("monitoring.coreos.com");
        assertThatThrownBy(() -> template().set("serviceMonitor.enabled", "yes").call())
                .hasMessageContaining("serviceMonitor.enabled must be auto, true or false, not \"yes\"");
    }

    @Test
    void autoRendersTheOperatorObjectsWhenTheClusterServesTheirApi() throws Exception {
        // helm-java cannot pass --api-versions: point the capability check of a copy at an API Helm always has
        Path copy = chartCopy("auto", "templates/_helpers.tpl", t -> t.replace(
                "(printf \"monitoring.coreos.com/v1/%s\" .kind)", "\"apps/v1\""));
        String out = template(copy).call();
        assertThat(out).contains("kind: ServiceMonitor", "kind: PrometheusRule").doesNotContain("kind: PodMonitor");
        assertThat(template(copy).set("podMonitor.enabled", "auto").call()).contains("kind: PodMonitor");
        assertThat(template(copy).set("serviceMonitor.enabled", "false").set("prometheusRules.enabled", "false")
                .call()).doesNotContain("monitoring.coreos.com");
    }

    @Test
    void severityLabelsOfTheRulesAreConfigurable() throws Exception {
        String rules = Files.readString(RULES);
        long pages = count(rules, "severity: critical");
        long tickets = count(rules, "severity: warning");
        assertThat(pages).isPositive();
        assertThat(tickets).isPositive();

        String out = doc(template().set("prometheusRules.enabled", "true")
                .set("prometheusRules.severity.critical", "page").set("prometheusRules.severity.warning", "ticket")
                .call(), "prometheusrule.yaml");
        assertThat(count(out, "severity: page")).isEqualTo(pages);
        assertThat(count(out, "severity: ticket")).isEqualTo(tickets);
        assertThat(out).doesNotContain("severity: critical", "severity: warning");
        // the LLMSidecarDown page keeps its place
        assertThat(out.substring(out.indexOf("alert: LLMSidecarDown"))).containsSubsequence("severity: page",
                "alert: LLMSidecarEngineDown");

        // swapped names: each label is replaced once, not replaced again by the other
        String swapped = doc(template().set("prometheusRules.enabled", "true")
                .set("prometheusRules.severity.critical", "warning").set("prometheusRules.severity.warning", "critical")
                .call(), "prometheusrule.yaml");
        assertThat(count(swapped, "severity: warning")).isEqualTo(pages);
        assertThat(count(swapped, "severity: critical")).isEqualTo(tickets);
    }

    @Test
    void managementPortIsOnItsOwnServiceAndTheNetworkPolicyLimitsItToMonitoring() throws Exception {
        String out = template().call();
        String service = doc(out, "service.yaml");
        assertThat(service).contains("name: llama-llm-sidecar\n", "- name: http", "port: 8000", "targetPort: http")
                .doesNotContain("management", "9000", "app.kubernetes.io/component");
        String metrics = doc(out, "service-metrics.yaml");
        assertThat(metrics).contains("name: llama-llm-sidecar-metrics", "app.kubernetes.io/component: metrics",
                "- name: management", "port: 9000", "targetPort: management").doesNotContain("http", "8000");
        assertThat(rendered(out, "networkpolicy.yaml")).isFalse();

        String policyOut = template().set("networkPolicy.enabled", "true").call();
        Path file = write("helm-networkpolicy.yaml", policyOut);
        String policy = doc(policyOut, "networkpolicy.yaml");
        // http from anywhere (a rule without "from"), management only from the monitoring namespace
        assertThat(policy).contains("kind: NetworkPolicy", "policyTypes: [Ingress]")
                .containsSubsequence("podSelector:", "app.kubernetes.io/name: llm-sidecar",
                        "app.kubernetes.io/instance: llama", "ingress:", "- ports:", "- port: 8000", "- from:",
                        "- namespaceSelector:", "kubernetes.io/metadata.name: monitoring", "ports:", "- port: 9000")
                .doesNotContain("podSelector:\n            ");
        assertThat(policy.substring(policy.indexOf("ingress:"), policy.indexOf("- from:"))).doesNotContain("9000");
        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.yamllint(file);

        String narrowed = doc(template().set("networkPolicy.enabled", "true")
                .set("networkPolicy.metricsNamespaceSelector.matchLabels.team", "sre")
                .set("networkPolicy.metricsPodSelector.matchLabels.app\\.kubernetes\\.io/name", "prometheus")
                .call(), "networkpolicy.yaml");
        assertThat(narrowed).containsSubsequence("- namespaceSelector:", "matchLabels:",
                "kubernetes.io/metadata.name: monitoring", "team: sre", "podSelector:", "matchLabels:",
                "app.kubernetes.io/name: prometheus", "ports:", "- port: 9000");
    }

    @Test
    void dashboardsConfigMapCarriesEveryDashboardOfGrafanaByteForByte() throws Exception {
        Path grafana = OpsTools.ROOT.resolve("grafana/dashboards");
        Path copies = CHART.resolve("files/dashboards");
        // the chart's copies are grafana/dashboards as deploy/prometheus/sync.sh leaves them
        List<String> names = jsonFiles(grafana);
        assertThat(names).isNotEmpty();
        assertThat(jsonFiles(copies)).as("run deploy/prometheus/sync.sh").isEqualTo(names);
        for (String name : names) {
            assertThat(Files.readAllBytes(copies.resolve(name))).as(name + ": run deploy/prometheus/sync.sh")
                    .isEqualTo(Files.readAllBytes(grafana.resolve(name)));
        }

        String out = template().call();
        Path file = write("helm-dashboards.yaml", out);
        String cm = doc(out, "dashboards-configmap.yaml");
        assertThat(cm).contains("name: llama-llm-sidecar-dashboards", "grafana_dashboard: \"1\"")
                .doesNotContain("annotations:", "namespace:");
        OpsTools.nodeValidate("configmap-files", file.toString(), "llama-llm-sidecar-dashboards", grafana.toString())
                .assertOk("dashboards ConfigMap == grafana/dashboards");

        String custom = doc(template().set("dashboards.label", "grafana_dashboard_llm").set("dashboards.labelValue", "yes")
                .set("dashboards.annotations.grafana_folder", "LLM serving").set("dashboards.namespace", "monitoring")
                .call(), "dashboards-configmap.yaml");
        assertThat(custom).contains("grafana_dashboard_llm: \"yes\"", "namespace: monitoring",
                "grafana_folder: LLM serving").doesNotContain("grafana_dashboard: ");
        assertThat(rendered(template().set("dashboards.enabled", "false").call(), "dashboards-configmap.yaml")).isFalse();
    }

    static List<String> jsonFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".json")).sorted().toList();
        }
    }

    @Test
    void drainTimingIsConsistentAcrossSidecarEngineAndPod() throws Exception {
        String out = template().call();
        String[] c = containers(out);
        // defaults: preStop 10 s, drain 25 s, grace 10 + 25 + 10
        assertThat(doc(out, "deployment.yaml")).contains("terminationGracePeriodSeconds: 45\n");
        assertThat(c[0]).contains("name: QUARKUS_SHUTDOWN_TIMEOUT\n              value: \"25s\"",
                "preStop:\n              exec:\n                command: [\"sleep\", \"10\"]");
        assertThat(c[1]).contains("preStop:\n              exec:\n                command: [\"sleep\", \"35\"]")
                .doesNotContain("QUARKUS_SHUTDOWN_TIMEOUT");

        String custom = template().set("drain.preStopSeconds", "5").set("drain.graceSeconds", "120").call();
        String[] cc = containers(custom);
        assertThat(doc(custom, "deployment.yaml")).contains("terminationGracePeriodSeconds: 135\n");
        assertThat(cc[0]).contains("value: \"120s\"", "command: [\"sleep\", \"5\"]");
        assertThat(cc[1]).contains("command: [\"sleep\", \"125\"]");

        // an explicit grace period is kept when it covers preStop + drain + 5 s, and refused below that
        assertThat(template().set("terminationGracePeriodSeconds", "40").call())
                .contains("terminationGracePeriodSeconds: 40\n");
        assertThat(template().set("terminationGracePeriodSeconds", "300").call())
                .contains("terminationGracePeriodSeconds: 300\n");
        assertThatThrownBy(() -> template().set("terminationGracePeriodSeconds", "39").call())
                .hasMessageContaining("terminationGracePeriodSeconds=39 is below drain.preStopSeconds"
                        + " + drain.graceSeconds + 5 = 40");
        assertThatThrownBy(() -> template().set("drain.graceSeconds", "60").set("terminationGracePeriodSeconds", "60")
                .call()).hasMessageContaining("is below drain.preStopSeconds + drain.graceSeconds + 5 = 75");
    }

    @Test
    void podDisruptionBudgetAllowsOnePodDownByDefault() throws Exception {
        String pdb = doc(template().call(), "poddisruptionbudget.yaml");
        assertThat(pdb).contains("apiVersion: policy/v1", "kind: PodDisruptionBudget", "maxUnavailable: 1")
                .containsSubsequence("selector:", "matchLabels:", "app.kubernetes.io/name: llm-sidecar",
                        "app.kubernetes.io/instance: llama")
                .doesNotContain("minAvailable");
        String min = template().set("podDisruptionBudget.minAvailable", "2").set("replicaCount", "3").call();
        Path file = write("helm-pdb.yaml", min);
        assertThat(doc(min, "poddisruptionbudget.yaml")).contains("minAvailable: 2").doesNotContain("maxUnavailable");
        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        assertThat(doc(template().set("podDisruptionBudget.maxUnavailable", "50%").call(), "poddisruptionbudget.yaml"))
                .contains("maxUnavailable: 50%");
        assertThat(rendered(template().set("podDisruptionBudget.enabled", "false").call(), "poddisruptionbudget.yaml"))
                .isFalse();
    }

    @Test
    void engineHasAReadinessProbeAndSidecarReadinessFollowsTheEngine() {
        String out = template().call();
        String[] c = containers(out);
        assertThat(c[0]).contains("name: SIDECAR_ENGINE_READINESS_FOLLOWS_ENGINE\n              value: \"true\"");
        assertThat(c[1]).containsSubsequence("readinessProbe:", "exec:", "- python3", "- -c",
                "urllib.request.urlopen('http://127.0.0.1:8001/health', timeout=3)");
        assertThat(count(c[1], "urlopen('http://127.0.0.1:8001/health'")).isEqualTo(3);

        String off = template().set("readinessFollowsEngine", "false").set("engine.port", "8011").call();
        assertThat(containers(off)[0]).contains("name: SIDECAR_ENGINE_READINESS_FOLLOWS_ENGINE\n              value: \"false\"");
        assertThat(containers(off)[1]).contains("urlopen('http://127.0.0.1:8011/health'");
    }

    @Test
    void modelCacheIsAnEmptyDirOrAPersistentVolumeClaim() throws Exception {
        String out = template().call();
        assertThat(rendered(out, "persistentvolumeclaim.yaml")).isFalse();
        assertThat(doc(out, "deployment.yaml")).contains("- name: hf-cache\n          emptyDir: {}",
                "- name: hf-cache\n              mountPath: /root/.cache/huggingface");

        String pvc = template().set("engine.modelCache.persistentVolumeClaim.enabled", "true")
                .set("engine.modelCache.persistentVolumeClaim.size", "500Gi")
                .set("engine.modelCache.persistentVolumeClaim.storageClassName", "fast-nvme")
                .set("engine.modelCache.mountPath", "/models").call();
        Path file = write("helm-pvc.yaml", pvc);
        assertThat(doc(pvc, "persistentvolumeclaim.yaml")).contains("kind: PersistentVolumeClaim",
                "name: llama-llm-sidecar-model-cache", "- ReadWriteOnce", "storageClassName: fast-nvme",
                "storage: 500Gi");
        assertThat(doc(pvc, "deployment.yaml")).contains(
                "- name: hf-cache\n          persistentVolumeClaim:\n            claimName: llama-llm-sidecar-model-cache",
                "- name: hf-cache\n              mountPath: /models").doesNotContain("- name: hf-cache\n          emptyDir");
        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.yamllint(file);

        // no storageClassName = the cluster's default class
        assertThat(doc(template().set("engine.modelCache.persistentVolumeClaim.enabled", "true").call(),
                "persistentvolumeclaim.yaml")).contains("storage: 100Gi").doesNotContain("storageClassName");

        String existing = template().set("engine.modelCache.persistentVolumeClaim.enabled", "true")
                .set("engine.modelCache.persistentVolumeClaim.existingClaim", "shared-models").call();
        assertThat(rendered(existing, "persistentvolumeclaim.yaml")).isFalse();
        assertThat(doc(existing, "deployment.yaml")).contains("claimName: shared-models");
    }

    @Test
    void nonDefaultValuesRenderAnExternalUpstreamWithPodMonitorAndOtlp() throws Exception {
        String out = new Helm(CHART).template().withName("shared").withNamespace("obs")
                .withValuesFile(CHART.resolve("ci/nondefault-values.yaml"))
                .set("prometheusRules.runbookBaseUrl", "https://runbooks.example.com/llm.md").call();
        Path file = write("helm-nondefault.yaml", out);

        assertThat(out).contains("kind: PodMonitor", "release: kube-prometheus-stack", "replicas: 3",
                "containerPort: 8080", "containerPort: 9090", "port: 80",
                "sidecar.upstream.url=http://vllm-shared.llm.svc:8000",
                "sidecar.slo.classes=default,batch", "sidecar.slo.objectives.interactive.models=llama-*,qwen*",
                "sidecar.slo.objectives.interactive.itl-quantile=0.99", "sidecar.slo.objectives.batch.e2e=PT120S",
                "sidecar.metrics.pinned-models=llama-3.1-8b,qwen2.5-7b", "sidecar.upstream.max-connections=1024",
                "name: QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT", "name: OTEL_EXPORTER_OTLP_ENDPOINT",
                "value: \"http://otel-collector.observability.svc:4318\"", "name: OTEL_EXPORTER_OTLP_PROTOCOL",
                "value: \"http/protobuf\"", "name: OTEL_EXPORTER_OTLP_HEADERS", "name: otlp-auth",
                "name: OTEL_SERVICE_NAME", "value: \"shared-llm-sidecar\"", "name: QUARKUS_LOG_LEVEL",
                "name: JAVA_OPTS_APPEND\n              value: \"-Xms128m -Xmx128m\"",
                "image: \"registry.example.com/llm/llm-sidecar:0.2.0-rc1\"",
                "terminationGracePeriodSeconds: 90", "command: [\"sleep\", \"5\"]", "value: \"60s\"",
                "minAvailable: 2", "kind: NetworkPolicy", "kubernetes.io/metadata.name: observability",
                "- port: 8080", "- port: 9090", "name: shared-llm-sidecar-metrics");
        assertThat(out).contains("sidecar.tenants.source=header", "sidecar.tenants.header=OpenAI-Project",
                "sidecar.tenants.allowed=proj-gold,proj-silver",
                "sidecar.tenants.series=llm_sidecar.requests,llm_sidecar.tokens,gen_ai.server.time_to_first_token",
                "sidecar.saturation.knee=48", "sidecar.cost.gpu-hour-price=2.49", "sidecar.cost.gpus=2",
                "sidecar.gpu.dcgm-url=http://nvidia-dcgm-exporter.gpu-operator.svc:9400/metrics");
        assertThat(out).contains("sidecar.slo.declared.enabled=true",
                "sidecar.slo.declared.ttft-buckets=PT0.2S,PT1S,PT5S", "sidecar.slo.declared.target=0.95",
                "sidecar.priority.enabled=true", "sidecar.priority.values=0,1",
                "sidecar.priority.header=x-request-priority",
                "sidecar.priority.series=llm_sidecar.slo.requests,gen_ai.server.time_to_first_token")
                .doesNotContain("sidecar.slo.declared.tpot-buckets");
        assertThat(out).contains("sidecar.trace.enabled=true", "sidecar.trace.max-file-bytes=134217728",
                "sidecar.trace.session-header=x-session-id", "name: llm-trace-key", "claimName: shared-traces",
                "fsGroup: 185", "sidecar.trace.token-file=/etc/llm-sidecar-trace-token/token",
                "secretName: llm-trace-token");
        startsWithTheRenderedProperties(out, java.util.Map.of("sidecar.trace.secret", "5f0c1d2e3a4b596877a6b5c4d3e2f1000123456789abcdef0fedcba987654321",
                "sidecar.trace.dir", OpsTools.outDir().resolve("helm-nondefault-traces").toString()));
        assertThat(out).contains("name: SIDECAR_ENGINE_READINESS_FOLLOWS_ENGINE\n              value: \"false\"");
        assertThat(out).doesNotContain("kind: ServiceMonitor", "kind: PrometheusRule", "- name: vllm", "nvidia.com/gpu",
                "/dev/shm", "kind: PersistentVolumeClaim", "-dashboards");
        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.nodeValidate("selects", file.toString()).assertOk("PodMonitor targets");
        OpsTools.yamllint(file);

        String rules = template().set("prometheusRules.enabled", "true")
                .set("prometheusRules.runbookBaseUrl", "https://runbooks.example.com/llm.md").call();
        assertThat(rules).contains("runbook_url: https://runbooks.example.com/llm.md#llmsidecarsloburnratefast")
                .doesNotContain("github.com/llm-sidecar/llm-sidecar/blob/main/docs/runbooks.md");
    }

    @Test
    void exemplarsWithoutExportTurnsTheSdkOnWithoutExporters() {
        String out = template().set("otlp.exemplarsWithoutExport", "true").call();
        assertThat(out).contains("name: OTEL_SDK_DISABLED", "name: OTEL_TRACES_EXPORTER")
                .doesNotContain("OTEL_EXPORTER_OTLP_ENDPOINT");
    }

    @Test
    void theTraceRecorderGetsAVolumeItsSecretFromASecretAndADirectoryPerPod() throws Exception {
        String out = template().set("trace.enabled", "true").set("trace.secretName", "llm-trace-key")
                .set("trace.sessionHeader", "x-session-id").set("trace.maxFiles", "24")
                .set("trace.tokenSecretName", "llm-trace-token").set("networkPolicy.enabled", "true").call();
        Path file = write("helm-trace.yaml", out);
        String deployment = doc(out, "deployment.yaml");
        String sidecar = containers(out)[0];
        assertThat(doc(out, "configmap.yaml")).contains("sidecar.trace.enabled=true",
                "sidecar.trace.max-file-bytes=67108864", "sidecar.trace.max-file-age=PT1H", "sidecar.trace.max-files=24",
                "sidecar.trace.session-header=x-session-id",
                "sidecar.trace.token-file=/etc/llm-sidecar-trace-token/token")
                .doesNotContain("sidecar.trace.secret", "llm-trace-key", "llm-trace-token");
        // the token: a file from its Secret, read only, so that the kubelet's updates reach the sidecar
        assertThat(sidecar).contains("- name: trace-token\n              mountPath: /etc/llm-sidecar-trace-token\n"
                + "              readOnly: true");
        assertThat(deployment).contains("- name: trace-token\n          secret:\n            secretName: llm-trace-token\n"
                + "            defaultMode: 0440\n            items:\n              - key: token\n                path: token");
        assertThat(doc(out, "networkpolicy.yaml")).contains("kind: NetworkPolicy");
        assertThat(sidecar).contains("- name: SIDECAR_TRACE_SECRET\n              valueFrom:\n                secretKeyRef:\n"
                + "                  name: llm-trace-key\n                  key: secret",
                "- name: POD_NAME\n              valueFrom:\n                fieldRef:\n                  fieldPath: metadata.name",
                "- name: SIDECAR_TRACE_DIR\n              value: \"/var/lib/llm-sidecar/traces/$(POD_NAME)\"",
                "- name: traces\n              mountPath: /var/lib/llm-sidecar/traces");
        // the volume: an emptyDir with a size limit (the root filesystem stays read-only); the engine has no mount
        assertThat(deployment).contains("- name: traces\n          emptyDir:\n            sizeLimit: 2Gi",
                "readOnlyRootFilesystem: true").doesNotContain("fsGroup");
        String engine = containers(out)[1];
        assertThat(engine.substring(0, engine.indexOf("\n      volumes:"))).doesNotContain("traces");
        assertThat(rendered(out, "trace-persistentvolumeclaim.yaml")).isFalse();
        startsWithTheRenderedProperties(out, java.util.Map.of("sidecar.trace.secret", "5f0c1d2e3a4b596877a6b5c4d3e2f1000123456789abcdef0fedcba987654321",
                "sidecar.trace.dir", OpsTools.outDir().resolve("helm-trace-dir").toString()));
        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.yamllint(file);

        // a claim instead: rendered, mounted, and the pod's group set so the sidecar (uid and gid 185) writes it
        String pvc = template().set("trace.enabled", "true").set("trace.secretName", "llm-trace-key")
                .set("networkPolicy.enabled", "true").set("trace.volume.persistentVolumeClaim.enabled", "true")
                .set("trace.volume.persistentVolumeClaim.size", "20Gi").call();
        Path pvcFile = write("helm-trace-pvc.yaml", pvc);
        assertThat(doc(pvc, "trace-persistentvolumeclaim.yaml")).contains("kind: PersistentVolumeClaim",
                "name: llama-llm-sidecar-traces", "app.kubernetes.io/component: traces", "- ReadWriteOnce",
                "storage: 20Gi");
        assertThat(doc(pvc, "deployment.yaml")).contains(
                "- name: traces\n          persistentVolumeClaim:\n            claimName: llama-llm-sidecar-traces",
                "fsGroup: 185", "fsGroupChangePolicy: OnRootMismatch", "type: RuntimeDefault");
        OpsTools.nodeValidate("k8s", pvcFile.toString()).assertOk("kubernetes-models");
        OpsTools.yamllint(pvcFile);
        String existing = template().set("trace.enabled", "true").set("trace.secretName", "k")
                .set("networkPolicy.enabled", "true").set("trace.volume.persistentVolumeClaim.enabled", "true")
                .set("trace.volume.persistentVolumeClaim.existingClaim", "shared-traces")
                .set("podSecurityContext.fsGroup", "2000").call();
        assertThat(rendered(existing, "trace-persistentvolumeclaim.yaml")).isFalse();
        assertThat(doc(existing, "deployment.yaml")).contains("claimName: shared-traces", "fsGroup: 2000")
                .doesNotContain("fsGroup: 185");
    }

    @Test
    void theTraceRecorderWithoutASecretFailsToRender() {
        assertThatThrownBy(() -> template().set("trace.enabled", "true").set("networkPolicy.enabled", "true").call())
                .hasMessageContaining("trace.enabled=true needs trace.secretName");
    }

    /**
     * The trace files are served on the management port: without the NetworkPolicy every pod of the cluster reaches
     * it, so the chart refuses the recorder unless the policy is on or the open port is asked for. It never turns the
     * policy on by itself (that would cut off a Prometheus outside the selected namespaces on upgrade).
     */
    @Test
    void theTraceRecorderNeedsTheNetworkPolicyOrAnOpenPortAskedFor() {
        assertThatThrownBy(() -> template().set("trace.enabled", "true").set("trace.secretName", "k").call())
                .hasMessageContaining("networkPolicy.enabled=true").hasMessageContaining("trace.allowOpenManagementPort");
        String open = template().set("trace.enabled", "true").set("trace.secretName", "k")
                .set("trace.allowOpenManagementPort", "true").call();
        assertThat(rendered(open, "networkpolicy.yaml")).isFalse();
        assertThat(doc(open, "configmap.yaml")).contains("sidecar.trace.enabled=true");
        String guarded = template().set("trace.enabled", "true").set("trace.secretName", "k")
                .set("networkPolicy.enabled", "true").call();
        assertThat(doc(guarded, "networkpolicy.yaml")).contains("kind: NetworkPolicy");
        assertThat(doc(guarded, "configmap.yaml")).as("no token: the files are not served")
                .doesNotContain("sidecar.trace.token-file");
    }

    /** An emptyDir past its sizeLimit evicts the whole pod, engine included: the recorder's own cap must fit under it. */
    @Test
    void anEmptyDirSmallerThanTheRecordersCapFailsToRender() {
        // (24 + 5) x 64 MiB = 1856 MiB: under 2Gi, over 1800Mi
        assertThat(template().set("trace.enabled", "true").set("trace.secretName", "k")
                .set("networkPolicy.enabled", "true").call()).contains("sizeLimit: 2Gi");
        assertThatThrownBy(() -> template().set("trace.enabled", "true").set("trace.secretName", "k")
                .set("networkPolicy.enabled", "true").set("trace.volume.sizeLimit", "1800Mi").call())
                .hasMessageContaining("trace.volume.sizeLimit 1800Mi (1887436800 bytes) is under the recorder's own cap")
                .hasMessageContaining("1946157056 bytes");
        assertThatThrownBy(() -> template().set("trace.enabled", "true").set("trace.secretName", "k")
                .set("networkPolicy.enabled", "true").set("trace.maxFiles", "40").call())
                .hasMessageContaining("under the recorder's own cap");
        assertThat(template().set("trace.enabled", "true").set("trace.secretName", "k")
                .set("networkPolicy.enabled", "true").set("trace.maxFiles", "40").set("trace.volume.sizeLimit", "3Gi")
                .call()).contains("sizeLimit: 3Gi");
        assertThatThrownBy(() -> template().set("trace.enabled", "true").set("trace.secretName", "k")
                .set("networkPolicy.enabled", "true").set("trace.volume.sizeLimit", "2 gigs").call())
                .hasMessageContaining("not a size");
        // a claim has no sizeLimit to check
        assertThat(template().set("trace.enabled", "true").set("trace.secretName", "k")
                .set("networkPolicy.enabled", "true").set("trace.maxFiles", "400")
                .set("trace.volume.persistentVolumeClaim.enabled", "true").call()).contains("kind: PersistentVolumeClaim");
    }

    @Test
    void otlpWithoutEndpointFailsToRender() {
        assertThatThrownBy(() -> template().set("otlp.enabled", "true").call())
                .hasMessageContaining("otlp.enabled=true needs otlp.endpoint");
    }

    /**
     * The sidecar.properties a chart renders must start a sidecar: the real config mapping reads them and the
     * telemetry is built from them (tenant series names, SLO objectives and windows are checked there).
     */
    static void startsWithTheRenderedProperties(String rendered) throws Exception {
        startsWithTheRenderedProperties(rendered, java.util.Map.of());
    }

    /** @param environment what the pod's environment adds to the ConfigMap's properties (the trace secret, its dir) */
    static void startsWithTheRenderedProperties(String rendered, java.util.Map<String, String> environment)
            throws Exception {
        int start = rendered.indexOf("sidecar.properties: |\n");
        assertThat(start).as("a ConfigMap with sidecar.properties").isNotNegative();
        java.util.Properties props = new java.util.Properties();
        StringBuilder block = new StringBuilder();
        for (String line : rendered.substring(start).split("\n", -1)) {
            if (line.startsWith("    ")) {
                block.append(line.strip()).append('\n');
            } else if (block.length() > 0) {
                break;
            }
        }
        props.load(new java.io.StringReader(block.toString()));
        java.util.Map<String, String> config = new java.util.HashMap<>();
        props.forEach((k, v) -> config.put(k.toString(), v.toString()));
        String upstream = config.remove("sidecar.upstream.url");
        config.putAll(environment);
        var sidecar = dev.llmsidecar.support.TestConfigs.sidecar(upstream, config);
        new dev.llmsidecar.app.SidecarTelemetry(new io.prometheus.metrics.model.registry.PrometheusRegistry(), sidecar,
                System::nanoTime).close();
        assertThat(sidecar.trace().enabled()).isEqualTo(rendered.contains("sidecar.trace.enabled=true"));
    }
}
