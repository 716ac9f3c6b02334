package dev.llmsidecar.otel;

import dev.llmsidecar.metrics.otlp.OtelHistogramProducer;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.exporter.otlp.internal.OtlpSpanExporterProvider;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.metrics.Aggregation;
import io.opentelemetry.sdk.metrics.InstrumentSelector;
import io.opentelemetry.sdk.metrics.InstrumentType;
import io.opentelemetry.sdk.metrics.View;
import io.opentelemetry.sdk.trace.SdkTracerProviderBuilder;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * The OpenTelemetry SDK of the sidecar, configured by the standard {@code OTEL_*} environment variables and
 * {@code otel.*} / {@code quarkus.otel.*} properties (SDK autoconfigure). Off unless an OTLP endpoint is set or
 * {@code otel.sdk.disabled=false}: a sidecar must not retry a collector that nobody runs.
 *
 * <p>Spans go through a {@link BoundedSpanProcessor} (drops counted on the Prometheus side); metric exports are
 * counted by {@link CountingMetricExporter}. Histograms aggregated elsewhere (the engine's own) are exported through
 * {@link #producedHistograms()}, registered on the meter provider as it is built. A configuration the SDK rejects
 * disables OTLP with one error line, never the proxy.
 */
public final class OtelPipeline implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(OtelPipeline.class);

    /** The instrumentation scope of the sidecar's metrics. */
    public static final String METER_NAME = "dev.llmsidecar";

    private final OpenTelemetrySdk sdk;
    private final boolean enabled;
    private final OtelHistogramProducer produced;
    private final java.util.List<String> semconvOptIn;

    private OtelPipeline(OpenTelemetrySdk sdk, boolean enabled, OtelHistogramProducer produced,
            java.util.List<String> semconvOptIn) {
        this.sdk = sdk;
        this.enabled = enabled;
        this.produced = produced;
        this.semconvOptIn = java.util.List.copyOf(semconvOptIn);
    }

    public static OtelPipeline disabled() {
        return new OtelPipeline(null, false, new OtelHistogramProducer(METER_NAME), java.util.List.of());
    }

    /** With explicit-bucket histograms. */
    public static OtelPipeline create(Map<String, String> settings, PrometheusRegistry registry) {
        return create(settings, registry, Histograms.EXPLICIT);
    }

    /**
     * How the sidecar's own OTLP histograms are aggregated ({@code sidecar.metrics.otlp-histograms}): with the
     * contract's bounds as explicit buckets, or as base-2 exponential histograms of at most {@code maxBuckets}
     * buckets (the SDK picks the finest scale that fits, up to 20).
     */
    public record Histograms(boolean exponential, int maxBuckets) {
        public static final Histograms EXPLICIT = new Histograms(false, 160);

        /** From the setting's value: explicit or exponential (case-insensitive). */
        public static Histograms of(String aggregation, int maxBuckets) {
            return switch (aggregation.trim().toLowerCase(Locale.ROOT)) {
                case "explicit" -> new Histograms(false, maxBuckets);
                case "exponential" -> new Histograms(true, maxBuckets);
                default -> throw new IllegalArgumentException(
                        "sidecar.metrics.otlp-histograms must be explicit or exponential: " + aggregation);
            };
        }
    }

    /**
     * @param settings otel.* properties (lowest precedence: OTEL_* environment variables and otel.* system
     *     properties override them)
     * @param histograms the aggregation of the sidecar's histogram instruments
     */
    public static OtelPipeline create(Map<String, String> settings, PrometheusRegistry registry, Histograms histograms) {
        Map<String, String> defaults = new HashMap<>();
        defaults.put("otel.service.name", "llm-sidecar");
        defaults.put("otel.logs.exporter", "none");
        defaults.putAll(settings);
        boolean[] enabled = {false};
        String[] tracesExporter = {"none"};
        String[] metricsExporter = {"none"};
        java.util.List<String> optIn = new java.util.ArrayList<>();
        OtlpExportStats[] stats = {null};
        // registered on first use: with OTLP off the self-metrics do not exist
        java.util.function.Supplier<OtlpExportStats> exportStats =
                () -> stats[0] != null ? stats[0] : (stats[0] = new OtlpExportStats(registry));
        java.util.List<BoundedSpanProcessor> processors = new java.util.ArrayList<>();
        // a producer can only be registered while the meter provider is built; series are added to it later
        OtelHistogramProducer produced = new OtelHistogramProducer(METER_NAME);
        try {
            AutoConfiguredOpenTelemetrySdk auto = AutoConfiguredOpenTelemetrySdk.builder()
                    .addPropertiesSupplier(() -> defaults)
                    .addPropertiesCustomizer(config -> {
                        enabled[0] = isEnabled(config);
                        tracesExporter[0] = config.getString("otel.traces.exporter", "otlp").trim()
                                .toLowerCase(Locale.ROOT);
                        metricsExporter[0] = config.getString("otel.metrics.exporter", "otlp");
                        // OTEL_SEMCONV_STABILITY_OPT_IN (otel.semconv-stability.opt-in): see GenAiConventions
                        optIn.addAll(config.getList("otel.semconv-stability.opt-in"));
                        Map<String, String> overrides = new HashMap<>();
                        // spans are exported by our own bounded processor, built below
                        overrides.put("otel.traces.exporter", "none");
                        if (!enabled[0]) {
                            overrides.put("otel.sdk.disabled", "true");
                        }
                        return overrides;
                    })
                    .addTracerProviderCustomizer((builder, config) ->
                            withSpanExport(builder, config, tracesExporter[0], exportStats.get(), processors))
                    .addMetricExporterCustomizer((exporter, config) -> {
                        // OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE decides; the engine's histograms follow it
                        produced.temporality(exporter.getAggregationTemporality(InstrumentType.HISTOGRAM));
                        return new CountingMetricExporter(exporter, exportStats.get());
                    })
                    .addMeterProviderCustomizer((builder, config) -> {
                        builder.registerMetricProducer(produced);
                        if (histograms.exponential()) {
                            // a view wins over the instruments' explicit bucket advice, for this scope only
                            builder.registerView(InstrumentSelector.builder().setType(InstrumentType.HISTOGRAM)
                                    .setMeterName(METER_NAME).build(), View.builder().setAggregation(
                                    Aggregation.base2ExponentialBucketHistogram(histograms.maxBuckets(), 20)).build());
                        }
                        return builder;
                    })
                    .disableShutdownHook()
                    .build();
            if (!enabled[0]) {
                return disabled();
            }
            LOG.infof("OpenTelemetry on: traces exporter %s, metrics exporter %s", tracesExporter[0],
                    metricsExporter[0]);
            return new OtelPipeline(auto.getOpenTelemetrySdk(), true, produced, optIn);
        } catch (RuntimeException e) {
            LOG.errorf("OpenTelemetry configuration rejected, OTLP export is off: %s", e.getMessage());
            processors.forEach(BoundedSpanProcessor::shutdown);
            return disabled();
        }
    }

    private static boolean isEnabled(ConfigProperties config) {
        String disabled = config.getString("otel.sdk.disabled");
        if (disabled != null) {
            return !Boolean.parseBoolean(disabled.trim());
        }
        return config.getString("otel.exporter.otlp.endpoint") != null
                || config.getString("otel.exporter.otlp.traces.endpoint") != null
                || config.getString("otel.exporter.otlp.metrics.endpoint") != null;
    }

    private static SdkTracerProviderBuilder withSpanExport(SdkTracerProviderBuilder builder, ConfigProperties config,
            String exporterName, OtlpExportStats stats, java.util.List<BoundedSpanProcessor> created) {
        if (exporterName.equals("none")) {
            return builder;
        }
        if (!exporterName.equals("otlp")) {
            LOG.errorf("otel.traces.exporter=%s is not supported (otlp or none); spans are not exported",
                    exporterName);
            return builder;
        }
        var exporter = new OtlpSpanExporterProvider().createExporter(config);
        BoundedSpanProcessor processor = new BoundedSpanProcessor(exporter,
                config.getInt("otel.bsp.max.queue.size", 2048),
                config.getInt("otel.bsp.max.export.batch.size", 512),
                config.getDuration("otel.bsp.schedule.delay", Duration.ofMillis(5000)),
                config.getDuration("otel.bsp.export.timeout", Duration.ofMillis(30000)),
                stats);
        created.add(processor);
        return builder.addSpanProcessor(processor);
    }

    public boolean enabled() {
        return enabled;
    }

    /** The values of OTEL_SEMCONV_STABILITY_OPT_IN (or otel.semconv-stability.opt-in); empty when off or unset. */
    public java.util.List<String> semconvOptIn() {
        return semconvOptIn;
    }

    /** The SDK, or the no-op API when disabled. */
    public OpenTelemetry openTelemetry() {
        return sdk != null ? sdk : OpenTelemetry.noop();
    }

    /**
     * Where histograms aggregated elsewhere go (see {@code OtelRecorder(Meter, Buckets, OtelHistogramProducer)}):
     * registered on this pipeline's meter provider; when OTLP is off, a producer nobody reads.
     */
    public OtelHistogramProducer producedHistograms() {
        return produced;
    }

    /** Exports what is pending (bounded by the export timeouts). */
    public void flush() {
        if (sdk != null) {
            sdk.getSdkTracerProvider().forceFlush().join(10, TimeUnit.SECONDS);
            sdk.getSdkMeterProvider().forceFlush().join(10, TimeUnit.SECONDS);
        }
    }

    @Override
    public void close() {
        if (sdk != null) {
            sdk.shutdown().join(10, TimeUnit.SECONDS);
        }
    }
}
