package dev.llmsidecar.realengine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.testkit.OtlpReceiver;
import dev.llmsidecar.testkit.Processes;
import io.opentelemetry.proto.trace.v1.Span;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Cold and warm against llama-server's real prefix cache (../shared/reference/real-engine.md), through the packaged
 * sidecar with sidecar.conversations on: two conversations of three turns, each opening with a long question of its
 * own, each later turn resending the history. The first turn of each finds nothing of its prompt in the engine's
 * cache and reads cold; every later turn reads warm, and llama-server served at least half of its prompt from the
 * cache. Both as each request's span says (the sidecar's turn, cold or warm, and the engine's cached and prompt
 * tokens) and as the turn series count them.
 */
class ConversationsRealEngineIT {

    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** Five-letter English words, each one token of the llama SPM vocabulary (TraceRecordReplayIT checks them). */
    static final String[] WORDS = ("about after again where which there their other would could water think these "
            + "those every first found great house large later light might never often place right small sound still "
            + "study thing three under until while world write years young").split(" ");

    @Test
    void coldFirstTurnsFindNothingCachedAndWarmTurnsFindAtLeastHalfTheirPrompt() throws Exception {
        Vertx vertx = Vertx.vertx();
        OtlpReceiver otlp = new OtlpReceiver(vertx);
        int port = Processes.freePort();
        try (Processes.Running engine = Processes.llamaServer(port);
                Processes.Sidecar sidecar = new Processes.Sidecar("http://127.0.0.1:" + port, Map.of(
                        "OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL",
                        "http/protobuf", "OTEL_BSP_SCHEDULE_DELAY", "100"),
                        Map.of("sidecar.conversations.enabled", "true"))) {
            sidecar.awaitReady(Duration.ofSeconds(30));
            List<String[]> sent = new ArrayList<>(); // {trace id, "cold" | "warm"}
            for (int c = 0; c < 2; c++) {
                StringBuilder question = new StringBuilder("conversation ").append(c).append(':');
                java.util.Random random = new java.util.Random(c);
                for (int w = 0; w < 400; w++) {
                    question.append(' ').append(WORDS[random.nextInt(WORDS.length)]);
                }
                JsonArray messages = new JsonArray().add(message("user", question.toString()));
                for (int turn = 1; turn <= 3; turn++) {
                    if (turn > 1) {
                        messages.add(message("assistant", "noted " + (turn - 1))).add(message("user", "and then?"));
                    }
                    String traceId = HexFormat.of().formatHex(java.security.SecureRandom.getSeed(16));
                    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                            + sidecar.proxyPort + "/v1/chat/completions")).header("content-type", "application/json")
                            .header("traceparent", "00-" + traceId + "-0102030405060708-01")
                            .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(new JsonObject()
                                    .put("model", "tiny").put("stream", true).put("max_tokens", 4)
                                    .put("temperature", 0).put("messages", messages.copy()).encode())).build(),
                            HttpResponse.BodyHandlers.ofString());
                    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                    sent.add(new String[] {traceId, turn == 1 ? "cold" : "warm"});
                }
            }
            Map<String, Map<String, Object>> spans = new HashMap<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline && !sent.stream().allMatch(s -> spans.containsKey(s[0]))) {
                for (Span span : otlp.spans()) {
                    spans.put(HexFormat.of().formatHex(span.getTraceId().toByteArray()),
                            OtlpReceiver.attributes(span.getAttributesList()));
                }
                Thread.sleep(100);
            }
            for (String[] s : sent) {
                Map<String, Object> a = spans.get(s[0]);
                assertThat(a).as("the span of %s", s[0]).isNotNull();
                assertThat(a.get("llm_sidecar.conversation.prefix")).as("%s", a).isEqualTo(s[1]);
                long prompt = (Long) a.get("gen_ai.usage.input_tokens");
                long cached = (Long) a.get("gen_ai.usage.cache_read.input_tokens");
                if (s[1].equals("cold")) {
                    assertThat(cached).as("cold: nothing of its prompt cached (%s)", a).isZero();
                } else {
                    assertThat((double) cached / prompt).as("warm: cached / prompt tokens (%s)", a)
                            .isGreaterThanOrEqualTo(0.5);
                }
            }
            String metrics = sidecar.metrics();
            String ratio = "llm_sidecar_conversation_prefix_cache_hit_ratio";
            assertThat(sum(metrics, ratio + "_bucket{", "prefix=\"cold\"", "le=\"0.0\"")).isEqualTo(2);
            assertThat(sum(metrics, ratio + "_count{", "prefix=\"cold\"")).isEqualTo(2);
            assertThat(sum(metrics, ratio + "_bucket{", "prefix=\"warm\"", "le=\"0.4\"")).isZero();
            assertThat(sum(metrics, ratio + "_count{", "prefix=\"warm\"")).isEqualTo(4);
        } finally {
            otlp.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    /** The sum of the exposition lines that start with {@code name} and hold every fragment. */
    static double sum(String metrics, String name, String... fragments) {
        return metrics.lines().filter(l -> l.startsWith(name) && java.util.Arrays.stream(fragments).allMatch(l::contains))
                .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    static JsonObject message(String role, String content) {
        return new JsonObject().put("role", role).put("content", content);
    }
}
