package dev.llmsidecar.ops;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * charts/llm-sidecar through helm-java (Helm 3 in-process): {@code lint --strict}, {@code template} with default and
 * non-default values (ci/nondefault-values.yaml), the output validated as Kubernetes objects (kubernetes-models,
 * incl. prometheus-operator CRDs), yamllint-clean, and the PrometheusRule equal to deploy/prometheus/rules.yml.
 */
class OpsHelmChartTest {

    static final Path CHART = OpsTools.ROOT.resolve("charts/llm-sidecar");

    @Test
    void lintStrictPasses() {
        LintResult lint = new Helm(CHART).lint().strict().call();
        assertThat(lint.isFailed()).as(String.join("\n", lint.getMessages())).isFalse();
    }

    @Test
    void defaultValuesRenderEngineAndSidecarWithMonitorAndRules() throws Exception {
        String out = new Helm(CHART).template().withName("llama").withNamespace("llm").call();
        Path file = OpsTools.outDir().resolve("helm-default.yaml");
        Files.writeString(file, out);

        assertThat(out).contains("kind: ConfigMap", "kind: Deployment", "kind: Service", "kind: ServiceMonitor",
                "kind: PrometheusRule").doesNotContain("kind: PodMonitor");
        // the sidecar owns the service port; the engine is on loopback
        assertThat(out).contains("- name: llm-sidecar", "- name: vllm", "containerPort: 8000", "containerPort: 9000",
                "--host=127.0.0.1", "--port=8001", "sidecar.upstream.url=http://127.0.0.1:8001",
                "sidecar.slo.objectives.interactive.ttft=PT0.5S", "sidecar.slo.objectives.interactive.slo-class=default",
                "path: /q/health/ready", "path: /q/health/live", "path: /q/metrics", "replacement: llm-sidecar",
                "readOnlyRootFilesystem: true", "runAsNonRoot: true",
                "image: \"ghcr.io/llm-sidecar/llm-sidecar:0.1.0\"");
        assertThat(out).doesNotContain("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_SDK_DISABLED");
        assertThat(out.indexOf("- name: llm-sidecar")).isLessThan(out.indexOf("- name: vllm"));

        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.nodeValidate("rules-sync", OpsTools.ROOT.resolve("deploy/prometheus/rules.yml").toString(),
                file.toString()).assertOk("PrometheusRule == rules.yml");
        OpsTools.yamllint(file, CHART.resolve("values.yaml"), CHART.resolve("ci"), CHART.resolve("Chart.yaml"));
    }

    @Test
    void nonDefaultValuesRenderAnExternalUpstreamWithPodMonitorAndOtlp() throws Exception {
        String out = new Helm(CHART).template().withName("shared").withNamespace("obs")
                .withValuesFile(CHART.resolve("ci/nondefault-values.yaml"))
                .set("prometheusRules.runbookBaseUrl", "https://runbooks.example.com/llm.md").call();
        Path file = OpsTools.outDir().resolve("helm-nondefault.yaml");
        Files.writeString(file, out);

        assertThat(out).contains("kind: PodMonitor", "release: kube-prometheus-stack", "replicas: 3",
                "containerPort: 8080", "containerPort: 9090", "port: 80",
                "sidecar.upstream.url=http://vllm-shared.llm.svc:8000",
                "sidecar.slo.classes=default,batch", "sidecar.slo.objectives.interactive.models=llama-*,qwen*",
                "sidecar.slo.objectives.interactive.itl-quantile=0.99", "sidecar.slo.objectives.batch.e2e=PT120S",
                "sidecar.metrics.pinned-models=llama-3.1-8b,qwen2.5-7b", "sidecar.upstream.max-connections=1024",
                "name: QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT", "name: OTEL_EXPORTER_OTLP_ENDPOINT",
                "value: \"http://otel-collector.observability.svc:4318\"", "name: OTEL_EXPORTER_OTLP_PROTOCOL",
                "value: \"http/protobuf\"", "name: OTEL_EXPORTER_OTLP_HEADERS", "name: otlp-auth",
                "name: OTEL_SERVICE_NAME", "value: \"shared-llm-sidecar\"", "JAVA_MAX_MEM_RATIO",
                "ghcr.io/llm-sidecar/llm-sidecar:0.2.0-rc1");
        assertThat(out).doesNotContain("kind: ServiceMonitor", "kind: PrometheusRule", "- name: vllm", "nvidia.com/gpu",
                "/dev/shm");
        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.yamllint(file);

        String rules = new Helm(CHART).template().withName("r")
                .set("prometheusRules.runbookBaseUrl", "https://runbooks.example.com/llm.md").call();
        assertThat(rules).contains("runbook_url: https://runbooks.example.com/llm.md#llmsidecarsloburnratefast")
                .doesNotContain("github.com/llm-sidecar/llm-sidecar/blob/main/docs/runbooks.md");
    }

    @Test
    void exemplarsWithoutExportTurnsTheSdkOnWithoutExporters() {
        String out = new Helm(CHART).template().withName("x").set("otlp.exemplarsWithoutExport", "true").call();
        assertThat(out).contains("name: OTEL_SDK_DISABLED", "name: OTEL_TRACES_EXPORTER")
                .doesNotContain("OTEL_EXPORTER_OTLP_ENDPOINT");
    }

    @Test
    void otlpWithoutEndpointFailsToRender() {
        assertThatThrownBy(() -> new Helm(CHART).template().withName("x").set("otlp.enabled", "true").call())
                .hasMessageContaining("otlp.enabled=true needs otlp.endpoint");
    }
}
