package dev.llmsidecar.slo;

import java.util.List;
import java.util.regex.Pattern;

/**
 * One named objective, compiled from configuration. A threshold of -1 is not checked.
 *
 * @param modelGlobs globs on the request's model name
 * @param sloClass class name, or "*"
 * @param itlQuantile quantile of the request's own ITL samples compared with itlNanos
 * @param target share of requests that must be good (exported; used by burn-rate alerts)
 * @param ttftNonStreaming the TTFT threshold also judges responses that do not stream (whose TTFT is their E2E)
 */
public record Objective(String name, List<Pattern> modelGlobs, String sloClass, long ttftNanos, long tpotNanos,
        long e2eNanos, long itlNanos, double itlQuantile, double target, boolean ttftNonStreaming) {

    public Objective(String name, List<Pattern> modelGlobs, String sloClass, long ttftNanos, long tpotNanos,
            long e2eNanos, long itlNanos, double itlQuantile, double target) {
        this(name, modelGlobs, sloClass, ttftNanos, tpotNanos, e2eNanos, itlNanos, itlQuantile, target, false);
    }

    public boolean appliesTo(String model, String requestClass) {
        if (!sloClass.equals("*") && !sloClass.equals(requestClass)) {
            return false;
        }
        String m = model == null ? "" : model;
        for (Pattern glob : modelGlobs) {
            if (glob.matcher(m).matches()) {
                return true;
            }
        }
        return false;
    }

    /** Turns "llama-*,qwen?" into patterns: '*' any run, '?' one character, everything else literal. */
    static List<Pattern> globs(String spec) {
        return java.util.Arrays.stream(spec.split(",")).map(String::trim).filter(s -> !s.isEmpty())
                .map(Objective::glob).toList();
    }

    private static Pattern glob(String glob) {
        StringBuilder regex = new StringBuilder();
        StringBuilder literal = new StringBuilder();
        for (char c : glob.toCharArray()) {
            if (c == '*' || c == '?') {
                if (literal.length() > 0) {
                    regex.append(Pattern.quote(literal.toString()));
                    literal.setLength(0);
                }
                regex.append(c == '*' ? ".*" : ".");
            } else {
                literal.append(c);
            }
        }
        if (literal.length() > 0) {
            regex.append(Pattern.quote(literal.toString()));
        }
        return Pattern.compile(regex.toString());
    }
}
