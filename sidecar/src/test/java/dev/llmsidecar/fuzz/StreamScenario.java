package dev.llmsidecar.fuzz;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * One fuzzed case: an engine (how it writes SSE and JSON, and what include_usage changes in its stream), the events
 * of its stream, how it answers the learning request and the probe request (status, framing, where it flushes), and
 * the client's probe request. Everything is decided when the case is generated; rendering is a pure function of the
 * case, the phase and whether the engine was asked for usage, so a direct and a proxied request get the same bytes
 * unless the sidecar turned include_usage on.
 */
record StreamScenario(String model, Engine engine, List<Event> events, int usageChunkAt, boolean done,
        ReplySpec learn, ReplySpec probe, ClientRequest client) {

    /** The request that teaches the sidecar the model's layout (client usage absent), then the one under test. */
    enum Phase { LEARN, PROBE }

    enum Framing { CHUNKED, LENGTH, CLOSE }

    /** What the engine does when a request asks for usage. */
    enum UsageReaction {
        /** vLLM, SGLang: one more chunk, {@code "choices":[]} with the usage. */
        SEPARATE_CHUNK,
        /** OpenAI: that chunk, and {@code "usage":null} on every other chunk. */
        NULL_ON_EVERY_CHUNK,
        /** Usage merged into the chunk that carries finish_reason. */
        MERGED_INTO_FINAL,
        /** Nothing changes. */
        IGNORED,
        /** Usage merged into the final chunk whether asked or not (the sidecar must learn it never needs to ask). */
        ALWAYS_MERGED,
        /** 400 for a request with stream_options (a server that forbids unknown request members). */
        REJECTED
    }

    /** What the client's probe request says about usage. */
    enum ClientUsage {
        ABSENT, NULL, EMPTY_OBJECT, TRUE, FALSE, OTHER_OPTIONS;

        /** The sidecar may turn include_usage on for this request. */
        boolean injectable() {
            return this == ABSENT || this == NULL || this == EMPTY_OBJECT;
        }
    }

    enum LineEnding {
        LF("\n"), CRLF("\r\n"), CR("\r");

        final String text;

        LineEnding(String text) {
            this.text = text;
        }
    }

    /** How the client writes its JSON body. */
    enum JsonStyle { COMPACT, SPACED, PRETTY }

    /**
     * @param reaction what include_usage changes
     * @param spaced JSON written with {@code ", "} and {@code ": "} (Python's default) instead of compact
     * @param asciiEscapes non-ASCII written as {@code \\uXXXX} (Python's ensure_ascii) instead of raw UTF-8
     * @param spaceAfterData {@code "data: "} instead of {@code "data:"}
     * @param usagePosition index among a chunk's top-level members where usage goes (clipped to the end)
     * @param usageChunkMultiLine the usage chunk is written pretty, one data line per member
     * @param cachedTokens the usage carries prompt_tokens_details
     * @param eol the line ending of the usage chunk and [DONE], and of every event unless the case mixes them
     */
    record Engine(UsageReaction reaction, boolean spaced, boolean asciiEscapes, boolean spaceAfterData,
            int usagePosition, boolean usageChunkMultiLine, boolean cachedTokens, LineEnding eol) {
    }

    /** One piece of the stream; each carries the line ending its lines use. */
    sealed interface Event {
        LineEnding eol();
    }

    /**
     * A data chunk with one choice.
     *
     * @param text the delta's content (or reasoning_content)
     * @param multiLine its JSON is written pretty, one data line per member
     * @param eventName an {@code event:} line before the data, or null
     * @param comment a comment line before the data, or null
     */
    record Chunk(String text, boolean reasoning, boolean role, boolean multiLine, String eventName, String comment,
            LineEnding eol) implements Event {
    }

    /** A comment-only block ({@code : ping}). */
    record Comment(String text, LineEnding eol) implements Event {
    }

    /** A data line that is not a JSON chunk (any bytes but CR and LF). */
    record Garbage(byte[] data, LineEnding eol) implements Event {
    }

    /** An empty line on its own (dispatches nothing). */
    record Blank(LineEnding eol) implements Event {
    }

    /** A block of fields without data ({@code retry:}, {@code id:}, {@code event:}). */
    record FieldsOnly(String line, LineEnding eol) implements Event {
    }

    /**
     * How the engine answers one phase.
     *
     * @param announceClose a {@code Connection: close} header (always closes after the response)
     * @param silentClose closes after a framed response without saying so (llama.cpp's server)
     * @param chunkSizes HTTP chunk sizes, used in turn
     * @param flushPoints where the engine flushes, as fractions of the wire length in 1/65536
     * @param pauses per flush point, whether the engine pauses after it (only towards the sidecar)
     * @param errorMessage the message of an error body
     */
    record ReplySpec(int status, String reason, Framing framing, boolean announceClose, boolean silentClose,
            String contentTypeName, String contentType, List<RawHttp.Header> extraHeaders, int[] chunkSizes,
            int[] flushPoints, boolean[] pauses, String errorMessage) {
    }

    /**
     * The client's request.
     *
     * @param completions /v1/completions (prompt, text chunks) instead of /v1/chat/completions
     * @param order a permutation of the body's members
     */
    record ClientRequest(ClientUsage usage, boolean completions, String prompt, JsonStyle style, boolean asciiEscapes,
            int order) {
    }

    /** How long the engine pauses after a flush marked for it: long enough for the sidecar to read the piece. */
    static final long PAUSE_NANOS = 400_000;

    // ---- generation ----

    /** Weighted: the reactions injection must undo most, a server refusing stream_options rarely (fuzzing finding 1). */
    private static final UsageReaction[] REACTIONS = {UsageReaction.SEPARATE_CHUNK, UsageReaction.SEPARATE_CHUNK,
        UsageReaction.SEPARATE_CHUNK, UsageReaction.NULL_ON_EVERY_CHUNK, UsageReaction.NULL_ON_EVERY_CHUNK,
        UsageReaction.NULL_ON_EVERY_CHUNK, UsageReaction.MERGED_INTO_FINAL, UsageReaction.MERGED_INTO_FINAL,
        UsageReaction.MERGED_INTO_FINAL, UsageReaction.IGNORED, UsageReaction.ALWAYS_MERGED};
    private static final ClientUsage[] CLIENT_USAGES = {ClientUsage.ABSENT, ClientUsage.ABSENT, ClientUsage.ABSENT,
        ClientUsage.NULL, ClientUsage.EMPTY_OBJECT, ClientUsage.TRUE, ClientUsage.FALSE, ClientUsage.OTHER_OPTIONS};
    private static final Framing[] FRAMINGS = {Framing.CHUNKED, Framing.CHUNKED, Framing.LENGTH, Framing.CLOSE};
    private static final int[] ERROR_STATUSES = {400, 401, 404, 422, 429, 500, 502, 503};
    private static final String[] SSE_TYPES = {"text/event-stream", "text/event-stream; charset=utf-8",
        "text/event-stream;charset=UTF-8"};
    private static final String[] ODD_REASONS = {"", "Okay", "All Good", "Whatever You Say"};
    private static final String[] HEADER_NAMES = {"x-request-id", "cache-control", "server", "x-accel-buffering",
        "vary", "X-Engine", "openai-processing-ms"};
    private static final String[] EVENT_NAMES = {"message", "delta", "error", "completion", "chunk"};
    private static final String[] FIELD_LINES = {"retry: 3000", "id: 42", "event: ping", "data", "id", ":",
        "event:", "retry: x"};

    /**
     * Reads one case from the fuzzer's input; a short input gives the plainest case (every choice its first value).
     * What shapes the stream is read first, so that even a short input makes a stream of some events.
     */
    static StreamScenario generate(FuzzedDataProvider d, String model) {
        LineEnding[] eols = LineEnding.values();
        UsageReaction reaction = oneIn(d, 32) ? UsageReaction.REJECTED : pick(d, REACTIONS);
        LineEnding eol = eols[d.consumeInt(0, eols.length - 1)];
        boolean mixedEol = oneIn(d, 8);
        int count = d.consumeInt(0, 14);
        List<Event> events = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            events.add(event(d, mixedEol ? eols[d.consumeInt(0, eols.length - 1)] : eol, i == 0));
        }
        // engines put the usage chunk right after the final chunk; a few cases put it anywhere
        int usageChunkAt = oneIn(d, 4) ? d.consumeInt(0, events.size()) : -1;
        boolean done = !oneIn(d, 6);
        Engine engine = new Engine(reaction, d.consumeBoolean(), d.consumeBoolean(), !oneIn(d, 4), d.consumeInt(0, 6),
                oneIn(d, 8), d.consumeBoolean(), eol);
        ClientRequest client = new ClientRequest(pick(d, CLIENT_USAGES), oneIn(d, 4), d.consumeString(24),
                JsonStyle.values()[d.consumeInt(0, 2)], d.consumeBoolean(), d.consumeInt(0, 119));
        ReplySpec learn = replySpec(d, true);
        ReplySpec probe = replySpec(d, false);
        return new StreamScenario(model, engine, List.copyOf(events), usageChunkAt, done, learn, probe, client);
    }

    private static Event event(FuzzedDataProvider d, LineEnding eol, boolean first) {
        int kind = d.consumeInt(0, 15);
        if (kind <= 9 || kind == 15) {
            boolean large = kind == 15;
            String text = d.consumeString(large ? 64 : 16);
            if (large) {
                // now and then an event larger than the hold limit the rig sets (4 KB)
                int size = d.consumeInt(1_000, 12_000);
                StringBuilder big = new StringBuilder(size + 64);
                String unit = text.isEmpty() ? "x" : text;
                while (big.length() < size) {
                    big.append(unit);
                }
                text = big.toString();
            }
            return new Chunk(text, oneIn(d, 8), first && d.consumeBoolean(), oneIn(d, 10),
                    oneIn(d, 8) ? pick(d, EVENT_NAMES) : null, oneIn(d, 10) ? oneLine(d.consumeAsciiString(12)) : null,
                    eol);
        }
        return switch (kind) {
            case 10, 11 -> new Comment(oneLine(d.consumeAsciiString(16)), eol);
            case 12 -> new Garbage(garbage(d), eol);
            default -> oneIn(d, 2) ? new Blank(eol) : new FieldsOnly(pick(d, FIELD_LINES), eol);
        };
    }

    private static byte[] garbage(FuzzedDataProvider d) {
        String[] prefixes = {"", "{\"choices\":[],\"usage\":", "{\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"",
            "[DONE", "{\"usage\":null", "not json {"};
        byte[] prefix = prefixes[d.consumeInt(0, prefixes.length - 1)].getBytes(StandardCharsets.UTF_8);
        byte[] rest = d.consumeBytes(24);
        byte[] all = Arrays.copyOf(prefix, prefix.length + rest.length);
        System.arraycopy(rest, 0, all, prefix.length, rest.length);
        for (int i = 0; i < all.length; i++) {
            if (all[i] == '\n' || all[i] == '\r') {
                all[i] = ' '; // one data line: the bytes are garbage, the SSE framing is not
            }
        }
        return all;
    }

    private static ReplySpec replySpec(FuzzedDataProvider d, boolean learning) {
        int status = oneIn(d, learning ? 16 : 8) ? ERROR_STATUSES[d.consumeInt(0, ERROR_STATUSES.length - 1)] : 200;
        String reason = oneIn(d, 10) ? pick(d, ODD_REASONS) : reason(status);
        Framing framing = pick(d, FRAMINGS);
        boolean announceClose = framing == Framing.CLOSE ? !oneIn(d, 4) : oneIn(d, 8);
        boolean silentClose = framing != Framing.CLOSE && !announceClose && oneIn(d, 8);
        String typeName = d.consumeBoolean() ? "Content-Type" : "content-type";
        String type = status == 200 ? pick(d, SSE_TYPES) : "application/json";
        List<RawHttp.Header> extra = new ArrayList<>();
        for (int i = d.consumeInt(0, 2); i > 0; i--) {
            extra.add(new RawHttp.Header(pick(d, HEADER_NAMES), headerValue(d.consumeAsciiString(12))));
        }
        int[] chunkSizes = new int[d.consumeInt(1, 4)];
        for (int i = 0; i < chunkSizes.length; i++) {
            chunkSizes[i] = oneIn(d, 8) ? d.consumeInt(1, 4096) : d.consumeInt(1, 48);
        }
        int[] flushPoints = new int[d.consumeInt(0, 10)];
        boolean[] pauses = new boolean[flushPoints.length];
        for (int i = 0; i < flushPoints.length; i++) {
            flushPoints[i] = d.consumeInt(0, 65535);
            pauses[i] = oneIn(d, 3);
        }
        String message = d.consumeString(20);
        return new ReplySpec(status, reason, framing, announceClose, silentClose, typeName, type, List.copyOf(extra),
                chunkSizes, flushPoints, pauses, message);
    }

    /** True with probability 1/n; false when the input is used up (so a short input stays plain). */
    private static boolean oneIn(FuzzedDataProvider d, int n) {
        return d.consumeInt(0, n - 1) == n - 1;
    }

    private static <T> T pick(FuzzedDataProvider d, T[] values) {
        return values[d.consumeInt(0, values.length - 1)];
    }

    private static String oneLine(String s) {
        return s.replace('\r', ' ').replace('\n', ' ');
    }

    /** Visible ASCII and inner spaces: what a header value may be without a client library rejecting it. */
    private static String headerValue(String s) {
        StringBuilder sb = new StringBuilder();
        for (char c : s.toCharArray()) {
            sb.append(c >= 0x21 && c <= 0x7e ? c : '-');
        }
        return sb.length() == 0 ? "v" : sb.toString();
    }

    static String reason(int status) {
        return switch (status) {
            case 200 -> "OK";
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 404 -> "Not Found";
            case 422 -> "Unprocessable Entity";
            case 429 -> "Too Many Requests";
            case 500 -> "Internal Server Error";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            default -> "Status";
        };
    }

    // ---- what the case implies ----

    /**
     * Whether the sidecar must turn include_usage on for the probe: the client left it to it, the learning stream
     * was a complete, unedited 2xx stream without Content-Length, and nothing in it looked like usage (no usage sent
     * unprompted, no garbage that might hold a usage member).
     */
    boolean injectionExpected() {
        return client.usage().injectable() && learn.status() == 200 && learn.framing() != Framing.LENGTH
                && engine.reaction() != UsageReaction.ALWAYS_MERGED
                && events.stream().noneMatch(e -> e instanceof Garbage);
    }

    String path() {
        return client.completions() ? "/v1/completions" : "/v1/chat/completions";
    }

    // ---- rendering: the request ----

    /** The client's body for a phase (the learning request never mentions usage). */
    byte[] requestBody(Phase phase) {
        ClientUsage usage = phase == Phase.LEARN ? ClientUsage.ABSENT : client.usage();
        JsonStyle style = client.style();
        String colon = style == JsonStyle.COMPACT ? ":" : ": ";
        List<String> members = new ArrayList<>();
        members.add(member("model", quote(model, client.asciiEscapes()), colon));
        String prompt = quote(client.prompt(), client.asciiEscapes());
        members.add(client.completions() ? member("prompt", prompt, colon)
                : member("messages", "[{" + member("role", "\"user\"", colon) + sep(style) + member("content", prompt,
                        colon) + "}]", colon));
        members.add(member("stream", "true", colon));
        members.add(member("max_tokens", "16", colon));
        String options = switch (usage) {
            case ABSENT -> null;
            case NULL -> "null";
            case EMPTY_OBJECT -> "{}";
            case TRUE -> "{" + member("include_usage", "true", colon) + "}";
            case FALSE -> "{" + member("include_usage", "false", colon) + "}";
            case OTHER_OPTIONS -> "{" + member("continuous_usage_stats", "true", colon) + "}";
        };
        if (options != null) {
            members.add(member("stream_options", options, colon));
        }
        List<String> ordered = permute(members, client.order());
        if (style == JsonStyle.PRETTY) {
            return ("{\n  " + String.join(",\n  ", ordered) + "\n}\n").getBytes(StandardCharsets.UTF_8);
        }
        return ("{" + String.join(sep(style), ordered) + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static String sep(JsonStyle style) {
        return style == JsonStyle.COMPACT ? "," : ", ";
    }

    /** The permutation numbered {@code order} (mixed radix: each digit picks one of the members left). */
    private static List<String> permute(List<String> items, int order) {
        List<String> rest = new ArrayList<>(items);
        List<String> out = new ArrayList<>();
        while (!rest.isEmpty()) {
            int n = rest.size();
            out.add(rest.remove(order % n));
            order /= n;
        }
        return out;
    }

    // ---- rendering: the stream ----

    /** The entity of a 200 stream. */
    byte[] stream(boolean asked) {
        UsageReaction r = engine.reaction();
        boolean usageChunk = asked && (r == UsageReaction.SEPARATE_CHUNK || r == UsageReaction.NULL_ON_EVERY_CHUNK);
        boolean nullEverywhere = asked && r == UsageReaction.NULL_ON_EVERY_CHUNK;
        boolean merged = (asked && r == UsageReaction.MERGED_INTO_FINAL) || r == UsageReaction.ALWAYS_MERGED;
        int finalChunk = finalChunk();
        int usageAt = usageChunkIndex();
        String usage = usageObject((int) events.stream().filter(e -> e instanceof Chunk).count());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i <= events.size(); i++) {
            if (usageChunk && i == usageAt) {
                writeData(out, usageOnlyChunk(usage), engine.usageChunkMultiLine(), engine.eol().text);
            }
            if (i == events.size()) {
                break;
            }
            Event e = events.get(i);
            String eol = e.eol().text;
            if (e instanceof Chunk c) {
                if (c.comment() != null) {
                    write(out, ":" + c.comment() + eol);
                }
                if (c.eventName() != null) {
                    write(out, "event: " + c.eventName() + eol);
                }
                String member = i == finalChunk && merged ? usage : nullEverywhere ? "null" : null;
                writeData(out, chunk(c, i == finalChunk, member), c.multiLine(), eol);
            } else if (e instanceof Comment c) {
                write(out, ":" + c.text() + eol + eol);
            } else if (e instanceof Garbage g) {
                write(out, engine.spaceAfterData() ? "data: " : "data:");
                out.writeBytes(g.data());
                write(out, eol + eol);
            } else if (e instanceof Blank) {
                write(out, eol);
            } else if (e instanceof FieldsOnly f) {
                write(out, f.line() + eol + eol);
            }
        }
        if (done) {
            write(out, (engine.spaceAfterData() ? "data: " : "data:") + "[DONE]" + engine.eol().text
                    + engine.eol().text);
        }
        return out.toByteArray();
    }

    /** Index of the chunk that carries finish_reason (the last one), or -1. */
    private int finalChunk() {
        int last = -1;
        for (int i = 0; i < events.size(); i++) {
            if (events.get(i) instanceof Chunk) {
                last = i;
            }
        }
        return last;
    }

    /** Where the usage-only chunk goes: before the event of this index (events.size(): after all of them). */
    private int usageChunkIndex() {
        int last = finalChunk();
        return usageChunkAt >= 0 ? Math.min(usageChunkAt, events.size()) : last >= 0 ? last + 1 : events.size();
    }

    /** The members of one JSON object as [name, value] pairs, written by {@link #object}. */
    private List<String[]> chunk(Chunk c, boolean last, String usage) {
        boolean ascii = engine.asciiEscapes();
        List<String[]> choice = new ArrayList<>();
        choice.add(new String[] {"index", "0"});
        if (client.completions()) {
            choice.add(new String[] {"text", quote(c.text(), ascii)});
        } else {
            List<String[]> delta = new ArrayList<>();
            if (c.role()) {
                delta.add(new String[] {"role", "\"assistant\""});
            }
            delta.add(new String[] {c.reasoning() ? "reasoning_content" : "content", quote(c.text(), ascii)});
            choice.add(new String[] {"delta", String.join("\n", object(delta, false))});
        }
        choice.add(new String[] {"logprobs", "null"});
        choice.add(new String[] {"finish_reason", last ? "\"stop\"" : "null"});
        List<String[]> members = head();
        members.add(new String[] {"choices", "[" + String.join("\n", object(choice, false)) + "]"});
        if (usage != null) {
            members.add(Math.min(engine.usagePosition(), members.size()), new String[] {"usage", usage});
        }
        return members;
    }

    private List<String[]> usageOnlyChunk(String usage) {
        List<String[]> members = head();
        members.add(new String[] {"choices", "[]"});
        members.add(Math.min(engine.usagePosition(), members.size()), new String[] {"usage", usage});
        return members;
    }

    private List<String[]> head() {
        List<String[]> members = new ArrayList<>();
        members.add(new String[] {"id", quote("chatcmpl-" + model, false)});
        members.add(new String[] {"object", client.completions() ? "\"text_completion\"" : "\"chat.completion.chunk\""});
        members.add(new String[] {"created", "1700000000"});
        members.add(new String[] {"model", quote(model, false)});
        return members;
    }

    private String usageObject(int completionTokens) {
        List<String[]> usage = new ArrayList<>();
        usage.add(new String[] {"prompt_tokens", "7"});
        usage.add(new String[] {"completion_tokens", Integer.toString(completionTokens)});
        usage.add(new String[] {"total_tokens", Integer.toString(7 + completionTokens)});
        if (engine.cachedTokens()) {
            usage.add(new String[] {"prompt_tokens_details", String.join("\n", object(List.<String[]>of(
                    new String[] {"cached_tokens", "3"}), false))});
        }
        return String.join("\n", object(usage, false));
    }

    /** An object's lines: one (compact or spaced) or, pretty, one per member. */
    private List<String> object(List<String[]> members, boolean pretty) {
        String colon = engine.spaced() || pretty ? ": " : ":";
        List<String> parts = members.stream().map(m -> "\"" + m[0] + "\"" + colon + m[1]).collect(Collectors.toList());
        if (!pretty) {
            return List.of("{" + String.join(engine.spaced() ? ", " : ",", parts) + "}");
        }
        List<String> lines = new ArrayList<>();
        lines.add("{");
        for (int i = 0; i < parts.size(); i++) {
            lines.add("  " + parts.get(i) + (i < parts.size() - 1 ? "," : ""));
        }
        lines.add("}");
        return lines;
    }

    private void writeData(ByteArrayOutputStream out, List<String[]> members, boolean multiLine, String eol) {
        String prefix = engine.spaceAfterData() ? "data: " : "data:";
        for (String line : object(members, multiLine)) {
            write(out, prefix + line + eol);
        }
        write(out, eol);
    }

    private static void write(ByteArrayOutputStream out, String s) {
        out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
    }

    // ---- rendering: the engine's reply ----

    /** The entity of an error response. */
    private byte[] errorBody(int status, boolean rejected, String message) {
        String json = rejected
                ? "{\"object\":\"error\",\"message\":\"[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options'),"
                        + " 'msg': 'Extra inputs are not permitted'}]\",\"type\":\"BadRequestError\",\"param\":null,"
                        + "\"code\":400}"
                : "{\"error\":{\"message\":" + quote(message, engine.asciiEscapes()) + ",\"type\":\"server_error\","
                        + "\"param\":null,\"code\":" + status + "}}";
        return json.getBytes(StandardCharsets.UTF_8);
    }

    /** Every byte the engine writes for a phase, and where it flushes (pausing only towards the sidecar). */
    ScriptedUpstream.Reply reply(Phase phase, boolean asked, boolean towardsSidecar) {
        ReplySpec spec = phase == Phase.LEARN ? learn : probe;
        boolean rejected = asked && engine.reaction() == UsageReaction.REJECTED;
        int status = rejected ? 400 : spec.status();
        String reason = rejected ? reason(400) : spec.reason();
        boolean ok = status == 200;
        byte[] entity = ok ? stream(asked) : errorBody(status, rejected, spec.errorMessage());
        StringBuilder head = new StringBuilder("HTTP/1.1 ").append(status).append(' ').append(reason).append("\r\n");
        head.append(spec.contentTypeName()).append(": ").append(ok ? spec.contentType() : "application/json")
                .append("\r\n");
        for (RawHttp.Header h : spec.extraHeaders()) {
            head.append(h.name()).append(": ").append(h.value()).append("\r\n");
        }
        switch (spec.framing()) {
            case CHUNKED -> head.append("transfer-encoding: chunked\r\n");
            case LENGTH -> head.append("content-length: ").append(entity.length).append("\r\n");
            case CLOSE -> {
            }
        }
        if (spec.announceClose()) {
            head.append("connection: close\r\n");
        }
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        write(wire, head.append("\r\n").toString());
        if (spec.framing() == Framing.CHUNKED) {
            // at most about 256 HTTP chunks: a 12 KB event in 1-byte chunks costs seconds and finds nothing more
            int floor = Math.max(1, entity.length / 256);
            int at = 0;
            for (int i = 0; at < entity.length; i++) {
                int n = Math.min(Math.max(floor, spec.chunkSizes()[i % spec.chunkSizes().length]), entity.length - at);
                write(wire, Integer.toHexString(n) + "\r\n");
                wire.write(entity, at, n);
                write(wire, "\r\n");
                at += n;
            }
            write(wire, "0\r\n\r\n");
        } else {
            wire.writeBytes(entity);
        }
        byte[] bytes = wire.toByteArray();
        int n = spec.flushPoints().length;
        int[] ends = new int[n + 1];
        long[] pauses = new long[n + 1];
        int[] order = sortedIndices(spec.flushPoints());
        for (int i = 0; i < n; i++) {
            ends[i] = (int) ((long) spec.flushPoints()[order[i]] * bytes.length >>> 16);
            pauses[i] = towardsSidecar && spec.pauses()[order[i]] ? PAUSE_NANOS : 0;
        }
        ends[n] = bytes.length;
        boolean close = spec.framing() == Framing.CLOSE || spec.announceClose() || spec.silentClose();
        return new ScriptedUpstream.Reply(bytes, ends, pauses, close);
    }

    private static int[] sortedIndices(int[] values) {
        return IntStream.range(0, values.length).boxed()
                .sorted((a, b) -> Integer.compare(values[a], values[b])).mapToInt(Integer::intValue).toArray();
    }

    // ---- JSON strings ----

    private static String member(String name, String value, String colon) {
        return "\"" + name + "\"" + colon + value;
    }

    /**
     * A JSON string literal: quotes, backslashes and control characters escaped (short forms where JSON has them),
     * lone surrogates always as {@code \\uXXXX}, other non-ASCII raw or escaped as {@code ascii} says.
     */
    static String quote(String s, boolean ascii) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                        char low = s.charAt(++i);
                        sb.append(ascii ? escape(c) + escape(low) : "" + c + low);
                    } else if (c < 0x20 || Character.isSurrogate(c) || (c >= 0x7f && ascii)) {
                        sb.append(escape(c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    private static String escape(char c) {
        return String.format(Locale.ROOT, "\\u%04x", (int) c);
    }

    // ---- a readable account, for findings ----

    /** One line naming what this case exercised, for a census of a corpus (FUZZ_CENSUS=1). */
    String census(DifferentialRig.Outcome o) {
        StringBuilder sb = new StringBuilder();
        sb.append(engine.reaction()).append(o.injected() ? " injected" : "").append(o.reframed() ? " reframed" : "")
                .append(" client=").append(client.usage()).append(client.completions() ? " completions" : "")
                .append(" learn=").append(learn.status()).append('/').append(learn.framing())
                .append(" probe=").append(probe.status()).append('/').append(probe.framing())
                .append(probe.silentClose() ? " silentClose" : "").append(" eol=").append(engine.eol());
        Set<String> kinds = new TreeSet<>();
        for (Event e : events) {
            kinds.add(e.getClass().getSimpleName());
            if (e.eol() != engine.eol()) {
                kinds.add("mixedEol");
            }
            if (e instanceof Chunk c) {
                if (c.multiLine()) {
                    kinds.add("multiLine");
                }
                if (c.text().length() > 1000) {
                    kinds.add("big");
                }
                if (c.eventName() != null || c.comment() != null) {
                    kinds.add("fields");
                }
                if (c.text().chars().anyMatch(ch -> ch >= 0x80)) {
                    kinds.add("unicode");
                }
            }
        }
        sb.append(" events=").append(events.size()).append(kinds).append(usageChunkAt >= 0 ? " usageAt" : "")
                .append(done ? "" : " noDone").append(" flushes=").append(probe.flushPoints().length);
        return sb.toString();
    }

    String describe() {
        StringBuilder sb = new StringBuilder();
        sb.append("model ").append(model).append('\n');
        sb.append("engine ").append(engine).append('\n');
        sb.append("client ").append(client.usage()).append(client.completions() ? " /v1/completions " : " chat ")
                .append(client.style()).append(client.asciiEscapes() ? " ascii" : " utf8").append(" order=")
                .append(client.order()).append(" prompt=").append(quote(client.prompt(), true)).append('\n');
        sb.append("learn ").append(describe(learn)).append('\n');
        sb.append("probe ").append(describe(probe)).append('\n');
        sb.append("usageChunkAt ").append(usageChunkAt).append(", done ").append(done).append('\n');
        for (Event e : events) {
            sb.append("  ").append(describe(e)).append('\n');
        }
        return sb.toString();
    }

    private static String describe(Event e) {
        if (e instanceof Chunk c) {
            String text = c.text().length() > 80 ? c.text().substring(0, 80) + "...(" + c.text().length() + ")" : c.text();
            return "Chunk(" + quote(text, true) + (c.reasoning() ? " reasoning" : "") + (c.role() ? " role" : "")
                    + (c.multiLine() ? " multiLine" : "") + (c.eventName() != null ? " event=" + c.eventName() : "")
                    + (c.comment() != null ? " comment=" + quote(c.comment(), true) : "") + " " + c.eol() + ")";
        }
        if (e instanceof Garbage g) {
            return "Garbage(" + quote(new String(g.data(), StandardCharsets.ISO_8859_1), true) + " " + g.eol() + ")";
        }
        return e.toString();
    }

    private static String describe(ReplySpec r) {
        return r.status() + " '" + r.reason() + "' " + r.framing() + (r.announceClose() ? " announceClose" : "")
                + (r.silentClose() ? " silentClose" : "") + " " + r.contentTypeName() + "=" + r.contentType()
                + " extra=" + r.extraHeaders() + " chunks=" + Arrays.toString(r.chunkSizes()) + " flush="
                + Arrays.toString(r.flushPoints()) + " pauses=" + Arrays.toString(r.pauses()) + " error="
                + quote(r.errorMessage(), true);
    }
}
