package dev.llmsidecar.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.sim.EngineBehaviour;
import dev.llmsidecar.support.ProxyFixture;
import dev.llmsidecar.support.Scrape;
import dev.llmsidecar.testkit.RawUpstream;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/**
 * The differential byte-exact suite: for every response framing × what the client said about include_usage × where
 * the engine puts usage × event size (up to 4 MB) × content encoding × line ending, a client gets through the
 * sidecar exactly the response it gets directly from the engine — the same status, end-to-end headers and entity
 * bytes (compressed bytes compared compressed) — also once the sidecar has learned the layout and turned
 * include_usage on. The engine is a byte-level script (not a server library), so every framing is what it writes.
 * The matrix is listed in docs/reliability.md.
 */
class ByteExactMatrixTest {

    enum Framing { CHUNKED, LENGTH, CLOSE }

    /** Where the engine puts usage when the request asks for it (ALWAYS: also when it does not). */
    enum Placement { SEPARATE, NULL_ON_EVERY_CHUNK, MERGED_INTO_FINAL, IGNORED, ALWAYS }

    enum Asked { ABSENT, TRUE, FALSE }

    /**
     * GZIP and DEFLATE: the engine compresses for a client that accepts it. GZIP_UNASKED: the engine answers the first
     * two requests of a model (the direct and the proxied learning request) uncompressed, and compresses every later
     * answer with gzip whatever the request accepts, identity included: the sidecar, having learned an engine that
     * does not compress, meets a compressed answer to a stream it turned include_usage on for.
     */
    enum Encoding {
        IDENTITY, GZIP, DEFLATE, GZIP_UNASKED;

        String coding() {
            return this == DEFLATE ? "deflate" : "gzip";
        }
    }

    static final int[] EVENT_SIZES = {16, 64 * 1024, 1536 * 1024, 4 * 1024 * 1024};
    /** Hop-by-hop or per-response headers: not part of what must be identical. */
    static final Set<String> NOT_COMPARED = Set.of("connection", "keep-alive", "transfer-encoding", "date");

    record Combo(Framing framing, Placement placement, int size, Encoding encoding, String eol) {
        String model() {
            return "m-" + framing + "-" + placement + "-" + size + "-" + encoding + "-" + (eol.length() == 1 ? "lf" : "crlf");
        }

        static Combo of(String model) {
            String[] p = model.split("-");
            return new Combo(Framing.valueOf(p[1]), Placement.valueOf(p[2]), Integer.parseInt(p[3]),
                    Encoding.valueOf(p[4]), p[5].equals("lf") ? "\n" : "\r\n");
        }
    }

    /** A raw HTTP/1.1 response: status line, headers in order, entity bytes (de-chunked, never decompressed). */
    record Raw(String statusLine, Map<String, String> headers, byte[] entity) {
        Map<String, String> endToEnd() {
            Map<String, String> m = new LinkedHashMap<>(headers);
            m.keySet().removeAll(NOT_COMPARED);
            return m;
        }
    }

    // ---- the engine ----

    static String chunk(Combo c, String choices, String extra) {
        return "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1700000000,\"model\":\""
                + c.model() + "\",\"choices\":" + choices + extra + "}";
    }

    static List<String> events(Combo c, boolean usageAsked) {
        boolean withUsage = usageAsked || c.placement == Placement.ALWAYS;
        String usage = ",\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":5,\"total_tokens\":12,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":3}}";
        String perChunk = usageAsked && c.placement == Placement.NULL_ON_EVERY_CHUNK ? ",\"usage\":null" : "";
        Random random = new Random(c.size);
        char[] big = new char[c.size];
        for (int i = 0; i < big.length; i++) {
            big[i] = (char) ('a' + random.nextInt(26));
        }
        List<String> events = new ArrayList<>();
        events.add(chunk(c, "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]", perChunk));
        for (int i = 0; i < 3; i++) {
            events.add(chunk(c, "[{\"index\":0,\"delta\":{\"content\":\" w" + i + "\"},\"finish_reason\":null}]", perChunk));
        }
        String merged = withUsage && (c.placement == Placement.MERGED_INTO_FINAL || c.placement == Placement.ALWAYS)
                ? usage : perChunk;
        // the final chunk carries the large content: a usage merged into it sits 4 MB into the event
        events.add(chunk(c, "[{\"index\":0,\"delta\":{\"content\":\"" + new String(big) + "\"},\"finish_reason\":\"stop\"}]",
                merged));
        if (usageAsked && (c.placement == Placement.SEPARATE || c.placement == Placement.NULL_ON_EVERY_CHUNK)) {
            events.add(chunk(c, "[]", usage));
        }
        List<String> framed = new ArrayList<>();
        for (String e : events) {
            framed.add("data: " + e + c.eol + c.eol);
        }
        framed.add("data: [DONE]" + c.eol + c.eol);
        return framed;
    }

    /** Writes the response as the combo says; one flush (and one HTTP chunk) per event. */
    static void respond(RawUpstream.Request r, OutputStream out) throws IOException {
        respond(r, out, new java.util.concurrent.ConcurrentHashMap<>(), new java.util.concurrent.ConcurrentHashMap<>());
    }

    /** @param cache encoded pieces per model, usage and encoding: each is built once (compressing 4 MB is slow) */
    static void respond(RawUpstream.Request r, OutputStream out, Map<String, List<byte[]>> cache,
            Map<String, java.util.concurrent.atomic.AtomicInteger> answered) throws IOException {
        JsonObject body = new JsonObject(new String(r.body(), StandardCharsets.UTF_8));
        Combo c = Combo.of(body.getString("model"));
        JsonObject options = body.getJsonObject("stream_options");
        boolean asked = options != null && Boolean.TRUE.equals(options.getBoolean("include_usage"));
        String accept = r.header("accept-encoding");
        int answer = answered.computeIfAbsent(c.model(), m -> new java.util.concurrent.atomic.AtomicInteger())
                .incrementAndGet();
        Encoding encoding = c.encoding == Encoding.GZIP_UNASKED ? (answer > 2 ? c.encoding : Encoding.IDENTITY)
                : accept != null && accept.contains("gzip") ? c.encoding : Encoding.IDENTITY;
        List<byte[]> pieces = cache.computeIfAbsent(c.model() + asked + encoding, k -> encode(c, asked, encoding));
        StringBuilder head = new StringBuilder("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
                + "x-engine: raw\r\ncache-control: no-cache\r\n");
        if (encoding != Encoding.IDENTITY) {
            head.append("content-encoding: ").append(encoding.coding()).append("\r\n");
        }
        switch (c.framing) {
            case CHUNKED -> head.append("transfer-encoding: chunked\r\n");
            case LENGTH -> head.append("content-length: ").append(pieces.stream().mapToInt(p -> p.length).sum())
                    .append("\r\n");
            case CLOSE -> head.append("connection: close\r\n");
        }
        out.write(head.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
        for (byte[] p : pieces) {
            if (c.framing == Framing.CHUNKED) {
                RawUpstream.writeChunk(out, p);
            } else {
                out.write(p);
                out.flush();
            }
        }
        if (c.framing == Framing.CHUNKED) {
            RawUpstream.writeEnd(out);
        }
    }

    static List<byte[]> encode(Combo c, boolean asked, Encoding encoding) {
        try {
            ByteArrayOutputStream encoded = new ByteArrayOutputStream();
            DeflaterOutputStream compressor = switch (encoding) {
                case GZIP, GZIP_UNASKED -> new GZIPOutputStream(encoded, true);
                case DEFLATE -> new DeflaterOutputStream(encoded, new Deflater(6), true);
                case IDENTITY -> null;
            };
            List<byte[]> pieces = new ArrayList<>();
            for (String e : events(c, asked)) {
                byte[] bytes = e.getBytes(StandardCharsets.UTF_8);
                if (compressor == null) {
                    pieces.add(bytes);
                } else {
                    compressor.write(bytes);
                    compressor.flush();
                    pieces.add(encoded.toByteArray());
                    encoded.reset();
                }
            }
            if (compressor != null) {
                compressor.close();
                if (encoded.size() > 0) {
                    pieces.add(encoded.toByteArray());
                }
            }
            return pieces;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    // ---- the client ----

    static String requestBody(Combo c, Asked asked) {
        String options = switch (asked) {
            case ABSENT -> "";
            case TRUE -> ",\"stream_options\":{\"include_usage\":true}";
            case FALSE -> ",\"stream_options\":{\"include_usage\":false}";
        };
        return "{\"model\":\"" + c.model() + "\",\"stream\":true" + options
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    }

    static Raw get(int port, Combo c, Asked asked) throws IOException {
        byte[] body = requestBody(c, asked).getBytes(StandardCharsets.UTF_8);
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(30_000);
            s.setTcpNoDelay(true);
            boolean accepts = c.encoding == Encoding.GZIP || c.encoding == Encoding.DEFLATE;
            String accept = accepts ? "accept-encoding: gzip, deflate\r\n" : "";
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.write(("POST /v1/chat/completions HTTP/1.1\r\nhost: engine\r\nconnection: close\r\n"
                    + "content-type: application/json\r\n" + accept + "content-length: " + body.length + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            request.write(body);
            s.getOutputStream().write(request.toByteArray()); // one write: no Nagle wait for the body
            return read(new java.io.BufferedInputStream(s.getInputStream(), 65536));
        }
    }

    static Raw read(InputStream in) throws IOException {
        String status = RawUpstream.line(in);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String line = RawUpstream.line(in); !line.isEmpty(); line = RawUpstream.line(in)) {
            int colon = line.indexOf(':');
            headers.put(line.substring(0, colon).trim().toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
        }
        ByteArrayOutputStream entity = new ByteArrayOutputStream();
        if (headers.containsKey("content-length")) {
            entity.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
        } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            for (int n = Integer.parseInt(RawUpstream.line(in).trim(), 16); n > 0;
                    n = Integer.parseInt(RawUpstream.line(in).trim(), 16)) {
                entity.write(in.readNBytes(n));
                RawUpstream.line(in);
            }
            RawUpstream.line(in);
        } else {
            entity.write(in.readAllBytes());
        }
        return new Raw(status, headers, entity.toByteArray());
    }

    // ---- the matrix ----

    /** Whether the sidecar, once it learned the combo's layout, turns include_usage on for a client that did not. */
    static boolean injects(Combo c) {
        return (c.encoding == Encoding.IDENTITY || c.encoding == Encoding.GZIP_UNASKED) && c.framing != Framing.LENGTH
                && c.placement != Placement.ALWAYS;
    }

    @Test
    void everyFramingUsagePlacementEventSizeAndEncodingIsByteIdenticalToADirectConnection() throws Exception {
        Map<String, List<byte[]>> cache = new java.util.concurrent.ConcurrentHashMap<>();
        Map<String, java.util.concurrent.atomic.AtomicInteger> answered = new java.util.concurrent.ConcurrentHashMap<>();
        try (RawUpstream raw = new RawUpstream((r, s, out) -> respond(r, out, cache, answered));
                ProxyFixture f = new ProxyFixture(EngineBehaviour.defaults(), Map.of(), raw.url())) {
            int combos = 0;
            int injected = 0;
            for (Framing framing : Framing.values()) {
                for (Placement placement : Placement.values()) {
                    for (int size : EVENT_SIZES) {
                        for (Encoding encoding : Encoding.values()) {
                            for (String eol : new String[] {"\n", "\r\n"}) {
                                if (eol.length() == 2 && size > 64 * 1024) {
                                    continue; // line endings matter to the splitter, not to the size of an event
                                }
                                Combo c = new Combo(framing, placement, size, encoding, eol);
                                assertThat(check(f, raw, c)).isEqualTo(injects(c));
                                injected += injects(c) ? 1 : 0;
                                combos++;
                                cache.clear();
                            }
                        }
                    }
                }
            }
            Scrape s = f.scrape();
            assertThat(s.sum("llm_sidecar_usage_injected_total")).isEqualTo(injected);
            assertThat(s.sum("llm_sidecar_usage_not_removed_total")).isZero();
            // every injected stream that came compressed anyway was asked again as the client wrote it
            assertThat(s.sum("llm_sidecar_upstream_retries_total", "reason", "compressed_after_injection"))
                    .isEqualTo(injected / 2);
            assertThat(s.sum("llm_sidecar_usage_injection_skipped_total", "reason", "learning")).isEqualTo(combos);
            // (identity, gzip unasked) x (chunked, close-delimited) x 4 placements x 6 size/line-ending cases
            assertThat(injected).as("combos where usage was injected").isEqualTo(96);
            // every response was measured, compressed or not: a first token in each
            assertThat(s.sum("gen_ai_server_time_to_first_token_seconds_count")).isEqualTo(combos * 4);
        }
    }

    /** One combo: the learning request, then each client choice; returns whether usage was injected. */
    static boolean check(ProxyFixture f, RawUpstream raw, Combo c) throws Exception {
        Raw learnDirect = get(raw.server.getLocalPort(), c, Asked.ABSENT);
        Raw learnProxied = get(f.proxyPort, c, Asked.ABSENT);
        assertSame(c, Asked.ABSENT, learnDirect, learnProxied, false);
        double before = injectedSoFar(f);
        boolean injected = false;
        for (Asked asked : Asked.values()) {
            Raw direct = get(raw.server.getLocalPort(), c, asked);
            int engineRequests = raw.requests.size();
            Raw proxied = get(f.proxyPort, c, asked);
            boolean thisOneInjected = injectedSoFar(f) > before;
            before = injectedSoFar(f);
            assertThat(thisOneInjected).as("%s %s injected", c, asked).isEqualTo(asked == Asked.ABSENT && injects(c));
            injected |= thisOneInjected;
            // the engine got include_usage:true exactly when the sidecar injected it; an injected stream answered
            // compressed is followed by the client's own request, whose answer is the one forwarded
            List<RawUpstream.Request> engineSaw =
                    List.copyOf(raw.requests.subList(engineRequests, raw.requests.size()));
            boolean resent = thisOneInjected && c.encoding == Encoding.GZIP_UNASKED;
            assertThat(engineSaw).as("%s %s", c, asked).hasSize(resent ? 2 : 1);
            assertThat(new String(engineSaw.get(0).body(), StandardCharsets.UTF_8).contains("\"include_usage\":true"))
                    .isEqualTo(asked == Asked.TRUE || thisOneInjected);
            if (resent) {
                assertThat(engineSaw.get(0).header("accept-encoding")).isEqualTo("identity");
                assertThat(engineSaw.get(1).body()).isEqualTo(requestBody(c, asked).getBytes(StandardCharsets.UTF_8));
            }
            assertSame(c, asked, direct, proxied, thisOneInjected && c.framing == Framing.LENGTH);
        }
        return injected;
    }

    /** Read off the registry, not a scrape: a scrape of 270 models' histograms per request is what would be slow. */
    static double injectedSoFar(ProxyFixture f) {
        return Scrape.value(f.registry.getPrometheusRegistry(), "llm_sidecar_usage_injected");
    }

    static void assertSame(Combo c, Asked asked, Raw direct, Raw proxied, boolean reframed) {
        String what = c == null ? "" : c + " asked=" + asked;
        assertThat(proxied.statusLine()).as(what).isEqualTo(direct.statusLine());
        Map<String, String> expected = direct.endToEnd();
        Map<String, String> got = proxied.endToEnd();
        if (reframed) {
            expected.remove("content-length");
        }
        assertThat(got).as(what + " headers").isEqualTo(expected);
        if (!Arrays.equals(proxied.entity(), direct.entity())) {
            throw new AssertionError(what + ": entity differs, " + proxied.entity().length + " bytes through the sidecar, "
                    + direct.entity().length + " direct; first difference at " + Arrays.mismatch(proxied.entity(),
                    direct.entity()));
        }
    }
}
