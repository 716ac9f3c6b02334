package dev.llmsidecar.includeusage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.includeusage.IncludeUsagePolicy.Decision;
import dev.llmsidecar.includeusage.IncludeUsagePolicy.Observation;
import dev.llmsidecar.includeusage.IncludeUsagePolicy.UsageKept;
import dev.llmsidecar.includeusage.IncludeUsagePolicy.UsageSkip;
import dev.llmsidecar.wire.openai.UsageMode;
import dev.llmsidecar.wire.openai.UsageReport;
import dev.llmsidecar.wire.openai.UsageRequest;
import org.junit.jupiter.api.Test;

class IncludeUsagePolicyTest {

    static final String KEY = "chat\nllama";
    static final UsageReport CLEAN = UsageReport.NONE;
    static final UsageReport USAGE_NULL = new UsageReport(0, 0, 0, true, false, false);
    static final UsageReport TIMINGS = new UsageReport(0, 0, 0, false, true, false);
    static final UsageReport MOVED = new UsageReport(1, 0, 0, true, true, true);
    static final UsageReport MEMBER_KEPT = new UsageReport(0, 0, 1, true, false, false);

    static Observation unedited(UsageReport report) {
        return new Observation(false, false, false, false, report);
    }

    @Test
    void learnsFromOneUneditedStreamThenInjects() {
        IncludeUsagePolicy p = new IncludeUsagePolicy(true);
        Decision first = p.decide(KEY, UsageRequest.ABSENT, false, false);
        assertThat(first.inject()).isFalse();
        assertThat(first.skip()).isEqualTo(UsageSkip.LEARNING);
        assertThat(first.handling()).isEqualTo(UsageMode.OBSERVE);
        p.observe(KEY, unedited(CLEAN));
        Decision second = p.decide(KEY, UsageRequest.ABSENT, false, false);
        assertThat(second).isEqualTo(new Decision(true, null, UsageMode.REMOVE));
        // another model has its own layout
        assertThat(p.decide("chat\nother", UsageRequest.ABSENT, false, false).skip()).isEqualTo(UsageSkip.LEARNING);
    }

    @Test
    void neverInjectsForAnEngineThatSendsUsageOrCountsUnprompted() {
        for (UsageReport report : new UsageReport[] {USAGE_NULL, TIMINGS}) {
            IncludeUsagePolicy p = new IncludeUsagePolicy(true);
            p.observe(KEY, unedited(report));
            Decision d = p.decide(KEY, UsageRequest.ABSENT, false, false);
            assertThat(d.inject()).isFalse();
            assertThat(d.skip()).isEqualTo(UsageSkip.ENGINE_REPORTS_USAGE);
            assertThat(d.handling()).as("nothing left to learn").isEqualTo(UsageMode.PASS);
        }
    }

    @Test
    void clientsChoicesAreRespectedAndCounted() {
        IncludeUsagePolicy p = new IncludeUsagePolicy(true);
        p.observe(KEY, unedited(CLEAN));
        assertThat(p.decide(KEY, UsageRequest.DECLINED, false, false).skip()).isEqualTo(UsageSkip.CLIENT_DECLINED);
        assertThat(p.decide(KEY, UsageRequest.OTHER_OPTIONS, false, false).skip()).isEqualTo(UsageSkip.STREAM_OPTIONS);
        assertThat(p.decide(KEY, UsageRequest.ASKED, false, false)).isEqualTo(new Decision(false, null, UsageMode.PASS));
        assertThat(p.decide(KEY, UsageRequest.NOT_APPLICABLE, false, false).skip()).isNull();
        // a declined stream is also an unedited one: it teaches the layout of a model not seen yet
        assertThat(p.decide("chat\nnew", UsageRequest.DECLINED, false, false).handling()).isEqualTo(UsageMode.OBSERVE);
        assertThat(new IncludeUsagePolicy(false).decide(KEY, UsageRequest.ABSENT, false, false).inject()).isFalse();
    }

    @Test
    void compressionIsLearnedPerClientKind() {
        IncludeUsagePolicy p = new IncludeUsagePolicy(true);
        p.observe(KEY, unedited(CLEAN));
        // nothing known about compression yet: a client that accepts it is not injected, and teaches
        Decision accepting = p.decide(KEY, UsageRequest.ABSENT, true, false);
        assertThat(accepting.skip()).isEqualTo(UsageSkip.COMPRESSION);
        assertThat(accepting.handling()).isEqualTo(UsageMode.OBSERVE);
        assertThat(p.decide(KEY, UsageRequest.ABSENT, false, false).inject()).isTrue();
        p.observe(KEY, new Observation(false, true, false, false, CLEAN)); // answered uncompressed
        assertThat(p.decide(KEY, UsageRequest.ABSENT, true, false).inject()).isTrue();

        IncludeUsagePolicy compressing = new IncludeUsagePolicy(true);
        compressing.observe(KEY, new Observation(false, true, true, false, CLEAN));
        assertThat(compressing.decide(KEY, UsageRequest.ABSENT, true, false).skip()).isEqualTo(UsageSkip.COMPRESSION);
        assertThat(compressing.decide(KEY, UsageRequest.ABSENT, false, false).inject()).isTrue();
        // an engine compressing a stream the sidecar injected and asked identity for (the proxy then sends the
        // client's own request instead): never injected again, for any client
        compressing.compressedDespiteIdentity(KEY);
        assertThat(compressing.decide(KEY, UsageRequest.ABSENT, false, false).skip()).isEqualTo(UsageSkip.COMPRESSION);
        assertThat(compressing.decide(KEY, UsageRequest.ABSENT, true, false).skip()).isEqualTo(UsageSkip.COMPRESSION);
    }

    @Test
    void surprisesInAnInjectedStreamStopInjection() {
        IncludeUsagePolicy p = new IncludeUsagePolicy(true);
        p.observe(KEY, unedited(CLEAN));
        assertThat(p.observe(KEY, new Observation(true, false, false, false, MOVED))).isEqualTo(UsageKept.LAYOUT);
        assertThat(p.decide(KEY, UsageRequest.ABSENT, false, false).skip()).isEqualTo(UsageSkip.LAYOUT);

        IncludeUsagePolicy framed = new IncludeUsagePolicy(true);
        framed.observe(KEY, unedited(CLEAN));
        assertThat(framed.observe(KEY, new Observation(true, false, false, true, CLEAN))).isNull(); // re-framed, exact
        assertThat(framed.decide(KEY, UsageRequest.ABSENT, false, false).skip()).isEqualTo(UsageSkip.CONTENT_LENGTH);
        // and an HTTP/1.0 client, which cannot be sent a re-framed stream, is never injected
        IncludeUsagePolicy old = new IncludeUsagePolicy(true);
        old.observe(KEY, unedited(CLEAN));
        assertThat(old.decide(KEY, UsageRequest.ABSENT, false, true).skip()).isEqualTo(UsageSkip.HTTP10_CLIENT);
    }

    @Test
    void aUsageMemberThatCouldNotBeCutStopsInjection() {
        IncludeUsagePolicy p = new IncludeUsagePolicy(true);
        p.observe(KEY, unedited(CLEAN));
        assertThat(p.observe(KEY, new Observation(true, false, false, false, MEMBER_KEPT))).isEqualTo(UsageKept.MEMBER);
        assertThat(p.decide(KEY, UsageRequest.ABSENT, false, false).skip()).isEqualTo(UsageSkip.LAYOUT);
    }

    @Test
    void anEngineThatRefusedTheInjectedRequestIsNotAskedAgain() {
        IncludeUsagePolicy p = new IncludeUsagePolicy(true);
        p.observe(KEY, unedited(CLEAN));
        assertThat(p.decide(KEY, UsageRequest.ABSENT, false, false).inject()).isTrue();
        p.injectionRejected(KEY);
        assertThat(p.decide(KEY, UsageRequest.ABSENT, false, false).skip()).isEqualTo(UsageSkip.ENGINE_REJECTS);
        // what is learned from later streams does not undo it
        p.observe(KEY, unedited(CLEAN));
        assertThat(p.decide(KEY, UsageRequest.ABSENT, false, false).skip()).isEqualTo(UsageSkip.ENGINE_REJECTS);
        assertThat(p.decide("chat\nother", UsageRequest.ABSENT, false, false).skip()).isEqualTo(UsageSkip.LEARNING);
    }

    @Test
    void layoutsAreBounded() {
        IncludeUsagePolicy p = new IncludeUsagePolicy(true);
        for (int i = 0; i < IncludeUsagePolicy.MAX_LAYOUTS + 10; i++) {
            p.observe("chat\nm" + i, unedited(CLEAN));
        }
        assertThat(p.decide("chat\nm0", UsageRequest.ABSENT, false, false).inject()).isTrue();
        assertThat(p.decide("chat\nm" + (IncludeUsagePolicy.MAX_LAYOUTS + 5), UsageRequest.ABSENT, false, false).skip())
                .isEqualTo(UsageSkip.LEARNING);
    }
}
