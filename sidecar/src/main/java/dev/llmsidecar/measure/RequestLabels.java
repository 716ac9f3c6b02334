package dev.llmsidecar.measure;

import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Series;
import java.util.Objects;
import java.util.function.Function;

/**
 * The labels of one LLM request, each bounded by its source ({@link LabelSources}): built once by
 * {@link ExchangeRecorder} when the request's timeline starts (its body was inspected; its answer's head has arrived
 * at the latest) and passed whole to everything that records. A series takes the ones it declares, by name
 * ({@link #of(Series)}), so a new request label is a field here, its case in {@link #value}, and the series that
 * declare it in the contract. What only the result knows (streaming, outcome, end reason) is not here.
 *
 * @param model the bounded model label ({@link ModelLabels}); the model name objectives match on is not a label
 * @param operation gen_ai.operation.name
 * @param provider gen_ai.provider.name: the wire format's own, else the configured one
 * @param format the wire format's name
 * @param tenant {@link TenantLabels}; {@link TenantLabels#NONE} while tenants are off
 * @param priority {@link PriorityLabels}; {@link PriorityLabels#OFF} while the label is off
 * @param sloClass the SLO class: allowlisted, or the declared targets' own
 */
public record RequestLabels(String model, String operation, String provider, String format, String tenant,
        String priority, String sloClass) {

    public RequestLabels {
        // null is what value() says of a label the request does not have
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(format, "format");
        Objects.requireNonNull(tenant, "tenant");
        Objects.requireNonNull(priority, "priority");
        Objects.requireNonNull(sloClass, "sloClass");
    }

    /**
     * A request shed before its body was read: as the model the engine serves, with no tenant, priority or SLO class
     * (no objective judges it).
     */
    static RequestLabels shed(String model, String operation, String provider, String format) {
        return new RequestLabels(model, operation, provider, format, TenantLabels.NONE, PriorityLabels.OFF, "");
    }

    /** The request's value of {@code label}, or null when it is not a label of the request. */
    public Object value(Label label) {
        return switch (label) {
            case MODEL -> model;
            case OPERATION -> operation;
            case PROVIDER -> provider;
            case FORMAT -> format;
            case TENANT -> tenant;
            case PRIORITY -> priority;
            case SLO_CLASS -> sloClass;
            default -> null;
        };
    }

    /** The request's values of the labels {@code series} declares; the caller adds the series' other labels. */
    public LabelValues of(Series series) {
        LabelValues values = LabelValues.NONE;
        for (Label label : series.labels()) {
            Object value = value(label);
            if (value != null) {
                values = values.and(label, value);
            }
        }
        return values;
    }

    /**
     * Every label {@code series} declares: the request's own, and each other one from {@code others} (which may
     * give null for an OTLP-only attribute, and throws for a label it does not know).
     */
    public LabelValues of(Series series, Function<Label, Object> others) {
        LabelValues values = LabelValues.NONE;
        for (Label label : series.labels()) {
            Object value = value(label);
            values = values.and(label, value != null ? value : others.apply(label));
        }
        return values;
    }
}
