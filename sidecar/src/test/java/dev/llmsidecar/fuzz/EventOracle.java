package dev.llmsidecar.fuzz;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.support.RecordingSink;
import dev.llmsidecar.wire.WireFormat;
import dev.llmsidecar.wire.WireHarness;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.invoke.MethodHandle;
import java.util.function.Function;

/**
 * What every event parser target checks: the parser's reading of some bytes equals the reference reading of
 * Jackson's tree of them (null for bytes that are not one object), no byte outside the given range changes it,
 * nothing is thrown; and the format's decoders, fed the same bytes as an event (or line) and as a whole body,
 * forward every byte and let nothing escape (an exception there would reach the proxy's event loop).
 */
final class EventOracle {

    static final JsonFactory JSON = new JsonFactory();
    private static final byte[] BEFORE = "{\"type\":\"stale\",\"done\":true,\"stop\":true,\"x\":".getBytes(UTF_8);
    private static final byte[] AFTER = "\"}]}]}},\"error\":{},\"content\":\"stale\"}\n\n".getBytes(UTF_8);

    /** A parser's static {@code parse(JsonFactory, byte[], int, int)}. */
    private final MethodHandle parse;
    /** The reading the parser documents, from Jackson's tree; may throw {@link JsonTree.Undecodable}. */
    private final Function<ObjectNode, Object> reference;
    /** NDJSON: exactly one object per line, nothing after it. */
    private final boolean nothingAfter;

    EventOracle(String parserClass, Function<ObjectNode, Object> reference, boolean nothingAfter) {
        this.parse = Hidden.method(Hidden.type(parserClass), "parse", JsonFactory.class, byte[].class, int.class,
                int.class);
        this.reference = reference;
        this.nothingAfter = nothingAfter;
    }

    /** The parser's reading equals the reference's; returns it. */
    Object check(byte[] bytes) {
        int n = bytes.length;
        String shown = new String(bytes, UTF_8);
        Object parsed = Hidden.call(parse, JSON, bytes, 0, n);
        byte[] framed = new byte[BEFORE.length + n + AFTER.length];
        System.arraycopy(BEFORE, 0, framed, 0, BEFORE.length);
        System.arraycopy(bytes, 0, framed, BEFORE.length, n);
        System.arraycopy(AFTER, 0, framed, BEFORE.length + n, AFTER.length);
        assertThat(Hidden.call(parse, JSON, framed, BEFORE.length, n)).as("framed by stale bytes: %s", shown)
                .isEqualTo(parsed);

        JsonTree.Reading reading = JsonTree.read(bytes, 0, n, nothingAfter);
        switch (reading.verdict()) {
            case TREE -> assertThat(parsed).as("parsed: %s", shown).isEqualTo(expected(reading.object()));
            case MALFORMED -> assertThat(parsed).as("malformed: %s", shown).isNull();
            default -> {
                // a repeated name, bytes that are not UTF-8, or beyond Jackson's limits: no reference
            }
        }
        return parsed;
    }

    private Object expected(ObjectNode root) {
        if (root == null) {
            return null;
        }
        try {
            return reference.apply(root);
        } catch (JsonTree.Undecodable e) {
            return null;
        }
    }

    /**
     * Feeds the bytes to {@code format}'s decoders: as the data of one event of an event stream (or as one line of
     * an NDJSON stream), cut in two reads, and as a whole JSON body.
     */
    static void decoders(WireFormat format, String streamContentType, byte[] bytes) {
        boolean ndjson = streamContentType.contains("ndjson");
        byte[] stream = concat(ndjson ? new byte[0] : "data: ".getBytes(UTF_8), bytes,
                (ndjson ? "\n" : "\n\n").getBytes(UTF_8));
        RecordingSink sink = new RecordingSink();
        byte[] forwarded = WireHarness.feed(format.decoder(sink, WireHarness.response(streamContentType)), stream,
                stream.length / 2);
        assertThat(forwarded).as("streamed bytes forwarded unchanged").isEqualTo(stream);

        RecordingSink bodySink = new RecordingSink();
        forwarded = WireHarness.feed(format.decoder(bodySink, WireHarness.response("application/json")), bytes);
        assertThat(forwarded).as("body bytes forwarded unchanged").isEqualTo(bytes);
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] all = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }

    /** A reference reading builds the parser's own (package-private) record. */
    static Object record(MethodHandle constructor, Object... components) {
        return Hidden.call(constructor, components);
    }
}
