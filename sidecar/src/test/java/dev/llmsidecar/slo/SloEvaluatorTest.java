package dev.llmsidecar.slo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.TestConfigs;
import dev.llmsidecar.timeline.ItlGrid;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.timeline.RequestTimeline;
import dev.llmsidecar.wire.Usage;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SloEvaluatorTest {

    static final long MS = 1_000_000L;

    static SloPolicy policy(Map<String, String> props) {
        return new SloPolicy(TestConfigs.sidecar("http://127.0.0.1:1", props).slo());
    }

    /** A stream: first token at ttftMs, then (tokens - 1) chunks every gapMs. */
    static RequestResult stream(long ttftMs, long gapMs, int tokens, Outcome outcome) {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        for (int i = 0; i < tokens; i++) {
            t.onTokenChunk((ttftMs + i * gapMs) * MS, false, -1);
        }
        t.onUsage(new Usage(10, tokens, -1));
        return t.finish((ttftMs + tokens * gapMs) * MS, outcome, 200);
    }

    final SloPolicy policy = policy(Map.of(
            "sidecar.slo.classes", "default,batch",
            "sidecar.slo.objectives.interactive.models", "llama-*, qwen?",
            "sidecar.slo.objectives.interactive.ttft", "PT0.3S",
            "sidecar.slo.objectives.interactive.tpot", "PT0.03S",
            "sidecar.slo.objectives.interactive.slo-class", "default",
            "sidecar.slo.objectives.tail.itl", "PT0.05S",
            "sidecar.slo.objectives.tail.itl-quantile", "0.9",
            "sidecar.slo.objectives.batch.e2e", "PT10S",
            "sidecar.slo.objectives.batch.slo-class", "batch",
            "sidecar.slo.objectives.batch.target", "0.95"));

    @Test
    void objectivesApplyByModelGlobAndClass() {
        assertThat(policy.applicable("llama-8b", "default")).extracting(Objective::name)
                .containsExactly("interactive", "tail");
        assertThat(policy.applicable("qwen7", "default")).extracting(Objective::name).contains("interactive");
        assertThat(policy.applicable("qwen77", "default")).extracting(Objective::name).containsExactly("tail");
        assertThat(policy.applicable("llama-8b", "batch")).extracting(Objective::name).containsExactly("batch", "tail");
        assertThat(policy.sloClass("batch")).isEqualTo("batch");
        assertThat(policy.sloClass("nope")).isEqualTo("default");
        assertThat(policy.sloClass(null)).isEqualTo("default");
        assertThat(policy.thresholdsSeconds()).containsExactlyInAnyOrder(10.0, 0.05, 0.3, 0.03);
        assertThat(policy.objectives().stream().filter(o -> o.name().equals("batch")).findFirst().orElseThrow().target())
                .isEqualTo(0.95);
    }

    @Test
    void goodOnlyWhenEveryApplicableObjectiveIsMet() {
        List<Objective> o = policy.applicable("llama-8b", "default");
        assertThat(SloEvaluator.evaluate(stream(200, 20, 10, Outcome.OK), o).good()).isTrue();
        SloVerdict slowStart = SloEvaluator.evaluate(stream(400, 20, 10, Outcome.OK), o);
        assertThat(slowStart.good()).isFalse();
        assertThat(slowStart.objectives().get(0).violated()).containsExactly(Criterion.TTFT);
        assertThat(slowStart.objectives().get(1).met()).isTrue();
        SloVerdict slowDecode = SloEvaluator.evaluate(stream(200, 60, 10, Outcome.OK), o);
        assertThat(slowDecode.objectives().get(0).violated()).containsExactly(Criterion.TPOT);
        assertThat(slowDecode.objectives().get(1).violated()).containsExactly(Criterion.ITL);
    }

    static RequestResult ended(Outcome outcome, int status, long ttftMs, long endMs) {
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        if (ttftMs >= 0) {
            t.onTokenChunk(ttftMs * MS, false, -1);
        }
        return t.finish(endMs * MS, outcome, status);
    }

    @Test
    void serverFailuresViolateEveryObjective() {
        List<Objective> o = policy.applicable("llama-8b", "default");
        for (RequestResult bad : List.of(stream(100, 10, 5, Outcome.UPSTREAM_BROKEN),
                ended(Outcome.UPSTREAM_ERROR, 500, -1, 20), ended(Outcome.UPSTREAM_ERROR, 502, -1, 1),
                ended(Outcome.UPSTREAM_ERROR, 200, 100, 150) /* an error inside a 200 stream */,
                ended(Outcome.UPSTREAM_ERROR, 429, -1, 5) /* turned away for lack of capacity */)) {
            SloVerdict v = SloEvaluator.evaluate(bad, o, Set.of(429));
            assertThat(v.counted()).isTrue();
            assertThat(v.good()).isFalse();
            assertThat(v.objectives()).allSatisfy(r -> assertThat(r.violated()).containsExactly(Criterion.ERROR));
        }
        // a request no objective applies to is reported as such, neither good nor bad in joint attainment
        SloVerdict unjudged = SloEvaluator.evaluate(stream(100, 10, 5, Outcome.OK), List.of());
        assertThat(unjudged.counted()).isFalse();
        assertThat(unjudged.excludedReason()).isEqualTo(SloVerdict.NO_OBJECTIVE);
    }

    @Test
    void aTtftObjectiveJudgesResponsesThatDoNotStreamOnlyWhereItSaysSo() {
        RequestTimeline t = new RequestTimeline(0, false, RequestTimeline.LiveListener.NONE);
        t.onTokenChunk(900 * MS, false, -1);
        t.onUsage(new Usage(10, 5, -1));
        RequestResult whole = t.finish(900 * MS, Outcome.OK, 200); // TTFT = E2E = 0.9 s
        List<Objective> o = policy.applicable("llama-8b", "default"); // TTFT 0.3 s / TPOT, ITL: nothing to judge it by
        SloVerdict unjudged = SloEvaluator.evaluate(whole, o);
        assertThat(unjudged.counted()).as("a whole response is not late to its first token, nor good unjudged")
                .isFalse();
        assertThat(unjudged.excludedReason()).isEqualTo(SloVerdict.NO_OBJECTIVE);
        // nor does its failure count under objectives that cannot judge it
        RequestTimeline failed = new RequestTimeline(0, false, RequestTimeline.LiveListener.NONE);
        assertThat(SloEvaluator.evaluate(failed.finish(50 * MS, Outcome.UPSTREAM_ERROR, 500), o).excludedReason())
                .isEqualTo(SloVerdict.NO_OBJECTIVE);
        // an E2E objective judges it, success and failure alike
        SloPolicy e2e = policy(Map.of("sidecar.slo.objectives.whole.e2e", "PT1S",
                "sidecar.slo.objectives.stream.ttft", "PT0.3S"));
        SloVerdict judgedByE2e = SloEvaluator.evaluate(whole, e2e.applicable("m", "default"));
        assertThat(judgedByE2e.good()).isTrue();
        assertThat(judgedByE2e.objectives()).extracting(r -> r.objective().name()).containsExactly("whole");
        SloPolicy strict = policy(Map.of("sidecar.slo.objectives.all.ttft", "PT0.3S",
                "sidecar.slo.objectives.all.ttft-non-streaming", "true"));
        SloVerdict judged = SloEvaluator.evaluate(whole, strict.applicable("m", "default"));
        assertThat(judged.good()).isFalse();
        assertThat(judged.objectives().get(0).violated()).containsExactly(Criterion.TTFT);
    }

    @Test
    void clientErrorsDoNotCountUnlessConfiguredBad() {
        List<Objective> o = policy.applicable("llama-8b", "default");
        for (int status : new int[] {400, 401, 404, 413, 422}) {
            SloVerdict v = SloEvaluator.evaluate(ended(Outcome.UPSTREAM_ERROR, status, -1, 5), o, Set.of(429));
            assertThat(v.counted()).as("%d", status).isFalse();
            assertThat(v.excludedReason()).isEqualTo(SloVerdict.CLIENT_ERROR);
        }
        assertThat(SloEvaluator.evaluate(ended(Outcome.UPSTREAM_ERROR, 400, -1, 5), o, Set.of(400, 429)).counted())
                .isTrue();
        assertThat(SloEvaluator.evaluate(ended(Outcome.UPSTREAM_ERROR, 429, -1, 5), o, Set.of()).counted()).isFalse();
        assertThat(policy.badClientStatuses()).containsExactly(429);
    }

    @Test
    void aCancellationCountsOnlyWhenTheWaitHadAlreadyBrokenAnObjective() {
        List<Objective> o = policy.applicable("llama-8b", "default"); // ttft 0.3 s, tpot 30 ms; tail: itl
        // the user pressed stop after a fast first token: not the server's fault, not counted
        SloVerdict stopped = SloEvaluator.evaluate(ended(Outcome.CLIENT_CANCELLED, 200, 100, 900), o, Set.of(429));
        assertThat(stopped.counted()).isFalse();
        assertThat(stopped.excludedReason()).isEqualTo(SloVerdict.CLIENT_CANCELLED);
        // gave up before any token, within the TTFT threshold: not counted either
        assertThat(SloEvaluator.evaluate(ended(Outcome.CLIENT_CANCELLED, 0, -1, 250), o, Set.of(429)).counted())
                .isFalse();
        // gave up after 2 s without a token: the TTFT objective was broken before the cancel
        SloVerdict gaveUp = SloEvaluator.evaluate(ended(Outcome.CLIENT_CANCELLED, 0, -1, 2000), o, Set.of(429));
        assertThat(gaveUp.counted()).isTrue();
        assertThat(gaveUp.good()).isFalse();
        assertThat(gaveUp.objectives().get(0).violated()).containsExactly(Criterion.TTFT);
        // a slow first token, then the cancel
        SloVerdict slowFirst = SloEvaluator.evaluate(ended(Outcome.CLIENT_CANCELLED, 200, 500, 600), o, Set.of(429));
        assertThat(slowFirst.objectives().get(0).violated()).containsExactly(Criterion.TTFT);
        // an E2E objective already passed at the cancel
        List<Objective> batch = policy.applicable("llama-8b", "batch");
        SloVerdict late = SloEvaluator.evaluate(ended(Outcome.CLIENT_CANCELLED, 200, 100, 12_000), batch, Set.of(429));
        assertThat(late.counted()).isTrue();
        assertThat(late.objectives().get(0).violated()).containsExactly(Criterion.E2E);
    }

    @Test
    void aSingleTokenMeetsTpotAndANoTokenStreamMissesTtft() {
        List<Objective> o = policy.applicable("llama-8b", "default");
        assertThat(SloEvaluator.evaluate(stream(100, 10, 1, Outcome.OK), o).good()).isTrue();
        RequestTimeline empty = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE);
        SloVerdict v = SloEvaluator.evaluate(empty.finish(50 * MS, Outcome.OK, 200), o);
        assertThat(v.objectives().get(0).violated()).containsExactly(Criterion.TTFT);
    }

    @Test
    void itlQuantileIsTokenWeightedNearestRank() {
        // 9 gaps of 10 ms and 1 gap of 100 ms: p90 = 10 ms, p99 = 100 ms; the thresholds are bounds of the grid, as
        // every SLO threshold is of the exported ITL buckets
        ItlGrid grid = ItlGrid.of(List.of(0.01, 0.1));
        RequestTimeline t = new RequestTimeline(0, true, RequestTimeline.LiveListener.NONE, grid);
        long at = 100;
        t.onTokenChunk(at * MS, false, -1);
        for (int i = 0; i < 9; i++) {
            at += 10;
            t.onTokenChunk(at * MS, false, -1);
        }
        at += 100;
        t.onTokenChunk(at * MS, false, -1);
        RequestResult r = t.finish(at * MS, Outcome.OK, 200);
        assertThat(SloEvaluator.itlAbove(r.itl(), 0.9, 10 * MS)).isFalse();
        assertThat(SloEvaluator.itlAbove(r.itl(), 0.99, 10 * MS)).isTrue();
        assertThat(SloEvaluator.itlAbove(r.itl(), 0.99, 100 * MS)).isFalse();
        assertThat(r.itl().quantileSeconds(0.9)).isCloseTo(0.01, org.assertj.core.data.Offset.offset(1e-12));
    }
}
