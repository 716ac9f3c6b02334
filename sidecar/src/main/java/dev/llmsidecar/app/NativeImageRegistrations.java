package dev.llmsidecar.app;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Classes a native image must keep for reflection, registered here so that the logic that needs them stays free of
 * Quarkus (docs/native.md). client_java finds its protobuf writer by name ({@code PrometheusProtobufWriter} loads
 * {@code ...internal.PrometheusProtobufWriterImpl} with {@code Class.forName} and its constructor by reflection):
 * without it, /q/metrics would silently lack protobuf, the only format with native histograms.
 */
@RegisterForReflection(classNames = "io.prometheus.metrics.expositionformats.internal.PrometheusProtobufWriterImpl")
final class NativeImageRegistrations {

    private NativeImageRegistrations() {
    }
}
