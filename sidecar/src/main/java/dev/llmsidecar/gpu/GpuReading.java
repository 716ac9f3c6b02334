package dev.llmsidecar.gpu;

/**
 * One GPU's normalised reading from one scrape of the DCGM exporter; NaN for what the exporter did not report or
 * reported out of range (a DCGM "blank" sentinel, a utilisation over 100 %).
 *
 * @param gpu             the exporter's {@code gpu} label (the GPU's index on its node); for a MIG instance
 *                        {@code <gpu>.<GPU_I_ID>}
 * @param utilization     share of time the GPU was busy, 0..1
 * @param memoryUsedBytes framebuffer memory used, bytes
 * @param memoryUsedRatio framebuffer memory used / (used + free), 0..1
 * @param powerWatts      power draw, W
 */
public record GpuReading(String gpu, double utilization, double memoryUsedBytes, double memoryUsedRatio,
        double powerWatts) {
}
