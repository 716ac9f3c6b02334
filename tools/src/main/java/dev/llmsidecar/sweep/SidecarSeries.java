package dev.llmsidecar.sweep;

import java.util.HashMap;
import java.util.Map;

/** The sidecar's series the sweep reads (docs/metrics.md), and the label selections it reads them with. */
final class SidecarSeries {

    static final String TTFT = "gen_ai_server_time_to_first_token_seconds";
    static final String TPOT = "gen_ai_server_time_per_output_token_seconds";
    static final String ITL = "llm_sidecar_inter_token_latency_seconds";
    static final String E2E = "gen_ai_server_request_duration_seconds";
    static final String FIRST_RESPONSE_CHUNK = "llm_sidecar_time_to_first_response_chunk_seconds";
    static final String CHUNK_GAP = "gen_ai_client_operation_time_per_output_chunk_seconds";
    static final String REQUESTS = "llm_sidecar_requests_total";
    static final String TOKENS = "llm_sidecar_tokens_total";
    static final String SLO_REQUESTS = "llm_sidecar_slo_requests_total";
    static final String SLO_GOOD_REQUESTS = "llm_sidecar_slo_good_requests_total";
    static final String SLO_OUTPUT_TOKENS = "llm_sidecar_slo_output_tokens_total";
    static final String SLO_GOOD_OUTPUT_TOKENS = "llm_sidecar_slo_good_output_tokens_total";
    static final String SLO_OBJECTIVE_REQUESTS = "llm_sidecar_slo_objective_requests_total";
    static final String SLO_OBJECTIVE_GOOD = "llm_sidecar_slo_objective_good_requests_total";
    static final String SLO_TARGET = "llm_sidecar_slo_target_ratio";
    static final String KNEE = "llm_sidecar_saturation_knee_requests";
    static final String IN_FLIGHT = "llm_sidecar_requests_in_flight";

    private SidecarSeries() {
    }

    /** model, operation and streaming="true": the sweep's own requests. */
    static Map<String, String> streams(String model, String operation) {
        Map<String, String> m = new HashMap<>();
        m.put("model", model);
        m.put("operation", operation);
        m.put("streaming", "true");
        return m;
    }

    /** The same, successful requests only. */
    static Map<String, String> ok(String model, String operation) {
        Map<String, String> m = streams(model, operation);
        m.put("outcome", "ok");
        return m;
    }

    static Map<String, String> with(Map<String, String> base, String key, String value) {
        Map<String, String> m = new HashMap<>(base);
        m.put(key, value);
        return m;
    }
}
