package dev.llmsidecar.slo;

import dev.llmsidecar.config.SidecarConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/** The configured objectives, and which apply to a request (model name x SLO class). */
public final class SloPolicy {

    private static final int MAX_CACHED = 4096;

    private final List<Objective> objectives;
    private final List<String> classes;
    private final String classHeader;
    private final java.util.Set<Integer> badClientStatuses;
    private final Map<String, List<Objective>> applicable = new ConcurrentHashMap<>();
    private final DeclaredTargets declared;

    public SloPolicy(SidecarConfig.Slo config) {
        this.classHeader = config.classHeader();
        this.classes = List.copyOf(config.classes());
        this.badClientStatuses = java.util.Set.copyOf(config.badClientStatuses());
        List<Objective> list = new ArrayList<>();
        new TreeMap<>(config.objectives()).forEach((name, o) -> list.add(new Objective(name,
                Objective.globs(o.models()), o.sloClass(), nanos(o.ttft()), nanos(o.tpot()), nanos(o.e2e()),
                nanos(o.itl()), o.itlQuantile(), o.target(), o.ttftNonStreaming())));
        this.objectives = List.copyOf(list);
        this.declared = new DeclaredTargets(config.declared());
        for (Objective o : objectives) {
            if (o.name().startsWith(DeclaredTargets.PREFIX)) {
                throw new IllegalArgumentException("sidecar.slo.objectives." + o.name() + ": names starting with "
                        + DeclaredTargets.PREFIX + " are the declared targets' buckets");
            }
        }
        if (declared.enabled() && classes.contains(DeclaredTargets.SLO_CLASS)) {
            throw new IllegalArgumentException("sidecar.slo.classes: \"" + DeclaredTargets.SLO_CLASS + "\" is the "
                    + "class of requests that declare their targets (sidecar.slo.declared.enabled)");
        }
    }

    private static long nanos(Optional<Duration> d) {
        return d.map(Duration::toNanos).orElse(-1L);
    }

    /** The configured objectives. */
    public List<Objective> objectives() {
        return objectives;
    }

    /** The configured objectives and, when targets may be declared, one per declared bucket. */
    public List<Objective> allObjectives() {
        List<Objective> all = new ArrayList<>(objectives);
        all.addAll(declared.bucketObjectives());
        return all;
    }

    /** Targets requests declare in their headers (sidecar.slo.declared). */
    public DeclaredTargets declared() {
        return declared;
    }

    /** Upstream 4xx statuses that count as bad (sidecar.slo.bad-client-statuses). */
    public java.util.Set<Integer> badClientStatuses() {
        return badClientStatuses;
    }

    public String classHeader() {
        return classHeader;
    }

    /** The bounded SLO class for a header value: allowlisted values pass, anything else is the default class. */
    public String sloClass(String headerValue) {
        if (headerValue != null && classes.contains(headerValue)) {
            return headerValue;
        }
        return classes.isEmpty() ? "default" : classes.get(0);
    }

    public List<Objective> applicable(String model, String sloClass) {
        String key = sloClass + '\0' + model;
        List<Objective> cached = applicable.get(key);
        if (cached != null) {
            return cached;
        }
        List<Objective> result = objectives.stream().filter(o -> o.appliesTo(model, sloClass)).toList();
        if (applicable.size() < MAX_CACHED) {
            // model names come from clients: cache a bounded number, compute the rest
            applicable.put(key, result);
        }
        return result;
    }

    /** Every threshold in seconds, so that it can also be a histogram bucket boundary. */
    public List<Double> thresholdsSeconds() {
        List<Double> t = new ArrayList<>();
        // the configured objectives only: declared buckets are judged by counters, and their ~14 bounds would widen
        // every classic histogram for nothing
        for (Objective o : objectives) {
            for (long n : new long[] {o.ttftNanos(), o.tpotNanos(), o.e2eNanos(), o.itlNanos()}) {
                if (n >= 0) {
                    t.add(n / 1e9);
                }
            }
        }
        return t;
    }
}
