package dev.llmsidecar.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;

/**
 * deploy/kustomize built with {@code kubectl kustomize} (offline), validated as Kubernetes objects
 * (kubernetes-models + prometheus-operator CRDs) and yamllint-clean; also the add-to-an-existing-Deployment patch,
 * which is scraped (PodMonitor) and alerted on (PrometheusRule) as-is. Structure is checked on the objects
 * ({@code validate.mjs json}), not on kustomize's formatting.
 */
class OpsManifestsTest {

    static final Path KUSTOMIZE = OpsTools.ROOT.resolve("deploy/kustomize");
    static final Path RULES = OpsTools.ROOT.resolve("deploy/prometheus/rules.yml");

    static String kustomize(Path dir, String outName) throws Exception {
        Path kubectl = OpsTools.require("kubectl", "apt-get install kubernetes-client");
        OpsTools.Result r = OpsTools.run(Duration.ofSeconds(60), OpsTools.ROOT, kubectl.toString(), "kustomize",
                dir.toString()).assertOk("kubectl kustomize " + dir);
        Path file = OpsTools.outDir().resolve(outName);
        Files.writeString(file, r.stdout());
        return r.stdout();
    }

    /** Every YAML document of {@code file} as JSON. */
    static List<JsonObject> objects(Path file) {
        String json = OpsTools.nodeValidate("json", file.toString()).assertOk("yaml -> json").stdout();
        return new JsonArray(json).stream().map(JsonObject.class::cast).toList();
    }

    static JsonObject only(List<JsonObject> objects, String kind) {
        List<JsonObject> found = objects.stream().filter(o -> kind.equals(o.getString("kind"))).toList();
        assertThat(found).as(kind).hasSize(1);
        return found.get(0);
    }

    static JsonObject named(List<JsonObject> objects, String kind, String name) {
        return objects.stream().filter(o -> kind.equals(o.getString("kind"))
                && name.equals(o.getJsonObject("metadata").getString("name"))).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + "/" + name));
    }

    static JsonObject container(JsonObject deployment, String name) {
        return podSpec(deployment).getJsonArray("containers").stream().map(JsonObject.class::cast)
                .filter(c -> name.equals(c.getString("name"))).findFirst()
                .orElseThrow(() -> new AssertionError("no container " + name));
    }

    static JsonObject podSpec(JsonObject deployment) {
        return deployment.getJsonObject("spec").getJsonObject("template").getJsonObject("spec");
    }

    static Map<String, Object> podLabels(JsonObject deployment) {
        return deployment.getJsonObject("spec").getJsonObject("template").getJsonObject("metadata")
                .getJsonObject("labels").getMap();
    }

    static String env(JsonObject container, String name) {
        return container.getJsonArray("env").stream().map(JsonObject.class::cast)
                .filter(e -> name.equals(e.getString("name"))).map(e -> e.getString("value")).findFirst()
                .orElseThrow(() -> new AssertionError("no env " + name + " in " + container.getString("name")));
    }

    /** Seconds of a preStop {@code sleep N} exec hook. */
    static int preStopSleep(JsonObject container) {
        JsonArray command = container.getJsonObject("lifecycle").getJsonObject("preStop").getJsonObject("exec")
                .getJsonArray("command");
        assertThat(command.getString(0)).isEqualTo("sleep");
        return Integer.parseInt(command.getString(1));
    }

    static List<String> portNames(JsonArray ports) {
        return ports.stream().map(p -> ((JsonObject) p).getString("name")).toList();
    }

    /**
     * The shutdown of the pod is consistent: the engine sleeps through the sidecar's preStop and drain, and the pod's
     * grace period covers both plus time for the engine to stop; readiness follows the engine, which has its own
     * readiness probe.
     */
    static void assertDrainAndReadiness(JsonObject deployment) {
        JsonObject sidecar = container(deployment, "llm-sidecar");
        JsonObject engine = container(deployment, "vllm");
        int preStop = preStopSleep(sidecar);
        String timeout = env(sidecar, "QUARKUS_SHUTDOWN_TIMEOUT");
        assertThat(timeout).matches("\\d+s");
        int drain = Integer.parseInt(timeout.substring(0, timeout.length() - 1));
        int grace = podSpec(deployment).getInteger("terminationGracePeriodSeconds");
        assertThat(preStop).isEqualTo(10);
        assertThat(drain).isEqualTo(25);
        assertThat(preStopSleep(engine)).as("engine preStop = sidecar preStop + drain").isEqualTo(preStop + drain);
        assertThat(grace).as("terminationGracePeriodSeconds").isGreaterThanOrEqualTo(preStop + drain + 5)
                .isEqualTo(45);
        assertThat(env(sidecar, "SIDECAR_ENGINE_READINESS_FOLLOWS_ENGINE")).isEqualTo("true");
        assertThat(engine.getJsonObject("readinessProbe").getJsonObject("exec").getJsonArray("command").getList())
                .contains("python3").anySatisfy(a -> assertThat(a.toString())
                        .contains("urllib.request.urlopen('http://127.0.0.1:8001/health', timeout=3)"));
        assertThat(engine.getJsonObject("readinessProbe").containsKey("httpGet")).isFalse();
    }

    @Test
    void exampleBuildsIntoValidObjects() throws Exception {
        String out = kustomize(KUSTOMIZE, "kustomize-example.yaml");
        Path file = OpsTools.outDir().resolve("kustomize-example.yaml");
        assertThat(out).contains("kind: ConfigMap", "kind: Deployment", "kind: Service", "kind: ServiceMonitor",
                "kind: PrometheusRule", "kind: PodDisruptionBudget", "namespace: llm-serving", "--host=127.0.0.1",
                "value: http://127.0.0.1:8001", "path: /q/health/ready", "port: management",
                "readOnlyRootFilesystem: true", "runAsNonRoot: true", "replacement: llm-sidecar",
                "sidecar.slo.objectives.interactive.ttft=PT0.5S", "alert: LLMSidecarSLOBurnRateFast");
        OpsTools.nodeValidate("k8s", file.toString(), KUSTOMIZE.resolve("podmonitor.yaml").toString())
                .assertOk("kubernetes-models");
        OpsTools.nodeValidate("rules-sync", RULES.toString(), file.toString()).assertOk("PrometheusRule == rules.yml");
        OpsTools.yamllint(file, OpsTools.ROOT.resolve("deploy"), OpsTools.ROOT.resolve("grafana/provisioning"));

        List<JsonObject> objects = objects(file);
        JsonObject deployment = only(objects, "Deployment");
        assertDrainAndReadiness(deployment);

        // clients' Service: http only; the management port is on its own Service, which the ServiceMonitor selects
        JsonObject service = named(objects, "Service", "llm-sidecar-vllm");
        assertThat(portNames(service.getJsonObject("spec").getJsonArray("ports"))).containsExactly("http");
        JsonObject metrics = named(objects, "Service", "llm-sidecar-vllm-metrics");
        assertThat(portNames(metrics.getJsonObject("spec").getJsonArray("ports"))).containsExactly("management");
        assertThat(metrics.getJsonObject("metadata").getJsonObject("labels").getString("app.kubernetes.io/component"))
                .isEqualTo("metrics");
        OpsTools.Result selects = OpsTools.nodeValidate("selects", file.toString()).assertOk("ServiceMonitor targets");
        assertThat(selects.stdout().lines().toList()).containsExactly(
                "ServiceMonitor/llm-sidecar-vllm -> Service/llm-sidecar-vllm-metrics port management"
                        + " -> Deployment/llm-sidecar-vllm port management");

        JsonObject pdb = only(objects, "PodDisruptionBudget");
        assertThat(pdb.getString("apiVersion")).isEqualTo("policy/v1");
        assertThat(pdb.getJsonObject("spec").getInteger("maxUnavailable")).isEqualTo(1);
        assertThat(podLabels(deployment)).containsAllEntriesOf(
                pdb.getJsonObject("spec").getJsonObject("selector").getJsonObject("matchLabels").getMap());

        // the image is a placeholder: the manifests say how to set one's own
        assertThat(Files.readString(KUSTOMIZE.resolve("kustomization.yaml"))).contains("placeholder", "images:",
                "newName:");
    }

    @Test
    void addToExistingDeploymentMovesTheEngineToLoopbackAndGivesTheServicePortToTheSidecar() throws Exception {
        String out = kustomize(KUSTOMIZE.resolve("add-to-existing"), "kustomize-add-to-existing.yaml");
        Path file = OpsTools.outDir().resolve("kustomize-add-to-existing.yaml");
        String vllm = out.substring(out.indexOf("name: vllm") - 400, out.indexOf("name: vllm"));
        assertThat(vllm).contains("--host=127.0.0.1", "--port=8001").doesNotContain("--port=8000");
        assertThat(out).contains("name: llm-sidecar", "value: http://127.0.0.1:8001", "targetPort: http");
        // exactly one container port named http left: the sidecar's, on 8000
        assertThat(java.util.regex.Pattern.compile("containerPort: \\d+\\s+name: http\\n").matcher(out).results()
                .map(m -> m.group())).containsExactly("containerPort: 8000\n          name: http\n");
        OpsTools.nodeValidate("k8s", file.toString()).assertOk("kubernetes-models");
        OpsTools.yamllint(file);

        assertDrainAndReadiness(only(objects(file), "Deployment"));
    }

    @Test
    void addToExistingDeploymentIsScrapedAndAlertedOnAsIs() throws Exception {
        kustomize(KUSTOMIZE.resolve("add-to-existing"), "kustomize-add-to-existing.yaml");
        Path file = OpsTools.outDir().resolve("kustomize-add-to-existing.yaml");
        List<JsonObject> objects = objects(file);
        JsonObject deployment = only(objects, "Deployment");
        Map<String, Object> labels = podLabels(deployment);
        assertThat(labels).containsEntry("app.kubernetes.io/name", "llm-sidecar");
        List<String> containerPorts = podSpec(deployment).getJsonArray("containers").stream()
                .map(JsonObject.class::cast).filter(c -> c.containsKey("ports"))
                .flatMap(c -> portNames(c.getJsonArray("ports")).stream()).filter(Objects::nonNull).toList();

        // PodMonitor: selects the patched pod template by the label the patch adds, on the management port
        JsonObject podMonitor = only(objects, "PodMonitor");
        assertThat(labels).containsAllEntriesOf(
                podMonitor.getJsonObject("spec").getJsonObject("selector").getJsonObject("matchLabels").getMap());
        JsonObject endpoint = podMonitor.getJsonObject("spec").getJsonArray("podMetricsEndpoints").getJsonObject(0);
        assertThat(endpoint.getString("port")).isEqualTo("management");
        assertThat(endpoint.getString("path")).isEqualTo("/q/metrics");
        assertThat(endpoint.getJsonArray("relabelings").getJsonObject(0).getMap())
                .containsEntry("targetLabel", "job").containsEntry("replacement", "llm-sidecar");
        assertThat(containerPorts).contains("management");
        OpsTools.Result selects = OpsTools.nodeValidate("selects", file.toString()).assertOk("PodMonitor targets");
        assertThat(selects.stdout().lines().toList())
                .containsExactly("PodMonitor/my-vllm-sidecar -> Deployment/my-vllm port management");

        // a Service for the management port of exactly these pods
        JsonObject metrics = named(objects, "Service", "my-vllm-metrics");
        assertThat(labels).containsAllEntriesOf(metrics.getJsonObject("spec").getJsonObject("selector").getMap());
        assertThat(metrics.getJsonObject("spec").getJsonArray("ports").getJsonObject(0).getMap())
                .containsEntry("name", "management").containsEntry("targetPort", "management");
        assertThat(portNames(named(objects, "Service", "my-vllm").getJsonObject("spec").getJsonArray("ports")))
                .containsExactly("http");

        // the alerts, as rules.yml has them (a copy inside the overlay: kustomize loads no file outside it)
        only(objects, "PrometheusRule");
        OpsTools.nodeValidate("rules-sync", RULES.toString(), file.toString(),
                KUSTOMIZE.resolve("add-to-existing/prometheusrule.yaml").toString())
                .assertOk("PrometheusRule == rules.yml (run deploy/prometheus/sync.sh)");
        assertThat(Files.readString(KUSTOMIZE.resolve("add-to-existing/prometheusrule.yaml")))
                .as("deploy/prometheus/sync.sh writes both copies the same")
                .isEqualTo(Files.readString(KUSTOMIZE.resolve("prometheusrule.yaml")));
    }

    @Test
    void containerImagesRunAsTheUserTheManifestsExpect() throws Exception {
        for (String dockerfile : new String[] {"Dockerfile.jvm", "Dockerfile.native"}) {
            String text = Files.readString(OpsTools.ROOT.resolve("sidecar/src/main/docker/" + dockerfile));
            assertThat(text).as(dockerfile).contains("USER 185", "EXPOSE 8080 9000")
                    .doesNotContain("USER root", "USER 0");
        }
        assertThat(Files.readString(OpsTools.ROOT.resolve("sidecar/src/main/docker/Dockerfile.jvm")))
                .contains("COPY --chown=185 target/quarkus-app/lib/ /deployments/lib/",
                        "/deployments/quarkus-run.jar");
        assertThat(Files.readString(KUSTOMIZE.resolve("deployment.yaml"))).contains("runAsUser: 185");
        assertThat(Files.readString(OpsTools.ROOT.resolve("charts/llm-sidecar/values.yaml"))).contains("runAsUser: 185");
    }

    /**
     * One set of JVM flags: the launcher argument file the image runs is the one bench/run measures, and neither the
     * chart nor the manifests size the heap or pick a collector of their own.
     */
    @Test
    void theImageAndTheBenchmarkRunTheSameJvmFlags() throws Exception {
        Path options = OpsTools.ROOT.resolve("sidecar/src/main/jvm/jvm.options");
        Process java = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + options, "-version").redirectErrorStream(true).start();
        String version = new String(java.getInputStream().readAllBytes());
        assertThat(java.waitFor()).as("java @jvm.options -version: %s", version).isZero();
        List<String> flags = Files.readAllLines(options).stream().map(l -> l.replaceAll("#.*", "").trim())
                .filter(l -> !l.isEmpty()).toList();
        String xmx = flags.stream().filter(f -> f.startsWith("-Xmx")).findFirst().orElseThrow();
        assertThat(flags).as("a fixed heap, not one sized from the container limit")
                .contains("-Xms" + xmx.substring(4)).noneMatch(f -> f.contains("RAMPercentage"));

        String dockerfile = Files.readString(OpsTools.ROOT.resolve("sidecar/src/main/docker/Dockerfile.jvm"));
        assertThat(dockerfile).contains("COPY --chown=185 src/main/jvm/jvm.options /deployments/jvm.options",
                "exec java @/deployments/jvm.options ", "$JAVA_OPTS_APPEND -jar /deployments/quarkus-run.jar",
                "COPY --chown=185 src/main/jvm/jvm.env /deployments/jvm.env",
                "set -a; . /deployments/jvm.env; set +a; exec java");
        // the environment file: shell lines the entrypoint sources, each one a default a pod's own value overrides
        for (String line : Files.readAllLines(OpsTools.ROOT.resolve("sidecar/src/main/jvm/jvm.env"))) {
            if (!line.isBlank() && !line.startsWith("#")) {
                assertThat(line).matches("([A-Z_]+)=\\$\\{\\1:-[^}]+}");
            }
        }
        assertThat(dockerfile.lines().filter(l -> !l.startsWith("#")))
                .noneMatch(l -> l.contains("run-java.sh") || l.contains("JAVA_MAX_MEM_RATIO"));
        assertThat(Files.readString(OpsTools.ROOT.resolve("tools/src/main/java/dev/llmsidecar/bench/Bench.java")))
                .contains("\"sidecar/src/main/jvm/jvm.options\"", "\"sidecar/src/main/jvm/jvm.env\"");
        // the build context: .dockerignore excludes everything but what it re-includes
        List<PathMatcher> included = Files.readAllLines(OpsTools.ROOT.resolve("sidecar/.dockerignore")).stream()
                .filter(l -> l.startsWith("!"))
                .map(l -> FileSystems.getDefault().getPathMatcher("glob:" + l.substring(1))).toList();
        for (String image : new String[] {"Dockerfile.jvm", "Dockerfile.native"}) {
            for (String line : Files.readAllLines(OpsTools.ROOT.resolve("sidecar/src/main/docker/" + image))) {
                if (!line.startsWith("COPY ")) {
                    continue;
                }
                String[] words = line.split("\\s+");
                // a directory source is in the context when the directory is; a glob source, when a file it names is
                String source = words[words.length - 2].replaceAll("/$", "").replace("*", "example");
                assertThat(included).as("%s: .dockerignore keeps %s in the build context", image, source)
                        .anyMatch(m -> m.matches(Path.of(source)));
            }
        }
        try (var files = Files.walk(OpsTools.ROOT.resolve("deploy"))) {
            for (Path yaml : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
                assertThat(Files.readString(yaml)).as(yaml.toString())
                        .doesNotContain("-Xmx", "JAVA_MAX_MEM_RATIO", "JAVA_OPTS", "RAMPercentage");
            }
        }
    }
}
