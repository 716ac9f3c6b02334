package dev.llmsidecar.fuzz;

import dev.llmsidecar.fuzz.StreamScenario.Chunk;
import dev.llmsidecar.fuzz.StreamScenario.ClientRequest;
import dev.llmsidecar.fuzz.StreamScenario.ClientUsage;
import dev.llmsidecar.fuzz.StreamScenario.Engine;
import dev.llmsidecar.fuzz.StreamScenario.Event;
import dev.llmsidecar.fuzz.StreamScenario.Framing;
import dev.llmsidecar.fuzz.StreamScenario.JsonStyle;
import dev.llmsidecar.fuzz.StreamScenario.LineEnding;
import dev.llmsidecar.fuzz.StreamScenario.ReplySpec;
import dev.llmsidecar.fuzz.StreamScenario.UsageReaction;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What {@link ProxyByteIdentityFuzzTest} found, each minimised to a plain case: regression tests for the fixes
 * (docs/fuzzing.md lists the findings).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FuzzFindingsTest {

    private DifferentialRig rig;

    @BeforeAll
    void startRig() throws Exception {
        rig = new DifferentialRig("finding");
    }

    @AfterAll
    void closeRig() throws Exception {
        rig.close();
    }

    // ---- plain cases, written out ----

    static Engine engine(UsageReaction reaction, LineEnding eol) {
        return new Engine(reaction, false, false, true, 6, false, false, eol);
    }

    static ReplySpec ok(Framing framing) {
        return new ReplySpec(200, "OK", framing, framing == Framing.CLOSE, false, "content-type", "text/event-stream",
                List.of(), new int[] {4096}, new int[0], new boolean[0], "");
    }

    static ClientRequest client(ClientUsage usage) {
        return new ClientRequest(usage, false, "hi", JsonStyle.COMPACT, false, 0);
    }

    static Chunk chunk(String text, LineEnding eol) {
        return new Chunk(text, false, false, false, null, null, eol);
    }

    /** A chunk whose JSON is written pretty, one data line per member. */
    static Chunk multiLineChunk(String text, LineEnding eol) {
        return new Chunk(text, false, false, true, null, null, eol);
    }

    StreamScenario scenario(Engine engine, List<Event> events, ReplySpec learn, ReplySpec probe, ClientUsage usage) {
        return new StreamScenario(rig.nextModel(), engine, events, -1, true, learn, probe, client(usage));
    }

    // ---- the findings ----

    @Test
    void anEngineThatRefusesStreamOptionsStillServesAClientThatNeverSentThem() throws Exception {
        StreamScenario s = scenario(engine(UsageReaction.REJECTED, LineEnding.LF),
                List.of(chunk("hi", LineEnding.LF)), ok(Framing.CHUNKED), ok(Framing.CHUNKED), ClientUsage.ABSENT);
        rig.check(s);
    }

    @Test
    void aUsageMemberInAChunkSpreadOverSeveralDataLinesIsRemoved() throws Exception {
        // data: {\ndata:   "id": ...,\n ... data:   "usage": {...}\ndata: }\n\n reaches the client with its usage
        StreamScenario s = scenario(engine(UsageReaction.MERGED_INTO_FINAL, LineEnding.LF),
                List.of(multiLineChunk("hi", LineEnding.LF)), ok(Framing.CHUNKED), ok(Framing.CHUNKED),
                ClientUsage.ABSENT);
        rig.check(s);
    }

    @Test
    void anLfAfterARemovedUsageChunkEndingInCrReachesTheClient() throws Exception {
        // the engine writes ...}\r\r then the usage chunk data: {...}\r\r then \n; direct the client gets }\r\r\n
        StreamScenario s = scenario(engine(UsageReaction.SEPARATE_CHUNK, LineEnding.CR),
                List.of(chunk("hi", LineEnding.CR), new StreamScenario.Blank(LineEnding.LF)), ok(Framing.CHUNKED),
                ok(Framing.CHUNKED), ClientUsage.ABSENT);
        rig.check(s);
    }
}
