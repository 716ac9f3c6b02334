package dev.llmsidecar.sweep;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Recorded records as AIPerf's {@code mooncake_trace} loader replays conversations ({@code bin/trace-merge --for
 * aiperf}; docs/sweep.md, "For AIPerf"), following the loader of AIPerf 0.6.0 (commit
 * {@value #AIPERF_COMMIT}), whose behaviour is the {@code deltas_without_responses} context mode of later versions:
 * the records that share a {@code session_id} are one conversation's turns in file order, and each turn is sent
 * after every earlier turn's text and the live answer to it. So a turn's record carries only its new input:
 *
 * <ul>
 *   <li>a conversation is the records of one {@code conversation_id} (sidecar.conversations), else of one
 *       {@code session_id} (the session header), in arrival order; its id is written as {@code session_id};
 *   <li>its first turn keeps its arrival ({@code timestamp}), its whole prompt and its {@code hash_ids} (prefixes
 *       shared between conversations, a system prompt, stay shared);
 *   <li>turn N+1 has {@code input_length} = prompt(N+1) − prompt(N) − (output(N) − reasoning(N)) (its history
 *       resent, less the answer the replay will prepend, whose reasoning a client does not resend), at least 1 (a
 *       clamp, counted: a truncated or summarised history, a regeneration), new {@code hash_ids} of its own (ids of
 *       its session, turn and block: the new input shares nothing), and instead of a timestamp a {@code delay}: the
 *       milliseconds from turn N's end to its arrival, as the loader waits after the previous turn completes;
 *   <li>a record of no conversation is one request of its own, with its timestamp;
 *   <li>a request that did not end well ({@code outcome} other than {@code ok}) is left out, counted by outcome (it
 *       stays in the recorder's files): the loader would send its {@code output_length}, 0 or a cut-off count, as
 *       {@code max_tokens}; an {@code ok} one with no output is sent with 1 (counted).
 * </ul>
 *
 * A row has the loader's fields only: {@code session_id}, {@code timestamp} or {@code delay}, {@code input_length},
 * {@code output_length} and {@code hash_ids}, all integers but the session's string.
 */
final class AiperfTrace {

    /** The AIPerf commit whose loader this follows (esoba/aiperf tag v0.6.0). */
    static final String AIPERF_COMMIT = "0746a7cdeb259f365e1124ffa94b2a976207b668";

    private static final byte[] DELTA_IDS = "llm-sidecar aiperf delta v1\0".getBytes(StandardCharsets.US_ASCII);

    /** What the conversion did, for its summary line. */
    record Summary(int rows, int conversations, int laterTurns, int inputClamps, int outputClamps,
            Map<String, Integer> leftOut) {
    }

    /** Where a conversation is: its id, how many rows it has so far, its last kept record. */
    private static final class Conversation {
        final String id;
        int turns;
        long prompt;
        long output;
        long reasoning;
        double endMs;

        Conversation(String id) {
            this.id = id;
        }
    }

    private final List<JsonObject> rows = new ArrayList<>();
    private final Map<String, Conversation> conversations = new HashMap<>();
    private final Map<String, Integer> leftOut = new TreeMap<>();
    private int laterTurns;
    private int inputClamps;
    private int outputClamps;

    /**
     * Converts {@code records}, sorted by arrival, each with its {@code timestamp} already rebased to the output's
     * first arrival.
     */
    static AiperfTrace of(List<JsonObject> records) {
        AiperfTrace t = new AiperfTrace();
        for (JsonObject r : records) {
            t.add(r);
        }
        return t;
    }

    List<JsonObject> rows() {
        return rows;
    }

    Summary summary() {
        return new Summary(rows.size(), conversations.size(), laterTurns, inputClamps, outputClamps, leftOut);
    }

    private void add(JsonObject r) {
        String outcome = r.getString("outcome");
        if (outcome != null && !outcome.equals("ok")) {
            leftOut.merge(outcome, 1, Integer::sum);
            return;
        }
        long timestamp = r.getLong("timestamp");
        long prompt = r.getLong("input_length");
        long output = r.getLong("output_length");
        long sentOutput = output;
        if (sentOutput < 1) {
            sentOutput = 1;
            outputClamps++;
        }
        Object e2e = r.getValue("e2e_ms");
        double endMs = timestamp + (e2e instanceof Number n ? n.doubleValue() : 0); // no e2e: from its arrival
        long reasoning = Math.max(0, Math.min(output, r.getLong("reasoning_length", 0L)));
        String id = r.getString("conversation_id", r.getString("session_id"));
        JsonObject row = new JsonObject();
        if (id == null) {
            rows.add(row.put("timestamp", timestamp).put("input_length", prompt).put("output_length", sentOutput)
                    .put("hash_ids", r.getJsonArray("hash_ids")));
            return;
        }
        Conversation c = conversations.get(id);
        if (c == null) {
            c = new Conversation(id);
            conversations.put(id, c);
            rows.add(row.put("session_id", id).put("timestamp", timestamp).put("input_length", prompt)
                    .put("output_length", sentOutput).put("hash_ids", r.getJsonArray("hash_ids")));
        } else {
            long fresh = prompt - c.prompt - (c.output - c.reasoning);
            if (fresh < 1) {
                fresh = 1;
                inputClamps++;
            }
            laterTurns++;
            rows.add(row.put("session_id", id).put("delay", Math.max(0, Math.round(timestamp - c.endMs)))
                    .put("input_length", fresh).put("output_length", sentOutput)
                    .put("hash_ids", deltaIds(id, c.turns,
                            TraceRecord.blocks((int) Math.min(fresh, Integer.MAX_VALUE)))));
        }
        c.turns++;
        c.prompt = prompt;
        c.output = output;
        c.reasoning = reasoning;
        c.endMs = endMs;
    }

    /**
     * The ids of a later turn's new input: the first 53 bits of SHA-256("llm-sidecar aiperf delta v1" 0x00 session
     * 0x00 turn 0x00 block), so equal only to themselves (the session id is already a keyed hash: nothing to key).
     */
    static JsonArray deltaIds(String session, int turn, int blocks) {
        JsonArray ids = new JsonArray();
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        for (int i = 0; i < blocks; i++) {
            sha.update(DELTA_IDS);
            sha.update((session + "\0" + turn + "\0" + i).getBytes(StandardCharsets.UTF_8));
            byte[] h = sha.digest();
            long v = 0;
            for (int k = 0; k < 8; k++) {
                v = (v << 8) | (h[k] & 0xFF);
            }
            ids.add(v >>> 11);
        }
        return ids;
    }
}
