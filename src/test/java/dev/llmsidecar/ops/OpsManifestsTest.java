package dev.llmsidecar.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * deploy/kustomize built with {@code kubectl kustomize} (offline), validated as Kubernetes objects
 * (kubernetes-models + prometheus-operator CRDs) and yamllint-clean; also the add-to-an-existing-Deployment patch.
 */
class OpsManifestsTest {

    static final Path KUSTOMIZE = OpsTools.ROOT.resolve("deploy/kustomize");

    static String kustomize(Path dir, String outName) throws Exception {
        Path kubectl = OpsTools.require("kubectl", "apt-get install kubernetes-client");
        OpsTools.Result r = OpsTools.run(Duration.ofSeconds(60), OpsTools.ROOT, kubectl.toString(), "kustomize",
                dir.toString()).assertOk("kubectl kustomize " + dir);
        Path file = OpsTools.outDir().resolve(outName);
        Files.writeString(file, r.stdout());
        return r.stdout();
    }

    @Test
    void exampleBuildsIntoValidObjects() throws Exception {
        String out = kustomize(KUSTOMIZE, "kustomize-example.yaml");
        Path file = OpsTools.outDir().resolve("kustomize-example.yaml");
        assertThat(out).contains("kind: ConfigMap", "kind: Deployment", "kind: Service", "kind: ServiceMonitor",
                "kind: PrometheusRule", "namespace: llm-serving", "--host=127.0.0.1",
                "value: http://127.0.0.1:8001", "path: /q/health/ready", "port: management",
                "readOnlyRootFilesystem: true", "runAsNonRoot: true", "replacement: llm-sidecar",
                "sidecar.slo.objectives.interactive.ttft=PT0.5S", "alert: LLMSidecarSLOBurnRateFast");
        OpsTools.nodeValidate("k8s", file.toString(), KUSTOMIZE.resolve("podmonitor.yaml").toString())
                .assertOk("kubernetes-models");
        OpsTools.nodeValidate("rules-sync", OpsTools.ROOT.resolve("deploy/prometheus/rules.yml").toString(),
                file.toString()).assertOk("PrometheusRule == rules.yml");
        OpsTools.yamllint(file, OpsTools.ROOT.resolve("deploy"), OpsTools.ROOT.resolve("grafana/provisioning"));
    }

    @Test
    void addToExistingDeploymentMovesTheEngineToLoopbackAndGivesTheServicePortToTheSidecar() throws Exception {
        String out = kustomize(KUSTOMIZE.resolve("add-to-existing"), "kustomize-add-to-existing.yaml");
        Path file = OpsTools.outDir().resolve("kustomize-add-to-existing.yaml");
        String vllm = out.substring(out.indexOf("name: vllm") - 300, out.indexOf("name: vllm"));
        assertThat(vllm).contains("--host=127.0.0.1", "--port=8001").doesNotContain("--port=8000");
        assertThat(out).contains("name: llm-sidecar", "value: http://127.0.0.1:8001", "targetPort: http");
        // exactly one container port named http left: the sidecar's, on 8000
        assertThat(java.util.regex.Pattern.compile("containerPort: \\d+\\s+name: http\\n").matcher(out).results()
                .map(m -> m.group())).containsExactly("containerPort: 8000\n          name: http\n");
        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.yamllint(file);
    }

    @Test
    void containerImagesRunAsTheUserTheManifestsExpect() throws Exception {
        for (String dockerfile : new String[] {"Dockerfile.jvm", "Dockerfile.native"}) {
            String text = Files.readString(OpsTools.ROOT.resolve("src/main/docker/" + dockerfile));
            assertThat(text).as(dockerfile).contains("USER 185", "EXPOSE 8080 9000")
                    .doesNotContain("USER root", "USER 0");
        }
        assertThat(Files.readString(OpsTools.ROOT.resolve("src/main/docker/Dockerfile.jvm")))
                .contains("COPY --chown=185 target/quarkus-app/lib/ /deployments/lib/",
                        "/deployments/quarkus-run.jar");
        assertThat(Files.readString(KUSTOMIZE.resolve("deployment.yaml"))).contains("runAsUser: 185");
        assertThat(Files.readString(OpsTools.ROOT.resolve("charts/llm-sidecar/values.yaml"))).contains("runAsUser: 185");
    }
}
