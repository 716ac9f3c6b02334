package dev.llmsidecar.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.sim.SimulatedEngine;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The benchmark's client against the simulated engine with stamps, as bench/run runs them (engine spec included). */
class BenchClientTest {

    @Test
    void readsTheEngineStampsFromTheBytes() {
        byte[] b = "data: {\"x\":\"\\\"t\\\":9\",\"a\":123,\"t\":4567}".getBytes(StandardCharsets.US_ASCII);
        assertThat(BenchClient.field(b, 0, b.length, (byte) 't')).isEqualTo(4567);
        assertThat(BenchClient.field(b, 0, b.length, (byte) 'a')).isEqualTo(123);
        assertThat(BenchClient.field(b, 0, b.length, (byte) 'z')).isEqualTo(-1);
        assertThat(BenchClient.field(b, 0, b.length - 5, (byte) 't')).isEqualTo(-1);
    }

    @Test
    void aStreamPhaseMeasuresTheScheduleTheHeadersAskFor() throws Exception {
        JsonObject r = phase("stream", 4, 10, 20, 10);
        assertThat(r.getLong("errors")).isZero();
        assertThat(r.getLong("streams")).isPositive();
        assertThat(r.getLong("tokenEvents")).isBetween(10 * r.getLong("streams"), 10 * r.getLong("streams") + 40);
        // engine-side stamps: 10 ms to the first token, 20 ms between tokens (µs); timers fire late (on a busy
        // machine, much later), never early
        assertThat(r.getJsonObject("engineTtft").getDouble("p50")).isBetween(9_500.0, 50_000.0);
        assertThat(r.getJsonObject("engineItl").getDouble("p50")).isBetween(19_000.0, 100_000.0);
        assertThat(r.getJsonObject("chunkDelay").getLong("count")).isPositive();
        assertThat(r.getJsonObject("requestPath").getLong("count")).isPositive();
        assertThat(r.getJsonObject("plainLatency").getLong("count")).isZero();
        // the client's own TTFT and ITL over the same streams as the engine's: a direct client's timing error
        assertThat(r.getJsonObject("clientTtft").getLong("count")).isEqualTo(r.getJsonObject("engineTtft").getLong("count"));
        assertThat(r.getJsonObject("clientItl").getLong("count")).isEqualTo(r.getJsonObject("engineItl").getLong("count"));
        assertThat(r.getJsonObject("clientItl").getDouble("p50")).isBetween(19_000.0, 100_000.0);
    }

    @Test
    void burstAndPlainPhases() throws Exception {
        JsonObject burst = phase("burst", 2, 500, 100, 0);
        assertThat(burst.getLong("errors")).isZero();
        // no gap: 500 events per stream far faster than 100 ms apart
        assertThat(burst.getDouble("eventsPerSec")).isGreaterThan(2 * 10 * 10);
        JsonObject plain = phase("plain", 2, 0, 0, 0);
        assertThat(plain.getLong("errors")).isZero();
        assertThat(plain.getJsonObject("plainLatency").getLong("count")).isPositive();
        assertThat(plain.getLong("tokenEvents")).isZero();
    }

    /**
     * The conversation phase's requests: valid chat bodies whose history grows turn by turn (a user message and a
     * tool's result alternating, each after the answer before), the same conversation's next turn starting with the
     * previous one's messages, and a new conversation once the history passes 200 KB.
     */
    @Test
    void aConversationResendsItsGrowingHistoryUntil200KbThenANewOneStarts() {
        BenchClient.Share.Conversation c = new BenchClient.Share.Conversation("t");
        io.vertx.core.json.JsonArray before = null;
        int turns = 0;
        while (!c.full()) {
            JsonObject body = new JsonObject(c.next("m").toString());
            io.vertx.core.json.JsonArray messages = body.getJsonArray("messages");
            assertThat(body.getBoolean("stream")).isTrue();
            if (before != null) {
                assertThat(messages.size()).isEqualTo(before.size() + 2);
                assertThat(messages.getList().subList(0, before.size())).isEqualTo(before.getList());
                assertThat(messages.getJsonObject(messages.size() - 2).getString("role")).isEqualTo("assistant");
            }
            String role = messages.getJsonObject(messages.size() - 1).getString("role");
            assertThat(role).isEqualTo(turns % 2 == 0 ? "user" : "tool");
            c.answered();
            before = messages;
            turns++;
        }
        assertThat(turns).isBetween(15, 30);
        assertThat(c.history.length()).isBetween(BenchClient.CONVERSATION_BYTES,
                BenchClient.CONVERSATION_BYTES + 12_000);
    }

    @Test
    void aConversationPhaseAnswersEveryTurn() throws Exception {
        JsonObject r = phase("conv", 4, 5, 5, 5);
        assertThat(r.getLong("errors")).isZero();
        assertThat(r.getLong("streams")).isGreaterThan(20);
        assertThat(r.getLong("tokenEvents")).isBetween(5 * r.getLong("streams"), 5 * r.getLong("streams") + 40);
        assertThat(r.getJsonObject("ttftOverhead").getLong("count")).isPositive();
    }

    static JsonObject phase(String mode, int conc, int events, int intervalMs, int ttftMs) throws Exception {
        Vertx vertx = Vertx.vertx();
        SimulatedEngine engine = new SimulatedEngine(vertx, EngineBehaviour.defaults().with(Bench.ENGINE_SPEC));
        try {
            int port = engine.start("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            BenchClient.Phase p = new BenchClient.Phase("127.0.0.1", port, mode, conc, 2, events, intervalMs, ttftMs,
                    "bench-test", "/v1/chat/completions", System.nanoTime());
            return new JsonObject(BenchClient.run(p, 2));
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
