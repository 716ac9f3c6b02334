package dev.llmsidecar.measure;

import dev.llmsidecar.config.SidecarConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The {@code priority} label of a request (sidecar.priority): the scheduling priority vLLM reads from the request
 * body's {@code priority} member, else a configured header, bounded by an allowlist of integers. A priority outside
 * it is {@value #OTHER}; a request that names none is {@value #NONE_NAMED} (the engine's default, 0 for vLLM, is not
 * assumed: an engine without priority scheduling ignores the field). Label values are made once, so a request costs
 * a map lookup and no allocation.
 */
public final class PriorityLabels {

    /** The value every request gets while the label is off (the recorders drop it from every series). */
    public static final String OFF = "";
    public static final String NONE_NAMED = "none";
    public static final String OTHER = "other";
    /** Longest header value read as a priority; longer is "other" without parsing. */
    private static final int MAX_LENGTH = 11;

    private final boolean enabled;
    private final String header;
    private final Map<Integer, String> labels = new HashMap<>();

    public PriorityLabels(SidecarConfig.Priority config) {
        this(config.enabled(), config.header(), config.values());
    }

    PriorityLabels(boolean enabled, Optional<String> header, List<Integer> values) {
        this.enabled = enabled;
        this.header = header.map(String::trim).filter(h -> !h.isEmpty()).orElse(null);
        if (enabled && values.size() > 32) {
            throw new IllegalArgumentException("sidecar.priority.values: at most 32 values (a label value each): "
                    + values.size());
        }
        for (Integer v : values) {
            labels.put(v, Integer.toString(v));
        }
    }

    public boolean enabled() {
        return enabled;
    }

    /**
     * The label of a request.
     *
     * @param bodyPriority the body's {@code priority} member (an integer), or null when it has none or was not read
     * @param headers header lookup (case-insensitive, null when absent)
     */
    public String label(Integer bodyPriority, UnaryOperator<String> headers) {
        if (!enabled) {
            return OFF;
        }
        if (bodyPriority != null) {
            return of(bodyPriority);
        }
        String value = header == null ? null : headers.apply(header);
        if (value == null) {
            return NONE_NAMED;
        }
        Integer parsed = parse(value.trim());
        return parsed == null ? OTHER : of(parsed);
    }

    private String of(int priority) {
        String label = labels.get(priority);
        return label == null ? OTHER : label;
    }

    /** A decimal integer (optional sign), or null. */
    static Integer parse(String s) {
        if (s.isEmpty() || s.length() > MAX_LENGTH) {
            return null;
        }
        int start = s.charAt(0) == '-' || s.charAt(0) == '+' ? 1 : 0;
        if (start == s.length()) {
            return null;
        }
        for (int i = start; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return null;
            }
        }
        try {
            return Integer.valueOf(s);
        } catch (NumberFormatException e) {
            return null; // out of int range
        }
    }
}
