package dev.llmsidecar.fuzz;

import dev.llmsidecar.fuzz.StreamScenario.Phase;
import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * A byte-level engine ({@link ScriptedUpstream}) answering every {@link StreamScenario} registered with it, and the
 * real ProxyServer in front of it ({@link ProxyFixture}); {@link #check} sends a case's requests directly and
 * through the sidecar and asserts the client gets the same status line, end-to-end headers and entity bytes.
 */
final class DifferentialRig implements AutoCloseable {

    /** Which phase a request belongs to; the engine's answer depends on it, never on the path taken. */
    static final String PHASE_HEADER = "x-fuzz-phase";
    /** Set on direct requests only: the engine pauses at flush points only towards the sidecar (timing, not bytes). */
    static final String DIRECT_HEADER = "x-fuzz-direct";

    /**
     * A 4 KB hold limit instead of 1 MB: events above it take the sidecar's streaming path (usage members cut as
     * they pass instead of whole events held), reachable with events of a few KB, i.e. in milliseconds.
     */
    static final Map<String, String> SIDECAR_CONFIG = Map.of(
            "sidecar.llm.max-held-event-bytes", "4096",
            "sidecar.upstream.idle-timeout", "PT10S");

    /** What the engine saw of one request. */
    record Seen(byte[] body, boolean usageAsked) {
    }

    /** A registered case and what the engine saw of it, by phase and path, in order. */
    private record Case(StreamScenario scenario, Map<String, List<Seen>> seen) {
    }

    /**
     * What one checked case did in the sidecar.
     *
     * @param countedNotRemoved the sidecar counted injected usage as not removed (llm_sidecar_usage_not_removed)
     */
    record Outcome(boolean injected, boolean reframed, int probeStatus, boolean countedNotRemoved) {
    }

    final ScriptedUpstream upstream;
    final ProxyFixture fixture;
    private final Map<String, Case> cases = new ConcurrentHashMap<>();
    private final String prefix;
    private int models;

    /** @param prefix model-name prefix, so names never repeat across rigs or runs of the same sidecar */
    DifferentialRig(String prefix) throws Exception {
        this.prefix = prefix;
        upstream = new ScriptedUpstream(this::reply);
        fixture = new ProxyFixture(EngineBehaviour.defaults(), SIDECAR_CONFIG, "http://127.0.0.1:" + upstream.port());
    }

    /** A model name never used on this rig: the sidecar learns a layout per name, and each case needs a fresh one. */
    String nextModel() {
        return prefix + "-" + models++;
    }

    int modelsUsed() {
        return models;
    }

    private ScriptedUpstream.Reply reply(ScriptedUpstream.Request request) {
        JsonObject body;
        try {
            body = new JsonObject(new String(request.body(), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            // the sidecar broke the client's JSON: an answer no direct request gets, so the comparison reports it
            return plain(400, "{\"error\":\"the engine could not parse the request body\"}");
        }
        Case c = cases.get(String.valueOf(body.getValue("model")));
        if (c == null) {
            return plain(404, "{\"error\":\"no such model\"}");
        }
        Phase phase = Phase.valueOf(request.header(PHASE_HEADER));
        boolean direct = request.header(DIRECT_HEADER) != null;
        boolean asked = body.getValue("stream_options") instanceof JsonObject options
                && Boolean.TRUE.equals(options.getValue("include_usage"));
        c.seen().computeIfAbsent(phase + (direct ? "/direct" : "/proxied"), k -> new CopyOnWriteArrayList<>())
                .add(new Seen(request.body(), asked));
        return c.scenario().reply(phase, asked, !direct);
    }

    private static ScriptedUpstream.Reply plain(int status, String json) {
        byte[] wire = ("HTTP/1.1 " + status + " " + StreamScenario.reason(status) + "\r\ncontent-type: application/json"
                + "\r\ncontent-length: " + json.length() + "\r\n\r\n" + json).getBytes(StandardCharsets.UTF_8);
        return new ScriptedUpstream.Reply(wire, new int[] {wire.length}, new long[] {0}, false);
    }

    /**
     * Sends the case's learning request and then its probe, each directly and through the sidecar, and asserts that
     * the client got the same bytes both ways; also that the sidecar asked the engine for usage only where it may,
     * that it did where it should, that it sent the client's body otherwise unchanged, and that nothing is left in
     * flight.
     */
    Outcome check(StreamScenario s) throws Exception {
        cases.put(s.model(), new Case(s, new ConcurrentHashMap<>()));
        try {
            RawHttp.Response learnDirect = send(s, Phase.LEARN, true);
            RawHttp.Response learnProxied = send(s, Phase.LEARN, false);
            assertSameRequest(s, Phase.LEARN, false, learnDirect.status());
            assertSameResponse(s, "learning", learnDirect, learnProxied, false);
            awaitNothingInFlight(s);

            double injectedBefore = count("llm_sidecar.usage_injected");
            double notRemovedBefore = count("llm_sidecar.usage_not_removed");
            RawHttp.Response probeDirect = send(s, Phase.PROBE, true);
            RawHttp.Response probeProxied = send(s, Phase.PROBE, false);
            boolean injected = count("llm_sidecar.usage_injected") > injectedBefore;
            if (injected && !s.client().usage().injectable()) {
                throw new AssertionError("include_usage turned on over the client's own " + s.client().usage() + "\n"
                        + s.describe());
            }
            if (!injected && s.injectionExpected()) {
                throw new AssertionError("include_usage not turned on although the layout was learned clean\n"
                        + s.describe());
            }
            assertSameRequest(s, Phase.PROBE, injected, probeDirect.status());
            // the exchange reports (and counts what it could not remove) when it ends, just after the last byte
            awaitNothingInFlight(s);
            boolean countedNotRemoved = count("llm_sidecar.usage_not_removed") > notRemovedBefore;
            // an injected Content-Length stream loses its length when usage comes out: the entity stays exact. Not
            // where the engine refused the injected request: the client's own was sent instead, and its answer passes
            // as it came (the rig's own mistake, found by the fuzzer: crash-d882a840...)
            boolean reframed = injected && !resent(s, injected, probeDirect.status()) && probeDirect.status() / 100 == 2
                    && probeDirect.header("content-length") != null;
            assertSameResponse(s, "probe" + (injected ? " (include_usage injected" + (countedNotRemoved
                    ? ", and the sidecar counted it as not removed)" : ")") : ""), probeDirect, probeProxied, reframed);
            Throwable engineFailure = upstream.failure.get();
            if (engineFailure != null) {
                throw new AssertionError("the test engine failed", engineFailure);
            }
            return new Outcome(injected, reframed, probeDirect.status(), countedNotRemoved);
        } finally {
            cases.remove(s.model());
        }
    }

    private RawHttp.Response send(StreamScenario s, Phase phase, boolean direct) throws Exception {
        Map<String, String> headers = direct ? Map.of(PHASE_HEADER, phase.name(), DIRECT_HEADER, "1")
                : Map.of(PHASE_HEADER, phase.name());
        return RawHttp.post(direct ? upstream.port() : fixture.proxyPort, s.path(), s.requestBody(phase), headers);
    }

    /**
     * The engine got the client's body byte for byte, unless include_usage was injected: then it got the same JSON
     * with {@code stream_options} exactly {@code {"include_usage":true}}, and, where it refused that (an engine that
     * forbids stream_options), the client's own body byte for byte after it.
     */
    /**
     * Whether the sidecar sent the client's own request after the injected one: the engine answered the injected one
     * with 400 or 422, because it refuses stream_options, or because it refuses this request anyway (the scenario
     * scripts that status, as an engine does for a prompt over its context length).
     */
    static boolean resent(StreamScenario s, boolean injected, int directStatus) {
        return injected && (s.engine().reaction() == StreamScenario.UsageReaction.REJECTED || directStatus == 400
                || directStatus == 422);
    }

    private void assertSameRequest(StreamScenario s, Phase phase, boolean injected, int directStatus) {
        Map<String, List<Seen>> seen = cases.get(s.model()).seen();
        List<Seen> directs = seen.getOrDefault(phase + "/direct", List.of());
        List<Seen> proxieds = seen.getOrDefault(phase + "/proxied", List.of());
        if (directs.size() != 1 || proxieds.isEmpty()) {
            throw new AssertionError(phase + ": the engine saw " + directs.size() + " direct and " + proxieds.size()
                    + " proxied requests\n" + s.describe());
        }
        Seen direct = directs.get(0);
        Seen proxied = proxieds.get(0);
        boolean resent = resent(s, injected, directStatus);
        if (proxieds.size() != (resent ? 2 : 1)) {
            throw new AssertionError(phase + ": the engine saw " + proxieds.size() + " requests through the sidecar, not "
                    + (resent ? "the injected one and then the client's own" : "one") + "\n" + s.describe());
        }
        if (resent) {
            assertSameBody(s, phase, direct, proxieds.get(1));
        }
        if (!injected) {
            assertSameBody(s, phase, direct, proxied);
            return;
        }
        JsonObject expected = new JsonObject(new String(direct.body(), StandardCharsets.UTF_8));
        JsonObject got;
        try {
            got = new JsonObject(new String(proxied.body(), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            throw new AssertionError(phase + ": the injected body is not JSON: "
                    + new String(proxied.body(), StandardCharsets.UTF_8) + "\n" + s.describe(), e);
        }
        expected.put("stream_options", new JsonObject().put("include_usage", true));
        if (!expected.equals(got) || !proxied.usageAsked()) {
            throw new AssertionError(phase + ": the injected body is not the client's with include_usage on\nexpected: "
                    + expected.encode() + "\ngot:      " + got.encode() + "\n" + s.describe());
        }
    }

    private static void assertSameBody(StreamScenario s, Phase phase, Seen direct, Seen proxied) {
        if (!Arrays.equals(direct.body(), proxied.body())) {
            throw new AssertionError(phase + ": the engine got a different body through the sidecar\n" + "direct:  "
                    + new String(direct.body(), StandardCharsets.UTF_8) + "\nproxied: "
                    + new String(proxied.body(), StandardCharsets.UTF_8) + "\n" + s.describe());
        }
    }

    static void assertSameResponse(StreamScenario s, String what, RawHttp.Response direct, RawHttp.Response proxied,
            boolean reframed) {
        StringBuilder problems = new StringBuilder();
        if (!proxied.statusLine().equals(direct.statusLine())) {
            problems.append("status line: direct '").append(direct.statusLine()).append("', proxied '")
                    .append(proxied.statusLine()).append("'\n");
        }
        Map<String, List<String>> expected = direct.endToEnd();
        Map<String, List<String>> got = proxied.endToEnd();
        if (reframed) {
            expected.remove("content-length");
        }
        if (!expected.equals(got)) {
            problems.append("headers: direct ").append(expected).append(", proxied ").append(got).append('\n');
        }
        if (!Arrays.equals(direct.entity(), proxied.entity())) {
            int at = Arrays.mismatch(direct.entity(), proxied.entity());
            problems.append("entity: ").append(direct.entity().length).append(" bytes direct, ")
                    .append(proxied.entity().length).append(" through the sidecar, first difference at ").append(at)
                    .append("\n  direct:  ").append(around(direct.entity(), at))
                    .append("\n  proxied: ").append(around(proxied.entity(), at)).append('\n');
        }
        if (problems.length() > 0) {
            throw new AssertionError(what + " response differs through the sidecar\n" + problems + s.describe()
                    + "direct entity:  " + escaped(direct.entity(), 0, direct.entity().length)
                    + "\nproxied entity: " + escaped(proxied.entity(), 0, proxied.entity().length));
        }
    }

    private static String around(byte[] bytes, int at) {
        int from = Math.max(0, at - 60);
        int to = Math.min(bytes.length, at + 60);
        return escaped(bytes, from, to);
    }

    /** Bytes as Java would write them in a literal: the mismatch must be readable to the byte. */
    static String escaped(byte[] bytes, int from, int to) {
        int limit = Math.min(to, from + 4000);
        StringBuilder sb = new StringBuilder("\"");
        for (int i = from; i < limit; i++) {
            int b = bytes[i] & 0xff;
            switch (b) {
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> sb.append(b >= 0x20 && b < 0x7f ? String.valueOf((char) b) : String.format("\\x%02x", b));
            }
        }
        return sb.append(limit < to ? "\"..." : "\"").toString();
    }

    /** A counter of the contract (its dotted name), read off the registry without rendering the rest. */
    private double count(String name) {
        return Scrape.value(fixture.registry.getPrometheusRegistry(), name.replace('.', '_'));
    }

    /**
     * Every exchange lets go of its in-flight count once its response has ended. The client may have read the last
     * byte a moment before the sidecar's end handler runs, hence a short bounded wait, polled finely (a 10 ms
     * sleep would be most of an execution).
     */
    private void awaitNothingInFlight(StreamScenario s) {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (fixture.proxy().inFlight() != 0 || fixture.telemetry.inFlight().count() != 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still in flight 5 s after the responses ended: proxy "
                        + fixture.proxy().inFlight() + ", gauge " + fixture.telemetry.inFlight().count() + "\n"
                        + s.describe());
            }
            LockSupport.parkNanos(50_000);
        }
    }

    @Override
    public void close() throws Exception {
        try {
            fixture.close();
        } finally {
            upstream.close();
        }
    }

    @Override
    public String toString() {
        return "DifferentialRig[" + prefix + ", " + models + " models, engine port " + upstream.port() + ", sidecar port "
                + fixture.proxyPort + "]" + Objects.toString(upstream.failure.get(), "");
    }
}
