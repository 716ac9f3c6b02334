package dev.llmsidecar.fuzz;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The reference side of every JSON oracle: Jackson's tree of the same bytes (jackson-databind), and the few
 * number conversions the readers document, applied to tree nodes.
 */
final class JsonTree {

    /**
     * The settings of every reading: repeated names are left to the reader by JSON, so the tree refuses them and such
     * input has no reference. Each input is parsed by a copy ({@link #read}); this instance never parses.
     */
    private static final JsonFactory SETTINGS = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    /** Builds the tree from a parser it is handed; its own factory is never used. */
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private JsonTree() {
    }

    /** What Jackson makes of some bytes. */
    enum Verdict {
        /** Well-formed: {@link Reading#tree} holds the first value. */
        TREE,
        /** Not JSON (or no value, or bytes after it where none are allowed): every reader must refuse it. */
        MALFORMED,
        /**
         * Not JSON because some bytes are not UTF-8: a reader may still take it. Jackson's name table pads a name's
         * last four-byte group with 0xFF bytes, so once a parser has met {@code "model"} it takes the bytes
         * {@code "mode\xFF\xFFl"} for that name without decoding them. With a fresh factory per input that happens
         * only within one document, but the reference may still build a tree of such bytes: a tree of bytes Jackson
         * reads as UTF-8 that are not UTF-8 is this verdict, not {@link #TREE}.
         */
        NOT_UTF8,
        /** Well-formed but a name is repeated in an object: JSON leaves its meaning to the reader. */
        REPEATED_NAME,
        /**
         * Beyond Jackson's limits (number length, nesting, names of one hash: {@code JacksonNameTables}): well-formed
         * JSON that Jackson will not read.
         */
        BEYOND_LIMITS
    }

    record Reading(Verdict verdict, JsonNode tree) {
        ObjectNode object() {
            return verdict == Verdict.TREE && tree instanceof ObjectNode o ? o : null;
        }
    }

    /**
     * The first JSON value in the bytes; {@code nothingAfter}: anything but whitespace after it is malformed. The
     * verdict depends on these bytes alone: they are parsed by a fresh factory, since a shared one remembers the names
     * of earlier inputs and reads some bytes differently after them. An unchecked exception from Jackson escapes: no
     * input is known to cause one, and the target then reports it with its input.
     */
    static Reading read(byte[] bytes, int offset, int length, boolean nothingAfter) {
        try (JsonParser p = SETTINGS.copy().createParser(bytes, offset, length)) {
            if (p.nextToken() == null) {
                return new Reading(Verdict.MALFORMED, null);
            }
            JsonNode tree = MAPPER.readTree(p);
            if (nothingAfter && p.nextToken() != null) {
                return new Reading(Verdict.MALFORMED, null);
            }
            if (readAsUtf8(bytes, offset, length) && !isUtf8(bytes, offset, length)) {
                return new Reading(Verdict.NOT_UTF8, null); // the name-table quirk let the tree through
            }
            return new Reading(Verdict.TREE, tree);
        } catch (StreamConstraintsException e) {
            return new Reading(Verdict.BEYOND_LIMITS, null);
        } catch (IOException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("Duplicate field")) {
                return new Reading(Verdict.REPEATED_NAME, null);
            }
            return new Reading(isUtf8(bytes, offset, length) ? Verdict.MALFORMED : Verdict.NOT_UTF8, null);
        }
    }

    /**
     * Whether Jackson decodes these bytes as UTF-8: JSON starts with an ASCII character, so in UTF-16 or UTF-32 (BOM
     * or not) a zero byte is among the first four; Jackson's encoding detection reads the same four.
     */
    private static boolean readAsUtf8(byte[] bytes, int offset, int length) {
        for (int i = offset; i < offset + Math.min(4, length); i++) {
            if (bytes[i] == 0) {
                return false;
            }
        }
        return true;
    }

    private static boolean isUtf8(byte[] bytes, int offset, int length) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes, offset, length));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    /** The members of an object in document order (the tree keeps it). */
    static void members(JsonNode object, BiConsumer<String, JsonNode> member) {
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            member.accept(e.getKey(), e.getValue());
        }
    }

    /** Thrown by a reference reading where the reader documents that it gives up on the whole object. */
    static final class Undecodable extends RuntimeException {
        Undecodable(String why) {
            super(why, null, false, false);
        }
    }

    /**
     * An integer as a long; beyond long Jackson refuses to convert it and the reader gives up on the object, as
     * it does for any error ({@code JsonParser.getLongValue}).
     */
    static long exactLong(JsonNode n) {
        if (!n.canConvertToLong()) {
            throw new Undecodable("integer beyond long: " + n);
        }
        return n.longValue();
    }

    /** An integer token, else -1 (OpenAiChunkParser's usage counts: a float is not a count). */
    static long integerOrMinusOne(JsonNode n) {
        return n.isIntegralNumber() ? exactLong(n) : -1;
    }

    /** JsonReads.longValue: an integer exactly, a float truncated (saturating, as a Java cast), else -1. */
    static long truncatedOrMinusOne(JsonNode n) {
        if (n.isIntegralNumber()) {
            return exactLong(n);
        }
        return n.isNumber() ? (long) n.doubleValue() : -1;
    }

    /**
     * Any number as {@code JsonParser.getLongValue} converts it: an integer exactly, a float truncated when within
     * long's range, otherwise Jackson refuses (the reader gives up); -1 for a value that is not a number.
     */
    static long coercedOrMinusOne(JsonNode n) {
        if (n.isIntegralNumber()) {
            return exactLong(n);
        }
        if (!n.isNumber()) {
            return -1;
        }
        double d = n.doubleValue();
        if (d < (double) Long.MIN_VALUE || d > (double) Long.MAX_VALUE) {
            throw new Undecodable("float beyond long: " + n);
        }
        return (long) d;
    }

    /** A number as a double, else -1. */
    static double doubleOrMinusOne(JsonNode n) {
        return n.isNumber() ? n.doubleValue() : -1;
    }

    /** A string's text, else null. */
    static String text(JsonNode n) {
        return n.isTextual() ? n.textValue() : null;
    }

    static boolean nonEmptyText(JsonNode n) {
        return n.isTextual() && !n.textValue().isEmpty();
    }

    /** A non-empty array or object. */
    static boolean nonEmptyContainer(JsonNode n) {
        return n.isContainerNode() && n.size() > 0;
    }
}
