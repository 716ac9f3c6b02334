package dev.llmsidecar.gpu;

import dev.llmsidecar.engine.ExpositionParser.Sample;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns the samples of one NVIDIA DCGM exporter answer into normalised readings of the GPUs of one pod (plain Java,
 * no state between scrapes).
 *
 * <p>The names are dcgm-exporter's, from its {@code etc/default-counters.csv}: {@code DCGM_FI_DEV_GPU_UTIL} (%),
 * {@code DCGM_FI_PROF_GR_ENGINE_ACTIVE} (ratio, the utilisation where GPU_UTIL is missing, e.g. a MIG instance),
 * {@code DCGM_FI_DEV_FB_USED} and {@code DCGM_FI_DEV_FB_FREE} (MiB), {@code DCGM_FI_DEV_POWER_USAGE} (W). Each line
 * carries {@code gpu} (the index on the node), and with the exporter's Kubernetes mapping ({@code --kubernetes})
 * {@code pod}, {@code namespace}, {@code container} on the GPUs a pod holds ({@code pod_name} etc. with
 * {@code --use-old-namespace}); a GPU no pod holds has none of them.
 *
 * <p>Selection: a line is this pod's when its pod label equals the configured pod exactly; {@code "*"} takes every
 * GPU. Without any pod label in the answer (no Kubernetes mapping) no GPU matches a named pod. A MIG instance
 * ({@code GPU_I_ID} label) is its own GPU, {@code <gpu>.<GPU_I_ID>}. Where one GPU has several lines for a field
 * (shared GPUs), the first one wins: the exporter writes the device's own line before per-pod copies.
 */
public final class DcgmNormaliser {

    /** The pod setting that takes every GPU of the exporter. */
    public static final String EVERY_POD = "*";

    static final String GPU_UTIL = "DCGM_FI_DEV_GPU_UTIL";
    static final String GR_ENGINE_ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
    static final String FB_USED = "DCGM_FI_DEV_FB_USED";
    static final String FB_FREE = "DCGM_FI_DEV_FB_FREE";
    static final String POWER_USAGE = "DCGM_FI_DEV_POWER_USAGE";

    /** In field-index order. */
    private static final List<String> FIELDS = List.of(GPU_UTIL, GR_ENGINE_ACTIVE, FB_USED, FB_FREE, POWER_USAGE);
    private static final int UTIL = 0;
    private static final int GR = 1;
    private static final int USED = 2;
    private static final int FREE = 3;
    private static final int POWER = 4;

    private static final double MIB = 1024.0 * 1024.0;
    /** Larger framebuffers than 1 PiB are DCGM's blank sentinels (int64 ~9.2e18), not memory. */
    private static final double MAX_MIB = 1024.0 * 1024.0 * 1024.0;
    /** No GPU draws 100 kW; DCGM's double blank is 2^47. */
    private static final double MAX_WATTS = 100_000;
    private static final int MAX_INDEX_DIGITS = 4;

    /** GPU keys in numeric order: 0, 1, 2, 10, and a MIG instance 1.3 after 1. */
    static final Comparator<String> GPU_ORDER = Comparator.comparingInt((String k) -> part(k, 0))
            .thenComparingInt(k -> part(k, 1));

    private final String pod;

    /**
     * @param pod the pod whose GPUs to keep (exact match of the exporter's pod label); {@value #EVERY_POD}: every GPU;
     *            null or blank: none can match
     */
    public DcgmNormaliser(String pod) {
        this.pod = pod == null || pod.isBlank() ? null : pod.strip();
    }

    /** The pod this normaliser selects, {@value #EVERY_POD}, or null (none). */
    public String pod() {
        return pod;
    }

    public boolean everyPod() {
        return EVERY_POD.equals(pod);
    }

    /** For {@link dev.llmsidecar.engine.ExpositionParser#parse(String, java.util.function.Predicate)}. */
    public static boolean relevant(String name) {
        return FIELDS.contains(name);
    }

    public DcgmSnapshot normalise(List<Sample> samples) {
        boolean recognised = false;
        boolean podLabels = false;
        Map<String, double[]> byGpu = new TreeMap<>(GPU_ORDER);
        for (Sample s : samples) {
            int field = FIELDS.indexOf(s.name());
            if (field < 0) {
                continue;
            }
            recognised = true;
            String podLabel = podOf(s.labels());
            podLabels |= podLabel != null;
            if (!selected(podLabel)) {
                continue;
            }
            String gpu = gpuKey(s.labels());
            if (gpu == null) {
                continue;
            }
            double[] values = byGpu.computeIfAbsent(gpu, k -> {
                double[] v = new double[FIELDS.size()];
                Arrays.fill(v, Double.NaN);
                return v;
            });
            if (Double.isNaN(values[field])) {
                values[field] = s.value();
            }
        }
        List<GpuReading> gpus = new ArrayList<>(byGpu.size());
        byGpu.forEach((gpu, v) -> gpus.add(reading(gpu, v)));
        return new DcgmSnapshot(recognised, podLabels, gpus);
    }

    private boolean selected(String podLabel) {
        return pod != null && (everyPod() || pod.equals(podLabel));
    }

    private static GpuReading reading(String gpu, double[] v) {
        double util = within(v[UTIL], 0, 100) / 100;
        if (Double.isNaN(util)) {
            util = within(v[GR], 0, 1);
        }
        double used = within(v[USED], 0, MAX_MIB);
        double free = within(v[FREE], 0, MAX_MIB);
        double ratio = used + free > 0 ? used / (used + free) : Double.NaN; // NaN + anything stays NaN
        return new GpuReading(gpu, util, used * MIB, ratio, within(v[POWER], 0, MAX_WATTS));
    }

    /** The value when finite and in [min, max], else NaN. */
    private static double within(double value, double min, double max) {
        return value >= min && value <= max ? value : Double.NaN;
    }

    /** dcgm-exporter's pod label, or its 1.x name ({@code --use-old-namespace}); null when neither is there. */
    private static String podOf(Map<String, String> labels) {
        String p = labels.get("pod");
        return p != null ? p : labels.get("pod_name");
    }

    /** {@code gpu}, or {@code gpu.GPU_I_ID} for a MIG instance; null when not a small decimal index. */
    private static String gpuKey(Map<String, String> labels) {
        String gpu = labels.get("gpu");
        if (!isIndex(gpu)) {
            return null;
        }
        String instance = labels.get("GPU_I_ID");
        if (instance == null || instance.isEmpty()) {
            return gpu;
        }
        return isIndex(instance) ? gpu + "." + instance : null;
    }

    private static boolean isIndex(String s) {
        if (s == null || s.isEmpty() || s.length() > MAX_INDEX_DIGITS) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** Part {@code i} (0: the GPU, 1: the MIG instance, -1 when none) of a key made by {@link #gpuKey}. */
    private static int part(String key, int i) {
        int dot = key.indexOf('.');
        if (i == 0) {
            return Integer.parseInt(dot < 0 ? key : key.substring(0, dot));
        }
        return dot < 0 ? -1 : Integer.parseInt(key.substring(dot + 1));
    }
}
