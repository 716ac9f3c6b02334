package dev.llmsidecar.wire;

import static dev.llmsidecar.support.JacksonNameTables.byteTableCollisions;
import static dev.llmsidecar.support.JacksonNameTables.charTableCollisions;
import static dev.llmsidecar.support.JacksonNameTables.object;
import static java.nio.charset.StandardCharsets.UTF_16BE;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.JacksonNameTables;
import dev.llmsidecar.support.RecordingSink;
import dev.llmsidecar.wire.openai.OpenAiChunkParser;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * ProxyServer builds one JsonFactory for every request and response, and a Jackson factory remembers the field names
 * its parsers met (see {@link JacksonNameTables}); so does the name table each thread reads with
 * ({@link JsonReads#read}). The same bytes must read the same whatever was read before: each probe goes through every
 * reader on a factory and a thread with some history, and through the same reader on a fresh factory in a new thread.
 * The readers: every route's request inspection, every route's decoders (event stream, NDJSON, JSON body), the OpenAI
 * chunk parser (scanner, else Jackson) and the response model probe.
 */
class JsonFactoryHistoryTest {

    private static final String REQUEST =
            "{\"model\":\"m-1\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    /** One response object of each format, each read for something (tokens, usage, finish reason, model). */
    private static final Map<String, String> RESPONSES = Map.of(
            "openai chunk", "{\"id\":\"c\",\"model\":\"m-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},"
                    + "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":5}}",
            "anthropic event", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
                    + "\"usage\":{\"output_tokens\":5}}",
            "responses event", "{\"type\":\"response.completed\",\"response\":{\"model\":\"m-1\","
                    + "\"usage\":{\"input_tokens\":3,\"output_tokens\":5}}}",
            "ollama line", "{\"model\":\"m-1\",\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"done\":true,"
                    + "\"done_reason\":\"stop\",\"prompt_eval_count\":3,\"eval_count\":5}",
            "tgi event", "{\"token\":{\"id\":1,\"text\":\"hi\",\"special\":false},\"generated_text\":\"hi\","
                    + "\"details\":{\"finish_reason\":\"eos_token\",\"generated_tokens\":5}}",
            "llama.cpp chunk", "{\"content\":\"hi\",\"stop\":true,\"stop_type\":\"eos\",\"tokens_predicted\":5,"
                    + "\"tokens_evaluated\":3,\"timings\":{\"prompt_n\":3,\"predicted_n\":5}}");
    private static final List<String> PATHS = new LlmRoutes(new JsonFactory()).all().stream()
            .map(LlmOperation::path).toList();
    private static final Pattern NAME = Pattern.compile("\"([a-z_]+)\":");

    private record Probe(String name, byte[] bytes) {
    }

    private record Reader(String name, BiFunction<JsonFactory, byte[], Object> read) {
    }

    @Test
    void everyReaderReadsTheSameBytesTheSameAfterAnyHistory() {
        List<Probe> probes = probes();
        List<Reader> readers = readers();
        Map<String, List<byte[]>> histories = Map.of(
                "the probes' own names", probes.stream().filter(p -> p.name.endsWith(", plain"))
                        .map(Probe::bytes).toList(),
                "5 000 distinct names in 50 documents", distinctNames(),
                "500 names of one hash in the byte table", List.of(
                        withMember(REQUEST, object(byteTableCollisions(0, 500))).getBytes(UTF_8)),
                "150 names of one hash in the char table, UTF-16", List.of(
                        withMember(REQUEST, object(charTableCollisions(0, 150))).getBytes(UTF_16BE)));

        // the probes are read for something on a fresh factory, so that a history that spoils them shows
        for (Probe p : probes) {
            if (p.name.startsWith("request") && !p.name.endsWith("padded names")) {
                for (String path : PATHS) {
                    assertThat(new LlmRoutes(new JsonFactory()).match("POST", path).format()
                            .inspect(Buffer.buffer(p.bytes)).model()).as("%s: %s", path, p.name).isEqualTo("m-1");
                }
            }
        }

        List<String> differences = new ArrayList<>();
        Map<String, Integer> readersPerCase = new TreeMap<>();
        histories.forEach((history, documents) -> {
            for (Probe p : probes) {
                for (Reader r : readers) {
                    // on a thread of its own: nothing read before, in the factory or in the thread's name table
                    Object fresh = onNewThread(() -> r.read.apply(new JsonFactory(), p.bytes));
                    Object after = r.read.apply(withHistory(documents), p.bytes);
                    if (!Objects.equals(fresh, after)) {
                        readersPerCase.merge("after " + history + ": " + p.name, 1, Integer::sum);
                        differences.add(String.format("after %s, %s of %s: %s on a fresh factory, %s after it",
                                history, r.name, p.name, shown(fresh), shown(after)));
                    }
                }
            }
        });
        assertThat(readersPerCase).as("readers whose answer depends on what the factory read before (of %d), e.g.%n%s",
                readers.size(), String.join("\n", differences.subList(0, Math.min(10, differences.size()))))
                .isEmpty();
    }

    /**
     * What makes the test above mean something: a Jackson factory by itself answers differently after some histories
     * (jackson-core 2.22.0). Should an upgrade change that, the probes may need other names.
     */
    @Test
    void aJacksonFactoryAloneReadsTheSameBytesDifferentlyAfterSomeHistories() throws IOException {
        byte[] padded = JacksonNameTables.padded("model");
        byte[] paddedName = concat("{\"".getBytes(UTF_8), padded, "\":\"m-1\"}".getBytes(UTF_8));
        assertThat(read(new JsonFactory(), paddedName)).startsWith("JsonParseException: Invalid UTF-8");
        assertThat(read(withHistory(List.of("{\"model\":\"x\"}".getBytes(UTF_8))), paddedName))
                .isEqualTo("model");

        // UTF-8: 529 fit, 530 do not; 100 others do not after 500. UTF-16: 302 fit, 303 do not; 200 not after 150.
        assertCollisionLimits(JacksonNameTables::byteTableCollisions, UTF_8, 529, 1000, 100, 500);
        assertCollisionLimits(JacksonNameTables::charTableCollisions, UTF_16BE, 302, 512, 200, 150);
    }

    /**
     * A fresh factory reads {@code fit} colliding names and refuses one more; it reads {@code others} other ones, but
     * not after a document of {@code earlier} ones.
     */
    private static void assertCollisionLimits(BiFunction<Integer, Integer, List<String>> collisions, Charset charset,
            int fit, int othersFrom, int others, int earlier) throws IOException {
        assertThat(read(new JsonFactory(), object(collisions.apply(0, fit)).getBytes(charset)))
                .isEqualTo(String.join(",", collisions.apply(0, fit)));
        assertThat(read(new JsonFactory(), object(collisions.apply(0, fit + 1)).getBytes(charset)))
                .startsWith("StreamConstraintsException");
        byte[] otherNames = object(collisions.apply(othersFrom, others)).getBytes(charset);
        assertThat(read(new JsonFactory(), otherNames))
                .isEqualTo(String.join(",", collisions.apply(othersFrom, others)));
        assertThat(read(withHistory(List.of(object(collisions.apply(0, earlier)).getBytes(charset))), otherNames))
                .as("%d others after %d", others, earlier).startsWith("StreamConstraintsException");
    }

    /** The member names Jackson reads, comma-separated, or the exception that stopped it. */
    private static String read(JsonFactory json, byte[] document) throws IOException {
        List<String> names = new ArrayList<>();
        try (JsonParser p = json.createParser(document)) {
            while (p.nextToken() != null) {
                if (p.currentToken() == JsonToken.FIELD_NAME) {
                    names.add(p.currentName());
                }
            }
        } catch (StreamConstraintsException | JsonParseException e) {
            return e.getClass().getSimpleName() + ": " + e.getOriginalMessage();
        }
        return String.join(",", names);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            b.writeBytes(part);
        }
        return b.toByteArray();
    }

    /** Each document plain, its names padded (not UTF-8), with 100 byte-table and 200 char-table colliding names. */
    private static List<Probe> probes() {
        List<Probe> probes = new ArrayList<>();
        Map<String, String> documents = new TreeMap<>(RESPONSES);
        documents.put("request", REQUEST);
        documents.forEach((name, json) -> {
            probes.add(new Probe(name + ", plain", json.getBytes(UTF_8)));
            probes.add(new Probe(name + ", padded names", paddedNames(json)));
            probes.add(new Probe(name + ", 100 names of one hash in the byte table",
                    withMember(json, object(byteTableCollisions(1000, 100))).getBytes(UTF_8)));
            probes.add(new Probe(name + ", 200 names of one hash in the char table, UTF-16",
                    withMember(json, object(charTableCollisions(512, 200))).getBytes(UTF_16BE)));
        });
        return probes;
    }

    private static List<Reader> readers() {
        List<Reader> readers = new ArrayList<>();
        for (String path : PATHS) {
            readers.add(new Reader("inspect " + path,
                    (json, body) -> new LlmRoutes(json).match("POST", path).format().inspect(Buffer.buffer(body))));
            for (String contentType : List.of("text/event-stream", "application/x-ndjson", "application/json")) {
                readers.add(new Reader("decode " + path + " as " + contentType,
                        (json, document) -> decode(new LlmRoutes(json).match("POST", path).format(), contentType,
                                document)));
            }
        }
        readers.add(new Reader("OpenAiChunkParser.parse",
                (json, b) -> new OpenAiChunkParser(json).parse(b, 0, b.length)));
        readers.add(new Reader("OpenAiChunkParser.memberNames",
                (json, b) -> List.copyOf(new OpenAiChunkParser(json).memberNames(b, 0, b.length))));
        readers.add(new Reader("ResponseModelProbe.find", (json, b) -> String.valueOf(
                ResponseModelProbe.find(json, b, 0, b.length))));
        return readers;
    }

    /** What a decoder reported for one response of this content type holding the document. */
    private static String decode(WireFormat format, String contentType, byte[] document) {
        String framing = contentType.equals("text/event-stream") ? "data: %s\n\n"
                : contentType.equals("application/x-ndjson") ? "%s\n" : "%s";
        int at = framing.indexOf("%s");
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(framing.substring(0, at).getBytes(UTF_8));
        b.writeBytes(document);
        b.writeBytes(framing.substring(at + 2).getBytes(UTF_8));
        byte[] response = b.toByteArray();
        RecordingSink s = new RecordingSink();
        byte[] forwarded = WireHarness.feed(format.decoder(s, WireHarness.response(contentType)), response);
        return "tokens " + s.cumulative + " reasoning " + s.reasoningFlags + ", data chunks " + s.dataChunks.size()
                + ", usage " + s.usage + ", finish " + s.finishReason + ", timings " + s.serverTimings + ", models "
                + s.responseModels + ", errors " + s.streamErrors + ", undecodable " + s.undecodable
                + (Arrays.equals(forwarded, response) ? "" : ", bytes changed");
    }

    private static List<byte[]> distinctNames() {
        List<byte[]> documents = new ArrayList<>();
        for (int d = 0; d < 50; d++) {
            List<String> names = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                names.add("name_" + d + "_" + i);
            }
            documents.add(object(names).getBytes(UTF_8));
        }
        return documents;
    }

    /** The document with {@code "x":value} as its first member. */
    private static String withMember(String json, String value) {
        return "{\"x\":" + value + "," + json.substring(1);
    }

    /** The document with every member name that has a partial last four-byte group padded (not UTF-8). */
    private static byte[] paddedNames(String json) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        Matcher m = NAME.matcher(json);
        int from = 0;
        while (m.find()) {
            String name = m.group(1);
            b.writeBytes(json.substring(from, m.start(1)).getBytes(UTF_8));
            b.writeBytes(name.length() % 4 == 0 ? name.getBytes(UTF_8) : JacksonNameTables.padded(name));
            from = m.end(1);
        }
        b.writeBytes(json.substring(from).getBytes(UTF_8));
        return b.toByteArray();
    }

    /**
     * A factory that has read these documents, as the readers leave it (the OpenAI request inspector reads each, as
     * for a client's request) and as any other user of a shared factory would (every token).
     */
    private static JsonFactory withHistory(List<byte[]> documents) {
        JsonFactory json = new JsonFactory();
        WireFormat chat = new LlmRoutes(json).match("POST", "/v1/chat/completions").format();
        for (byte[] document : documents) {
            chat.inspect(Buffer.buffer(document));
            try (JsonParser p = json.createParser(document)) {
                while (p.nextToken() != null) {
                    p.currentName();
                }
            } catch (IOException | RuntimeException e) {
                // a refused document still leaves the names read before the failure
            }
        }
        return json;
    }

    private static Object onNewThread(java.util.function.Supplier<Object> reading) {
        Object[] result = new Object[1];
        Thread t = new Thread(() -> result[0] = reading.get());
        t.start();
        try {
            t.join();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        return result[0];
    }

    private static String shown(Object reading) {
        String s = String.valueOf(reading);
        return s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
