package dev.llmsidecar.sweep;

import java.util.List;

/**
 * A finished sweep.
 *
 * @param options what was run
 * @param steps in run order
 * @param knee the knee over the step medians (docs/slo-guide.md section 7's criterion)
 * @param sidecarKnee {@code llm_sidecar_saturation_knee_requests} after the last step (NaN: none seen)
 * @param goodput goodput at the SLO (null without --slo)
 * @param ttftBounds the sidecar's TTFT bucket bounds (the precision the percentiles have)
 * @param perTokenBounds the sidecar's TPOT/ITL bucket bounds
 * @param sloObjectives objectives the sidecar exports (names), for the report
 * @param shapes how request lengths were drawn
 * @param notes what a trace replay took from the trace and how its prompts were calibrated (empty otherwise)
 * @param startedAt ISO time the sweep began
 * @param seconds wall time of the sweep
 * @param warnings anything the reader should know (drain timeouts, counter oddities)
 */
public record SweepResult(SweepOptions options, List<StepResult> steps, SweepAnalysis.Knee knee, double sidecarKnee,
        SweepAnalysis.Goodput goodput, double[] ttftBounds, double[] perTokenBounds, List<String> sloObjectives,
        String shapes, List<String> notes, String startedAt, double seconds, List<String> warnings) {
}
