package dev.llmsidecar.conversation;

import static dev.llmsidecar.metrics.Contract.CONVERSATION_AGENT_TIME;
import static dev.llmsidecar.metrics.Contract.CONVERSATION_CACHE_HIT;
import static dev.llmsidecar.metrics.Contract.CONVERSATION_ENTRIES;
import static dev.llmsidecar.metrics.Contract.CONVERSATION_EVICTIONS;
import static dev.llmsidecar.metrics.Contract.CONVERSATION_INPUT_TOKENS;
import static dev.llmsidecar.metrics.Contract.CONVERSATION_REQUESTS;
import static dev.llmsidecar.metrics.Contract.CONVERSATION_TTFT;
import static dev.llmsidecar.metrics.Contract.CONVERSATION_TURNS;
import static dev.llmsidecar.metrics.Contract.CONVERSATION_TURN_GAP;
import static dev.llmsidecar.metrics.Label.AFTER;
import static dev.llmsidecar.metrics.Label.LINK;
import static dev.llmsidecar.metrics.Label.MODEL;
import static dev.llmsidecar.metrics.Label.PART;
import static dev.llmsidecar.metrics.Label.PREFIX;
import static dev.llmsidecar.metrics.Label.REASON;
import static dev.llmsidecar.metrics.Label.TURN;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import dev.llmsidecar.timeline.Outcome;
import dev.llmsidecar.timeline.RequestResult;
import dev.llmsidecar.window.SlidingWindowHistogram;
import dev.llmsidecar.window.WindowStats;
import dev.llmsidecar.wire.ConversationReader;
import dev.llmsidecar.wire.ConversationReader.Conversation;
import dev.llmsidecar.wire.HistoryDigest;
import dev.llmsidecar.wire.TurnCounter.After;
import dev.llmsidecar.wire.TurnCounter.Position;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Conversations and agent loops (sidecar.conversations, docs/metrics.md "Conversations"): each chat request's turn
 * and what it answers, linked to the turn before it through the {@link ConversationTable}, recorded on series of
 * their own: TTFT, input tokens and prefix-cache hit ratio by turn bucket, {@code after} and cold/warm; the gap between
 * turns; turns per conversation; an agent's time in the model and in its tools. Each series is declared once in the
 * contract and recorded here only. Calls come from the exchanges' event loops; a call costs a table lookup and a few
 * bound handles, per request, never per token.
 */
public final class Conversations {

    /** The turn buckets, in order: the label values of {@code turn} and the live page's rows. */
    public static final List<String> TURN_BUCKETS = List.of("1", "2", "3-4", "5-8", "9-16", "17+", "unknown");

    private static final double NS = 1e9;
    private static final ConversationTable.Link NOTHING_TO_LINK =
            new ConversationTable.Link(ConversationTable.Kind.FIRST, 1, -1, -1, 0, -1);

    private final Recorders recorders;
    private final ConversationTable table;
    private final Duration liveWindow;
    private final SlidingWindowHistogram[] ttftByTurn = new SlidingWindowHistogram[TURN_BUCKETS.size()];
    private final SlidingWindowHistogram[] gapByAfter = new SlidingWindowHistogram[2];
    private final Map<TurnKey, TurnSeries> turnSeries = new ConcurrentHashMap<>();
    private final Map<GapKey, Bound> gapSeries = new ConcurrentHashMap<>();
    private final Map<String, Bound[]> agentSeries = new ConcurrentHashMap<>();
    private final Map<LinkKey, Bound> linkSeries = new ConcurrentHashMap<>();
    private final Bound evictedForCapacity;
    private final Bound evictedForAge;
    private final Bound turnsPerConversation;

    /**
     * @param liveWindow the window of the live page's percentiles (sidecar.windows.drift-short)
     */
    public Conversations(Recorders recorders, SidecarConfig.Conversations config, Duration liveWindow,
            LongSupplier nanoClock) {
        if (config.maxEntries() < 1) {
            throw new IllegalArgumentException("sidecar.conversations.max-entries must be at least 1: "
                    + config.maxEntries());
        }
        this.recorders = recorders;
        this.liveWindow = liveWindow;
        this.evictedForCapacity = recorders.bound(CONVERSATION_EVICTIONS, LabelValues.of(REASON, "capacity"));
        this.evictedForAge = recorders.bound(CONVERSATION_EVICTIONS, LabelValues.of(REASON, "age"));
        evictedForCapacity.record(0);
        evictedForAge.record(0);
        this.turnsPerConversation = recorders.bound(CONVERSATION_TURNS);
        this.table = new ConversationTable(config.maxEntries(), config.maxAge().toNanos(), this::evicted);
        recorders.observe(CONVERSATION_ENTRIES, table::size);
        Duration slice = liveWindow.dividedBy(10);
        for (int i = 0; i < ttftByTurn.length; i++) {
            ttftByTurn[i] = new SlidingWindowHistogram(nanoClock, slice, liveWindow);
        }
        for (int i = 0; i < gapByAfter.length; i++) {
            gapByAfter[i] = new SlidingWindowHistogram(nanoClock, slice, liveWindow);
        }
    }

    /**
     * A chat request arrived, whose body says where it sits in its conversation: it is linked to the turn before it,
     * and the gap since that turn's end is recorded.
     *
     * @param model the request's bounded model label
     * @return the request's turn, for {@link #ended}
     */
    public Turn arrived(Conversation conversation, String model, long arrivalNanos) {
        boolean afterTool = conversation.position().after() == After.TOOL;
        boolean byId = conversation.linked() != ConversationReader.Linked.HISTORY;
        // no message of a conversation (none, or instructions only): nothing to link, nothing kept
        ConversationTable.Link link = conversation.key() == 0 ? NOTHING_TO_LINK
                : table.arrived(conversation.key(), conversation.previousKey(), conversation.alias(), afterTool, byId,
                        arrivalNanos);
        // by history the request counts its own turns; by an id only the table knows them (0: unknown)
        Position position = byId ? new Position(link.turn(), conversation.position().after())
                : conversation.position();
        boolean warm = link.kind() != ConversationTable.Kind.FIRST;
        String linkLabel = byId && link.kind() == ConversationTable.Kind.FIRST ? "unknown"
                : link.kind().name().toLowerCase(java.util.Locale.ROOT);
        Turn turn = new Turn(conversation, link, position, warm, model, arrivalNanos, linkLabel);
        linkSeries.computeIfAbsent(new LinkKey(model, linkLabel), k -> recorders.bound(CONVERSATION_REQUESTS,
                LabelValues.of(MODEL, k.model).and(LINK, k.link))).record(1);
        if (link.gapNanos() >= 0) {
            gapSeries.computeIfAbsent(new GapKey(model, turn.bucket(), position.after()),
                    k -> recorders.bound(CONVERSATION_TURN_GAP, LabelValues.of(MODEL, k.model).and(TURN, k.turn)
                            .and(AFTER, k.after.label()))).record(link.gapNanos() / NS);
            gapByAfter[afterTool ? 1 : 0].record(link.gapNanos());
            if (afterTool) {
                agent(model)[1].record(link.gapNanos() / NS);
            }
        }
        if (link.modelNanosBefore() >= 0) {
            agent(model)[0].record(link.modelNanosBefore() / NS);
        }
        return turn;
    }

    /**
     * The request of {@code turn} ended: its answer's end is what the next turn's gap runs from, and its latency,
     * tokens and cache hits go on the turn series.
     *
     * @param responseId the id the engine gave its response (Responses API), which the next turn may name; or null
     */
    public void ended(Turn turn, RequestResult result, String responseId, long endNanos) {
        if (result.status() / 100 == 2) {
            long alias = responseId == null ? 0 : HistoryDigest.ofId(ConversationReader.RESPONSE_ID, responseId);
            table.ended(turn.link, turn.conversation.key(), alias, endNanos);
        } else {
            table.forget(turn.link, turn.conversation.key()); // the engine did not serve it: a resend is no regeneration
        }
        TurnSeries series = turnSeries.computeIfAbsent(new TurnKey(turn.model, turn.bucket(), turn.position.after(),
                turn.warm), this::bind);
        boolean ok = result.outcome() == Outcome.OK;
        if (ok && result.streaming() && result.ttftNanos() >= 0) {
            series.ttft.record(result.ttftNanos() / NS);
            int bucket = TURN_BUCKETS.indexOf(turn.bucket());
            if (bucket >= 0) {
                ttftByTurn[bucket].record(result.ttftNanos());
            }
        }
        if (result.promptTokens() > 0) {
            series.inputTokens.record(result.promptTokens());
            if (result.cachedTokens() >= 0) {
                series.cacheHit.record(Math.min(1.0, (double) result.cachedTokens() / result.promptTokens()));
            }
        }
        if (turn.position.after() == After.TOOL) {
            agent(turn.model)[0].record(Math.max(0, endNanos - turn.arrivalNanos) / NS);
        }
    }

    private TurnSeries bind(TurnKey k) {
        LabelValues values = LabelValues.of(MODEL, k.model).and(TURN, k.turn).and(AFTER, k.after.label())
                .and(PREFIX, k.warm ? "warm" : "cold");
        return new TurnSeries(recorders.ended(CONVERSATION_TTFT, true, values),
                recorders.bound(CONVERSATION_INPUT_TOKENS, values), recorders.bound(CONVERSATION_CACHE_HIT, values));
    }

    /** The agent-time counters of a model: [model, tool]. */
    private Bound[] agent(String model) {
        return agentSeries.computeIfAbsent(model, m -> new Bound[] {
                recorders.bound(CONVERSATION_AGENT_TIME, LabelValues.of(MODEL, m).and(PART, "model")),
                recorders.bound(CONVERSATION_AGENT_TIME, LabelValues.of(MODEL, m).and(PART, "tool"))});
    }

    private void evicted(ConversationTable.Eviction why, int turns, boolean lastOfItsConversation) {
        (why == ConversationTable.Eviction.CAPACITY ? evictedForCapacity : evictedForAge).record(1);
        if (lastOfItsConversation) {
            turnsPerConversation.record(turns);
        }
    }

    /**
     * The {@code conversations} member of /q/llm (docs/slo.md): TTFT p50/p99 of successful streaming chat requests by
     * turn bucket, and the gap between turns by what the next turn answers, over the live window.
     */
    public JsonObject render() {
        JsonObject ttft = new JsonObject();
        for (int i = 0; i < ttftByTurn.length; i++) {
            WindowStats s = ttftByTurn[i].snapshot(liveWindow);
            if (s.count() > 0) {
                ttft.put(TURN_BUCKETS.get(i), stats(s));
            }
        }
        JsonObject gaps = new JsonObject();
        for (int i = 0; i < gapByAfter.length; i++) {
            WindowStats s = gapByAfter[i].snapshot(liveWindow);
            if (s.count() > 0) {
                gaps.put(i == 0 ? After.USER.label() : After.TOOL.label(), stats(s));
            }
        }
        // what is not known yet is left out, as everywhere in /q/llm (docs/slo.md)
        JsonObject out = new JsonObject().put("window", liveWindow.toSeconds() + "s");
        if (!ttft.isEmpty()) {
            out.put("ttft_by_turn", ttft);
        }
        if (!gaps.isEmpty()) {
            out.put("turn_gap_by_after", gaps);
        }
        return out.put("table_entries", table.size());
    }

    private static JsonObject stats(WindowStats s) {
        JsonObject o = new JsonObject().put("count", s.count());
        putFinite(o, "p50", s.p50());
        putFinite(o, "p90", s.p90());
        putFinite(o, "p99", s.p99());
        return o;
    }

    private static void putFinite(JsonObject o, String name, double v) {
        if (Double.isFinite(v)) {
            o.put(name, v);
        }
    }

    /** A chat request's place in its conversation, from its arrival to its end. */
    public static final class Turn {
        private final Conversation conversation;
        private final ConversationTable.Link link;
        private final Position position;
        private final boolean warm;
        private final String model;
        private final long arrivalNanos;
        private final String linkLabel;

        Turn(Conversation conversation, ConversationTable.Link link, Position position, boolean warm, String model,
                long arrivalNanos, String linkLabel) {
            this.linkLabel = linkLabel;
            this.conversation = conversation;
            this.link = link;
            this.position = position;
            this.warm = warm;
            this.model = model;
            this.arrivalNanos = arrivalNanos;
        }

        /** Its turn bucket: 1, 2, 3-4, 5-8, 9-16, 17+ or unknown. */
        public String bucket() {
            return position.bucket();
        }

        public Position position() {
            return position;
        }

        /**
         * Its conversation's number in this process ({@link ConversationTable.Link#conversation}), the same for every
         * turn of it; 0 when it has none (no message of a conversation).
         */
        public int conversationNumber() {
            return link.conversation();
        }

        /** Its conversation was seen before (its prefix may be cached); cold: its first request here. */
        public boolean warm() {
            return warm;
        }

        public ConversationTable.Kind link() {
            return link.kind();
        }

        /** How it links to the turn before: first, next, next_of_unfinished, repeated, unknown. */
        public String linkLabel() {
            return linkLabel;
        }

        /** The gap since the end of the turn before, or -1 when there is none. */
        public long gapNanos() {
            return link.gapNanos();
        }
    }

    private record TurnKey(String model, String turn, After after, boolean warm) {
    }

    private record LinkKey(String model, String link) {
    }

    private record GapKey(String model, String turn, After after) {
    }

    private record TurnSeries(Bound ttft, Bound inputTokens, Bound cacheHit) {
    }
}
