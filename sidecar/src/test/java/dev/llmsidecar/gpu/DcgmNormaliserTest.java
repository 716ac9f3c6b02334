package dev.llmsidecar.gpu;

import static dev.llmsidecar.gpu.GpuSamples.KUBERNETES;
import static dev.llmsidecar.gpu.GpuSamples.MIB;
import static dev.llmsidecar.gpu.GpuSamples.NO_POD_LABELS;
import static dev.llmsidecar.gpu.GpuSamples.OTHER_POD;
import static dev.llmsidecar.gpu.GpuSamples.POD;
import static dev.llmsidecar.gpu.GpuSamples.samples;
import static dev.llmsidecar.gpu.GpuSamples.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Normalisation of dcgm-exporter answers, plain Java, from the recorded-format fixtures. */
class DcgmNormaliserTest {

    static DcgmSnapshot normalise(String pod, String exposition) {
        return new DcgmNormaliser(pod).normalise(samples(exposition));
    }

    static List<String> gpus(DcgmSnapshot s) {
        return s.gpus().stream().map(GpuReading::gpu).toList();
    }

    @Test
    void thisPodsGpusWithExactValues() {
        DcgmSnapshot s = normalise(POD, text(KUBERNETES));
        assertThat(s.recognised()).isTrue();
        assertThat(s.podLabels()).isTrue();
        assertThat(s.gpus()).containsExactly(
                // DCGM_FI_DEV_GPU_UTIL 87 %, FB_USED 73460 MiB, FB_FREE 7893 MiB, POWER_USAGE 312.448000 W
                new GpuReading("0", 0.87, 73460 * MIB, 73460.0 / (73460 + 7893), 312.448),
                new GpuReading("1", 0.91, 73458 * MIB, 73458.0 / (73458 + 7895), 327.905));
    }

    @Test
    void anotherPodGetsOnlyItsOwnGpu() {
        DcgmSnapshot s = normalise(OTHER_POD, text(KUBERNETES));
        assertThat(s.gpus()).containsExactly(new GpuReading("2", 0.34, 20514 * MIB, 20514.0 / (20514 + 60839),
                141.22));
    }

    @Test
    void thePodLabelMustMatchExactly() {
        String exposition = text(KUBERNETES);
        assertThat(normalise("vllm-llama-70b", exposition).gpus()).as("a prefix").isEmpty();
        assertThat(normalise(POD.toUpperCase(), exposition).gpus()).as("case").isEmpty();
        assertThat(normalise("llm-serving", exposition).gpus()).as("the namespace").isEmpty();
        assertThat(normalise("vllm", exposition).gpus()).as("the container").isEmpty();
        assertThat(normalise("gpu-node-a7", exposition).gpus()).as("the node").isEmpty();
        assertThat(normalise(" " + POD + "\n", exposition).gpus()).as("surrounding blanks are not part of it")
                .hasSize(2);
    }

    @Test
    void starTakesEveryGpuOfTheNodeIdleOnesIncluded() {
        for (String file : List.of(KUBERNETES, NO_POD_LABELS)) {
            DcgmSnapshot s = normalise("*", text(file));
            assertThat(gpus(s)).as(file).containsExactly("0", "1", "2", "3");
            // GPU 3: no pod holds it; idle, its framebuffer empty
            assertThat(s.gpus().get(3)).isEqualTo(new GpuReading("3", 0.0, 0.0, 0.0, 61.077));
        }
    }

    @Test
    void withoutPodLabelsNoGpuMatchesANamedPod() {
        DcgmSnapshot s = normalise(POD, text(NO_POD_LABELS));
        assertThat(s.recognised()).isTrue();
        assertThat(s.podLabels()).isFalse();
        assertThat(s.gpus()).isEmpty();
    }

    @Test
    void withoutAPodNothingMatches() {
        for (String pod : new String[] {null, "", "  "}) {
            DcgmNormaliser n = new DcgmNormaliser(pod);
            assertThat(n.pod()).isNull();
            DcgmSnapshot s = n.normalise(samples(text(KUBERNETES)));
            assertThat(s.recognised()).isTrue();
            assertThat(s.gpus()).isEmpty();
        }
    }

    @Test
    void garbageIsNotRecognised() {
        for (String body : List.of("", "<html><body>It works!</body></html>\n\u0000\u0001 binary \uFFFD\n",
                "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n",
                "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",pod=\"" + POD + "\" 87\n", // unterminated label set
                "vllm:num_requests_running{model_name=\"m\"} 1\nDCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 1410\n")) {
            DcgmSnapshot s = normalise(POD, body);
            assertThat(s.recognised()).as(body).isFalse();
            assertThat(s.gpus()).isEmpty();
        }
    }

    @Test
    void valuesOutOfRangeAreUnknownNotWrong() {
        String exposition = """
                DCGM_FI_DEV_GPU_UTIL{gpu="0",pod="p"} 150
                DCGM_FI_DEV_FB_USED{gpu="0",pod="p"} 9223372036854775794
                DCGM_FI_DEV_FB_FREE{gpu="0",pod="p"} 1000
                DCGM_FI_DEV_POWER_USAGE{gpu="0",pod="p"} 140737488355328.000000
                DCGM_FI_DEV_GPU_UTIL{gpu="1",pod="p"} -1
                DCGM_FI_DEV_FB_USED{gpu="1",pod="p"} NaN
                DCGM_FI_DEV_FB_FREE{gpu="1",pod="p"} 1000
                DCGM_FI_DEV_POWER_USAGE{gpu="1",pod="p"} +Inf
                DCGM_FI_DEV_FB_USED{gpu="2",pod="p"} 0
                DCGM_FI_DEV_FB_FREE{gpu="2",pod="p"} 0
                """;
        DcgmSnapshot s = normalise("p", exposition);
        double nan = Double.NaN;
        assertThat(s.gpus()).containsExactly(new GpuReading("0", nan, nan, nan, nan),
                new GpuReading("1", nan, nan, nan, nan), new GpuReading("2", nan, 0.0, nan, nan));
    }

    @Test
    void linesWithoutAUsableGpuIndexAreSkipped() {
        String exposition = """
                DCGM_FI_DEV_GPU_UTIL{pod="p"} 10
                DCGM_FI_DEV_GPU_UTIL{gpu="",pod="p"} 20
                DCGM_FI_DEV_GPU_UTIL{gpu="GPU-9b2f4c1e",pod="p"} 30
                DCGM_FI_DEV_GPU_UTIL{gpu="123456",pod="p"} 40
                DCGM_FI_DEV_GPU_UTIL{gpu="4",GPU_I_ID="x",pod="p"} 50
                DCGM_FI_DEV_GPU_UTIL{gpu="5",pod="p"} 60
                """;
        DcgmSnapshot s = normalise("p", exposition);
        assertThat(s.recognised()).isTrue();
        assertThat(gpus(s)).containsExactly("5");
    }

    @Test
    void migInstancesAreGpusOfTheirOwnWithTheEngineActiveRatio() {
        // dcgm-exporter writes GPU_I_PROFILE and GPU_I_ID on a MIG instance's lines; GPU_UTIL is not reported there
        String exposition = """
                DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-3c7e",pci_bus_id="00000000:0F:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",Hostname="n",container="vllm",namespace="ns",pod="p"} 0.420000
                DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-3c7e",pci_bus_id="00000000:0F:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="2",Hostname="n",container="x",namespace="ns",pod="q"} 0.900000
                DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-3c7e",pci_bus_id="00000000:0F:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",Hostname="n",container="vllm",namespace="ns",pod="p"} 30000
                DCGM_FI_DEV_FB_FREE{gpu="1",UUID="GPU-3c7e",pci_bus_id="00000000:0F:00.0",device="nvidia1",modelName="NVIDIA A100-SXM4-80GB",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",Hostname="n",container="vllm",namespace="ns",pod="p"} 10000
                """;
        DcgmSnapshot s = normalise("p", exposition);
        assertThat(s.gpus()).containsExactly(new GpuReading("1.1", 0.42, 30000 * MIB, 0.75, Double.NaN));
        assertThat(gpus(normalise("*", exposition))).containsExactly("1.1", "1.2");
    }

    @Test
    void gpuUtilWinsOverTheEngineActiveRatio() {
        DcgmSnapshot s = normalise("*", """
                DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0"} 0.5
                DCGM_FI_DEV_GPU_UTIL{gpu="0"} 100
                """);
        assertThat(s.gpus().get(0).utilization()).isEqualTo(1.0);
    }

    @Test
    void theOldPodLabelNameWorksToo() {
        // dcgm-exporter --use-old-namespace: pod_name, pod_namespace, container_name
        DcgmSnapshot s = normalise("p", """
                DCGM_FI_DEV_GPU_UTIL{gpu="0",uuid="GPU-1",container_name="c",pod_name="p",pod_namespace="ns"} 25
                DCGM_FI_DEV_GPU_UTIL{gpu="1",uuid="GPU-2",container_name="c",pod_name="other",pod_namespace="ns"} 75
                """);
        assertThat(s.podLabels()).isTrue();
        assertThat(s.gpus()).extracting(GpuReading::gpu, GpuReading::utilization).containsExactly(
                org.assertj.core.groups.Tuple.tuple("0", 0.25));
    }

    @Test
    void anEmptyPodLabelIsNoPod() {
        // older exporters wrote pod="" on GPUs no pod holds
        DcgmSnapshot s = normalise("p", """
                DCGM_FI_DEV_GPU_UTIL{gpu="0",container="",namespace="",pod=""} 5
                DCGM_FI_DEV_GPU_UTIL{gpu="1",container="c",namespace="ns",pod="p"} 6
                """);
        assertThat(gpus(s)).containsExactly("1");
    }

    @Test
    void gpusInNumericOrderAndTheFirstLineOfAGpuWins() {
        DcgmSnapshot s = normalise("*", """
                DCGM_FI_DEV_GPU_UTIL{gpu="10"} 10
                DCGM_FI_DEV_GPU_UTIL{gpu="2"} 20
                DCGM_FI_DEV_GPU_UTIL{gpu="1",GPU_I_ID="3"} 13
                DCGM_FI_DEV_GPU_UTIL{gpu="1"} 1
                DCGM_FI_DEV_GPU_UTIL{gpu="2",pod="a"} 99
                """);
        assertThat(s.gpus()).extracting(GpuReading::gpu, GpuReading::utilization).containsExactly(
                org.assertj.core.groups.Tuple.tuple("1", 0.01), org.assertj.core.groups.Tuple.tuple("1.3", 0.13),
                org.assertj.core.groups.Tuple.tuple("2", 0.2), org.assertj.core.groups.Tuple.tuple("10", 0.1));
    }

    @Test
    void onlyTheFieldsItReadsAreKeptByTheParser() {
        assertThat(samples(text(KUBERNETES))).extracting(s -> s.name()).containsOnly(
                "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
                "DCGM_FI_DEV_POWER_USAGE").hasSize(5 * 4);
        assertThat(dev.llmsidecar.engine.ExpositionParser.parse(text(KUBERNETES)).rejectedLines()).isZero();
    }
}
