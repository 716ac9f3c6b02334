package dev.llmsidecar.conversation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.core.JsonFactory;
import dev.llmsidecar.app.SidecarTelemetry;
import dev.llmsidecar.live.LiveStats;
import dev.llmsidecar.observe.ExchangeObserver;
import dev.llmsidecar.observe.TrafficObserver;
import dev.llmsidecar.support.ChatHead;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.support.TestConfigs;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.wire.InspectedRequest;
import dev.llmsidecar.wire.LlmOperation;
import dev.llmsidecar.wire.LlmRoutes;
import dev.llmsidecar.wire.TokenEventSink;
import dev.llmsidecar.wire.Usage;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Conversations driven through the seam as the proxy drives it, without a socket: the request bodies read by the
 * routes' own formats, the exchanges timed by the nanos the calls carry, so every gap and every second of agent time
 * is exact.
 */
class ConversationSeriesTest {

    static final long MS = 1_000_000;
    static final LlmRoutes ROUTES = new LlmRoutes(new JsonFactory(), true);
    static final LlmOperation CHAT = ROUTES.match("POST", "/v1/chat/completions");
    static final LlmOperation RESPONSES = ROUTES.match("POST", "/v1/responses");

    final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    SidecarTelemetry telemetry;

    TrafficObserver traffic(Map<String, String> more) {
        Map<String, String> config = new HashMap<>(Map.of("sidecar.conversations.enabled", "true"));
        config.putAll(more);
        telemetry = new SidecarTelemetry(registry.getPrometheusRegistry(), TestConfigs.sidecar("http://127.0.0.1:1",
                ProxyFixture.pinned(config, "m1")), System::nanoTime);
        return telemetry.traffic();
    }

    /**
     * One request: arrives at {@code at}, its first token 200 ms later, ends at 250 ms with {@code prompt} input tokens
     * of which {@code cached} cached (-1: not reported); the response id {@code responseId} (or null).
     */
    static void exchange(TrafficObserver traffic, LlmOperation op, JsonObject body, long at, long prompt, long cached,
            String responseId) {
        ExchangeObserver x = traffic.exchangeStarted(new ChatHead(Map.of()), op, at);
        InspectedRequest inspected = op.format().inspect(Buffer.buffer(body.encode()));
        x.requestInspected(inspected.model(), inspected.stream(), inspected.priority());
        if (inspected.conversation() != null) {
            x.conversationRead(inspected.conversation());
        }
        x.requestSent();
        TokenEventSink sink = x.responseStarted(200, true, at + 5 * MS);
        if (responseId != null) {
            sink.onResponseId(responseId);
        }
        sink.onDataChunk(at + 10 * MS);
        sink.onTokenChunk(at + 200 * MS, false, -1);
        sink.onTokenChunk(at + 240 * MS, false, -1);
        sink.onUsage(new Usage(prompt, 2, cached, -1));
        sink.onFinishReason("stop");
        x.ended(Outcome.OK, 200, at + 250 * MS);
    }

    static JsonObject chat(JsonArray messages) {
        return new JsonObject().put("model", "m1").put("stream", true).put("messages", messages.copy());
    }

    static JsonObject msg(String role, String content) {
        return new JsonObject().put("role", role).put("content", content);
    }

    static JsonObject toolCall(String id) {
        return new JsonObject().put("role", "assistant").put("tool_calls", new JsonArray().add(new JsonObject()
                .put("id", id).put("type", "function").put("function", new JsonObject().put("name", "f")
                        .put("arguments", "{}"))));
    }

    Scrape scrape() {
        return new Scrape(registry.scrape());
    }

    /**
     * An agent loop: the task; the tool's result 750 ms after the answer that called it; the user 3 s after the
     * answer; the same history again (a regeneration). The gap by what the next turn answers, the agent's time in
     * the model (the call that started the loop, and the turn that answered the tool) and in its tool.
     */
    @Test
    void anAgentLoopsTurnsGapsAndTimeInTheModelAndItsTools() {
        TrafficObserver traffic = traffic(Map.of());
        JsonArray m = new JsonArray().add(msg("system", "v1")).add(msg("user", "fix the bug"));
        exchange(traffic, CHAT, chat(m), 1_000 * MS, 100, 0, null); // ends at 1 250 ms
        m.add(toolCall("c1")).add(new JsonObject().put("role", "tool").put("tool_call_id", "c1").put("content", "ok"));
        m.getJsonObject(0).put("content", "v2"); // a front end rewrote the system prompt: still the same conversation
        exchange(traffic, CHAT, chat(m), 2_000 * MS, 140, 100, null); // 750 ms after; ends at 2 250 ms
        m.add(msg("assistant", "fixed")).add(msg("user", "thanks"));
        exchange(traffic, CHAT, chat(m), 5_250 * MS, 180, 140, null); // 3 s after
        exchange(traffic, CHAT, chat(m), 6_000 * MS, 180, 180, null); // again: a regeneration

        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_conversation_turn_gap_seconds_sum", "after", "tool", "turn", "2"))
                .isCloseTo(0.75, within(1e-9));
        assertThat(s.sum("llm_sidecar_conversation_turn_gap_seconds_sum", "after", "user", "turn", "3-4"))
                .isCloseTo(3.0, within(1e-9));
        assertThat(s.sum("llm_sidecar_conversation_turn_gap_seconds_count")).as("a regeneration has no gap")
                .isEqualTo(2);
        // the model: the first call (250 ms, counted once the tool's result came back) and the tool turn (250 ms)
        assertThat(s.sum("llm_sidecar_conversation_agent_time_seconds_total", "part", "model"))
                .isCloseTo(0.5, within(1e-9));
        assertThat(s.sum("llm_sidecar_conversation_agent_time_seconds_total", "part", "tool"))
                .isCloseTo(0.75, within(1e-9));
        assertThat(s.sum("llm_sidecar_conversation_requests_total", "link", "first")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_conversation_requests_total", "link", "next")).isEqualTo(2);
        assertThat(s.sum("llm_sidecar_conversation_requests_total", "link", "repeated")).isEqualTo(1);
        String[] cold = {"model", "m1", "turn", "1", "after", "user", "prefix", "cold"};
        assertThat(s.sum("llm_sidecar_conversation_time_to_first_token_seconds_count", cold)).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_conversation_time_to_first_token_seconds_sum", cold))
                .isCloseTo(0.2, within(1e-9));
        assertThat(s.sum("llm_sidecar_conversation_time_to_first_token_seconds_count", "turn", "2", "after", "tool",
                "prefix", "warm")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_conversation_time_to_first_token_seconds_count", "turn", "3-4", "after",
                "user", "prefix", "warm")).as("the turn and its regeneration").isEqualTo(2);
        assertThat(s.sum("llm_sidecar_conversation_input_tokens_sum", "turn", "3-4")).isEqualTo(360);
        // cached / input: 0 cold, 100/140 on turn 2, 140/180 and 180/180 on turn 3
        assertThat(s.sum("llm_sidecar_conversation_prefix_cache_hit_ratio_sum", "prefix", "cold")).isZero();
        assertThat(s.sum("llm_sidecar_conversation_prefix_cache_hit_ratio_bucket", "prefix", "cold", "le", "0.0"))
                .isEqualTo(1);
        assertThat(s.sum("llm_sidecar_conversation_prefix_cache_hit_ratio_sum", "prefix", "warm"))
                .isCloseTo(100.0 / 140 + 140.0 / 180 + 1, within(1e-9));
        assertThat(s.sum("llm_sidecar_conversation_table_entries")).isEqualTo(3);

        JsonObject live = LiveStats.render(telemetry).getJsonObject("conversations");
        assertThat(live.getJsonObject("ttft_by_turn").fieldNames()).containsExactlyInAnyOrder("1", "2", "3-4");
        assertThat(live.getJsonObject("ttft_by_turn").getJsonObject("3-4").getLong("count")).isEqualTo(2);
        assertThat(live.getJsonObject("turn_gap_by_after").getJsonObject("tool").getDouble("p50"))
                .isCloseTo(0.75, within(0.75 / 64)); // seconds, HdrHistogram: 2 digits
    }

    /**
     * The Responses API: a turn names the response before it by the id the engine gave it; a turn naming an id never
     * seen here has an unknown turn; a conversation's id links every turn to the newest.
     */
    @Test
    void responsesTurnsLinkByTheIdsOfTheirResponsesAndConversations() {
        TrafficObserver traffic = traffic(Map.of());
        JsonObject first = new JsonObject().put("model", "m1").put("stream", true).put("input", "hello");
        exchange(traffic, RESPONSES, first, 1_000 * MS, 10, -1, "resp_1");
        JsonObject second = new JsonObject().put("model", "m1").put("stream", true).put("previous_response_id",
                "resp_1").put("input", new JsonArray().add(new JsonObject().put("type", "function_call_output")
                        .put("call_id", "c").put("output", "42")));
        exchange(traffic, RESPONSES, second, 1_400 * MS, 20, 10, "resp_2");
        JsonObject orphan = new JsonObject().put("model", "m1").put("stream", true).put("previous_response_id",
                "resp_elsewhere").put("input", "hi");
        exchange(traffic, RESPONSES, orphan, 2_000 * MS, 20, 0, "resp_3");
        for (int i = 0; i < 3; i++) {
            JsonObject turn = new JsonObject().put("model", "m1").put("stream", true).put("conversation",
                    new JsonObject().put("id", "conv_9")).put("input", "same words");
            exchange(traffic, RESPONSES, turn, (3_000 + 1_000 * i) * MS, 20, 0, "resp_c" + i);
        }

        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_conversation_turn_gap_seconds_sum", "after", "tool", "turn", "2"))
                .isCloseTo(0.15, within(1e-9));
        // unknown: the orphan, and the conversation's first turn here (its id never seen)
        assertThat(s.sum("llm_sidecar_conversation_requests_total", "link", "unknown")).isEqualTo(2);
        assertThat(s.sum("llm_sidecar_conversation_time_to_first_token_seconds_count", "turn", "unknown",
                "prefix", "cold")).isEqualTo(2);
        // the conversation's later turns: linked to the newest, 750 ms gaps, their turns unknown as its first's
        assertThat(s.sum("llm_sidecar_conversation_requests_total", "link", "next")).isEqualTo(3);
        assertThat(s.sum("llm_sidecar_conversation_turn_gap_seconds_sum", "turn", "unknown"))
                .isCloseTo(1.5, within(1e-9));
        assertThat(s.sum("llm_sidecar_conversation_requests_total", "link", "repeated")).isZero();
    }

    /**
     * A request the engine refused (429) leaves the table: its resend is the same first turn, not a regeneration; a
     * request with instructions only has nothing to link and is not kept.
     */
    @Test
    void aRefusedRequestsResendIsNoRegenerationAndInstructionsAloneAreNoConversation() {
        TrafficObserver traffic = traffic(Map.of());
        JsonObject body = chat(new JsonArray().add(msg("user", "hi")));
        ExchangeObserver refused = traffic.exchangeStarted(new ChatHead(Map.of()), CHAT, 1_000 * MS);
        InspectedRequest inspected = CHAT.format().inspect(Buffer.buffer(body.encode()));
        refused.requestInspected(inspected.model(), inspected.stream(), inspected.priority());
        refused.conversationRead(inspected.conversation());
        refused.requestSent();
        refused.responseStarted(429, false, 1_010 * MS);
        refused.ended(Outcome.UPSTREAM_ERROR, 429, 1_020 * MS);
        exchange(traffic, CHAT, body, 2_000 * MS, 10, 0, null);
        JsonObject instructions = chat(new JsonArray().add(msg("system", "be brief")));
        exchange(traffic, CHAT, instructions, 3_000 * MS, 10, 0, null);
        exchange(traffic, CHAT, instructions, 4_000 * MS, 10, 0, null);

        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_conversation_requests_total", "link", "first")).isEqualTo(4);
        assertThat(s.sum("llm_sidecar_conversation_requests_total", "link", "repeated")).isZero();
        assertThat(s.sum("llm_sidecar_conversation_table_entries")).isEqualTo(1);
    }

    /** Off (the default): no body is read for it, and no conversation series exists. */
    @Test
    void offNothingIsReadAndNoSeriesExists() {
        telemetry = new SidecarTelemetry(registry.getPrometheusRegistry(), TestConfigs.sidecar("http://127.0.0.1:1",
                ProxyFixture.pinned(Map.of(), "m1")), System::nanoTime);
        LlmOperation chat = new LlmRoutes(new JsonFactory()).match("POST", "/v1/chat/completions");
        JsonObject body = chat(new JsonArray().add(msg("user", "hi")));
        assertThat(chat.format().inspect(Buffer.buffer(body.encode())).conversation()).isNull();
        exchange(telemetry.traffic(), chat, body, 1_000 * MS, 10, 0, null);
        assertThat(scrape().text()).doesNotContain("llm_sidecar_conversation");
        assertThat(LiveStats.render(telemetry).containsKey("conversations")).isFalse();
    }

    /** Past its age limit a turn leaves the table: the next one starts a new, cold conversation, and it is counted. */
    @Test
    void aTurnOlderThanTheAgeLimitLeavesAndItsConversationsLengthIsObserved() {
        TrafficObserver traffic = traffic(Map.of("sidecar.conversations.max-age", "PT10S"));
        JsonArray m = new JsonArray().add(msg("user", "hi"));
        exchange(traffic, CHAT, chat(m), 1_000 * MS, 10, 0, null);
        m.add(msg("assistant", "hello")).add(msg("user", "again"));
        exchange(traffic, CHAT, chat(m), 2_000 * MS, 10, 0, null);
        m.add(msg("assistant", "yes")).add(msg("user", "later"));
        exchange(traffic, CHAT, chat(m), 30_000 * MS, 10, 0, null); // both earlier turns are too old by now

        Scrape s = scrape();
        assertThat(s.sum("llm_sidecar_conversation_evictions_total", "reason", "age")).isEqualTo(2);
        assertThat(s.sum("llm_sidecar_conversation_evictions_total", "reason", "capacity")).isZero();
        assertThat(s.sum("llm_sidecar_conversation_turns_count")).isEqualTo(1);
        assertThat(s.sum("llm_sidecar_conversation_turns_sum")).isEqualTo(2);
        assertThat(s.sum("llm_sidecar_conversation_time_to_first_token_seconds_count", "turn", "3-4", "prefix",
                "cold")).as("its turn from its own history, cold: its past left the table").isEqualTo(1);
    }
}
