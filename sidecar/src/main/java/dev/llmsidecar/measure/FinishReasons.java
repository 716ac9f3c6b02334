package dev.llmsidecar.measure;

import java.util.Set;

/** Bounds the finish_reason label to the values servers document; anything else is "other". */
final class FinishReasons {

    private static final Set<String> KNOWN = Set.of("stop", "length", "tool_calls", "content_filter",
            "function_call", "abort", "error");

    private FinishReasons() {
    }

    /** Every label value, "none" and "other" included. */
    static java.util.List<String> labels() {
        java.util.List<String> all = new java.util.ArrayList<>(new java.util.TreeSet<>(KNOWN));
        all.add("none");
        all.add("other");
        return all;
    }

    static String label(String reason) {
        if (reason == null) {
            return "none";
        }
        return KNOWN.contains(reason) ? reason : "other";
    }
}
