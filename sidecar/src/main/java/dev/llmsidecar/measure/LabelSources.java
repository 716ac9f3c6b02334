package dev.llmsidecar.measure;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.metrics.Label;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.wire.LlmOperation;
import java.util.List;
import java.util.Map;

/**
 * Where the values of a request's labels ({@link RequestLabels}) come from, each bounded: the model, tenant and
 * priority labels, and the provider a wire format does not name. The SLO class comes from the SLO policy.
 */
public final class LabelSources {

    private final ModelLabels models;
    private final TenantLabels tenants;
    private final PriorityLabels priorities;
    /** gen_ai.provider.name of the formats that name none (sidecar.otel.provider-name). */
    private final String provider;
    /** The series each optional label is exported on, for {@link Recorders}. */
    private final Map<Label, List<String>> optionalSeries;

    public LabelSources(SidecarConfig config) {
        this.tenants = new TenantLabels(config.tenants());
        Recorders.checkTenantSeries(config.tenants().series()); // also while tenants are off: a typo shows at once
        this.priorities = new PriorityLabels(config.priority());
        Recorders.checkSeries(Label.PRIORITY, config.priority().series());
        this.models = new ModelLabels(config.metrics().maxModels(),
                config.metrics().pinnedModels().orElse(List.of()));
        this.provider = config.otel().providerName();
        // the optional labels only where chosen, and nowhere while their feature is off
        this.optionalSeries = Map.of(
                Label.TENANT, tenants.enabled() ? config.tenants().series() : List.of(),
                Label.PRIORITY, priorities.enabled() ? config.priority().series() : List.of());
    }

    /** The model label's bound, which also knows the model the engine serves. */
    public ModelLabels models() {
        return models;
    }

    /** Who a request is from, as its bounded tenant label. */
    public TenantLabels tenants() {
        return tenants;
    }

    /** A request's scheduling priority, as its bounded priority label. */
    public PriorityLabels priorities() {
        return priorities;
    }

    /** gen_ai.provider.name of a request: its format's own, else the configured one. */
    public String provider(LlmOperation operation) {
        String own = operation.format().providerName();
        return own != null ? own : provider;
    }

    /** For each optional label, the series that export it ({@link Recorders#Recorders(List, Map)}). */
    public Map<Label, List<String>> optionalSeries() {
        return optionalSeries;
    }

    /** The labels of a request shed before its body was read: as the model the engine serves. */
    RequestLabels shed(LlmOperation operation) {
        return RequestLabels.shed(models.label(models.serving()), operation.label(), provider(operation),
                operation.format().name());
    }
}
