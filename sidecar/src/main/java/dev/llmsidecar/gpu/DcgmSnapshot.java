package dev.llmsidecar.gpu;

import java.util.List;

/**
 * What one scrape of the DCGM exporter said.
 *
 * @param recognised whether the answer had any of the DCGM fields the sidecar reads (else it is not a DCGM exporter,
 *                   or one configured without them)
 * @param podLabels  whether any of those samples carried a pod label (the exporter's Kubernetes mapping is on)
 * @param gpus       the GPUs selected (this pod's, or every one for {@code pod=*}), in GPU order
 */
public record DcgmSnapshot(boolean recognised, boolean podLabels, List<GpuReading> gpus) {

    public DcgmSnapshot {
        gpus = List.copyOf(gpus);
    }
}
