package dev.llmsidecar.fuzz;

import com.code_intelligence.jazzer.api.BugDetectors;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.api.SilentCloseable;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;

/**
 * The whole proxy as a property: for any stream a byte-level engine may write, a client gets through the sidecar
 * exactly the bytes a direct connection gives (status line, end-to-end headers, entity), also after the sidecar has
 * learned the model's layout and turned include_usage on. Jazzer decides the response framing and HTTP chunk sizes,
 * where the engine flushes (inside events, inside multi-byte characters, inside the head) and pauses, the SSE line
 * endings, the events (JSON chunks with escaped, unicode and multi-byte content, pretty multi-line data, comments,
 * {@code event:}/{@code id:}/{@code retry:} fields, blank lines, non-JSON data, large events over the hold limit),
 * what the engine does when asked for usage, the client's own stream_options and JSON style, and the status (errors
 * with a JSON body). See {@link StreamScenario} for the dimensions and {@link DifferentialRig#check} for what is
 * asserted; docs/fuzzing.md for how to run it and what it found.
 *
 * <p>Regression mode (every {@code mvn test}) replays the committed inputs in
 * {@code src/test/resources/dev/llmsidecar/fuzz/ProxyByteIdentityFuzzTestInputs/}; fuzzing:
 * {@code JAZZER_FUZZ=1 nice -n 10 mvn -B -q test -Dtest=ProxyByteIdentityFuzzTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class ProxyByteIdentityFuzzTest {

    /**
     * The sidecar keeps the layout it learned per model name for its whole life and learns at most 1024
     * (IncludeUsagePolicy.MAX_LAYOUTS); every case needs a fresh name, so the rig is renewed before that.
     */
    private static final int MODELS_PER_RIG = 1000;

    /** Only loopback connections are expected: Jazzer's SSRF detector flags any other. */
    private static final Set<String> LOOPBACK = Set.of("127.0.0.1", "localhost");

    /** FUZZ_CENSUS=1: one line per case saying what it exercised (to choose seeds, to see what a corpus covers). */
    private static final boolean CENSUS = System.getenv("FUZZ_CENSUS") != null;

    /**
     * The engine and sidecar every execution shares, and what the run did with them. Static because Jazzer runs the
     * whole fuzzing run as one invocation of the test method and replays each committed input as an invocation of
     * its own: only the class outlives them all. Starting a rig costs about a second, an execution milliseconds.
     * The only mutable static state here; closed by {@link #closeRig()}, which runs after both modes.
     */
    private static final SharedRun RUN = new SharedRun();

    private static final class SharedRun {
        private DifferentialRig rig;
        private int rigsStarted;
        private long cases;
        private long injected;
        private long reframed;
        private long errorStatuses;
        /** Identical bytes, yet counted as usage not removed: the sidecar would stop injecting for that model. */
        private long countedNotRemovedButIdentical;

        synchronized DifferentialRig rig() throws Exception {
            if (rig != null && rig.modelsUsed() >= MODELS_PER_RIG) {
                rig.close();
                rig = null;
            }
            if (rig == null) {
                rig = new DifferentialRig("fz" + ProcessHandle.current().pid() + "r" + rigsStarted++);
            }
            return rig;
        }

        synchronized void add(DifferentialRig.Outcome o) {
            cases++;
            injected += o.injected() ? 1 : 0;
            reframed += o.reframed() ? 1 : 0;
            errorStatuses += o.probeStatus() >= 400 ? 1 : 0;
            if (o.countedNotRemoved()) {
                countedNotRemovedButIdentical++;
            }
        }

        synchronized void close() throws Exception {
            if (rig != null) {
                rig.close();
                rig = null;
            }
        }

        /** A run that never injected would prove little: say what it did. */
        @Override
        public synchronized String toString() {
            return cases + " cases, " + injected + " with include_usage injected (" + reframed + " re-framed), "
                    + errorStatuses + " probes answered with an error status, " + countedNotRemovedButIdentical
                    + " identical yet counted as usage not removed";
        }
    }

    @FuzzTest(maxDuration = "10m")
    void proxiedStreamIsByteIdenticalToDirect(FuzzedDataProvider data) throws Exception {
        try (SilentCloseable loopbackOnly = BugDetectors.allowNetworkConnections(
                (host, port) -> LOOPBACK.contains(host))) {
            DifferentialRig rig = RUN.rig();
            StreamScenario scenario = StreamScenario.generate(data, rig.nextModel());
            DifferentialRig.Outcome outcome = rig.check(scenario);
            RUN.add(outcome);
            if (CENSUS) {
                System.out.println("CENSUS " + inputName(data) + " " + scenario.census(outcome));
            }
        }
    }

    /**
     * The SHA-1 of the input, which is its file name in a corpus; read reflectively off Jazzer's provider, which
     * holds the whole input in regression mode ("?" where it does not).
     */
    private static String inputName(FuzzedDataProvider data) {
        try {
            byte[] input = (byte[]) data.getClass().getMethod("getJavaData").invoke(data);
            return input == null ? "?" : HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(input));
        } catch (ReflectiveOperationException | NoSuchAlgorithmException e) {
            return "?";
        }
    }

    @AfterAll
    static void closeRig() throws Exception {
        System.out.println("ProxyByteIdentityFuzzTest: " + RUN);
        RUN.close();
    }
}
