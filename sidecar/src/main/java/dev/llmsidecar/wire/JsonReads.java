package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/**
 * Small helpers for Jackson's streaming parser: read a value of the expected type or skip it, and walk the
 * members of an object, so that each format's parser only says which members it wants.
 */
public final class JsonReads {

    private JsonReads() {
    }

    /** Reads one member of an object: the parser is on its value {@code v} and must be left on its last token. */
    @FunctionalInterface
    public interface MemberReader {
        void member(JsonParser p, String name, JsonToken v) throws IOException;
    }

    /** Reads one value: the parser is on its first token {@code v} and must be left on its last. */
    @FunctionalInterface
    public interface ValueReader<T> {
        T read(JsonParser p, JsonToken v) throws IOException;
    }

    /** Collects the members of one parsed object, then builds what they say. */
    public interface ObjectReader<T> extends MemberReader {
        T build();
    }

    /**
     * A parser of {@code bytes[offset, offset + length)} that remembers nothing from other inputs. A Jackson factory
     * keeps the field names its parsers met, and with them its answers change: once it knows {@code "model"} it takes
     * the bytes {@code "mode\xFFl"} (not UTF-8) for that name, and names of one hash read earlier make it refuse a
     * later document (docs/fuzzing.md). So every read parses with a copy of {@code json}: the same settings, empty
     * name tables; the copy costs about 0.5 µs a parse.
     */
    public static JsonParser parser(JsonFactory json, byte[] bytes, int offset, int length) throws IOException {
        return json.copy().createParser(bytes, offset, length);
    }

    /**
     * Parses bytes that hold one JSON object, handing each member to {@code reader}.
     *
     * @param nothingAfter also reject bytes after the object (an NDJSON line holds exactly one)
     * @return what {@code reader} built, or null when the bytes are not one object (another value, malformed or
     *     truncated)
     */
    public static <T> T parseObject(JsonFactory json, byte[] bytes, int offset, int length, boolean nothingAfter,
            ObjectReader<T> reader) {
        try (JsonParser p = parser(json, bytes, offset, length)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            readMembers(p, reader);
            if (p.currentToken() != JsonToken.END_OBJECT || (nothingAfter && p.nextToken() != null)) {
                return null;
            }
            return reader.build();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Hands each member of the object {@code v} opens to {@code reader}; a value of another type is skipped. */
    public static boolean members(JsonParser p, JsonToken v, MemberReader reader) throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return false;
        }
        readMembers(p, reader);
        return true;
    }

    /** The object {@code v} opens, as {@code reader} builds it; null for a value of another type (skipped). */
    public static <T> T object(JsonParser p, JsonToken v, ObjectReader<T> reader) throws IOException {
        return members(p, v, reader) ? reader.build() : null;
    }

    /**
     * Hands each member of each object in the array {@code v} opens to {@code reader}; other elements, and a
     * value that is not an array, are skipped.
     */
    public static void elementMembers(JsonParser p, JsonToken v, MemberReader reader) throws IOException {
        if (v != JsonToken.START_ARRAY) {
            p.skipChildren();
            return;
        }
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                continue;
            }
            readMembers(p, reader);
        }
    }

    /**
     * The member {@code wanted} of the object {@code v} opens, as {@code read} reads it (the last one if
     * repeated), or {@code absent}.
     */
    public static <T> T member(JsonParser p, JsonToken v, String wanted, T absent, ValueReader<T> read)
            throws IOException {
        if (v != JsonToken.START_OBJECT) {
            p.skipChildren();
            return absent;
        }
        T value = absent;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            JsonToken t = p.nextToken();
            if (wanted.equals(name)) {
                value = read.read(p, t);
            } else {
                p.skipChildren();
            }
        }
        return value;
    }

    /** True when the value is not null (an {@code error} member that is present); the value is skipped. */
    public static boolean nonNull(JsonParser p, JsonToken v) throws IOException {
        p.skipChildren();
        return v != JsonToken.VALUE_NULL;
    }

    /** True for a {@code true} value; a value of any type is skipped (an object or array here is not a flag). */
    public static boolean isTrue(JsonParser p, JsonToken v) throws IOException {
        p.skipChildren();
        return v == JsonToken.VALUE_TRUE;
    }

    /** True when the value is an object; it is skipped either way. */
    public static boolean isObject(JsonParser p, JsonToken v) throws IOException {
        p.skipChildren();
        return v == JsonToken.START_OBJECT;
    }

    /** Members up to the end of the object whose START_OBJECT the parser is on. */
    private static void readMembers(JsonParser p, MemberReader reader) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            reader.member(p, name, p.nextToken());
        }
    }

    /** An integer value, or -1 (the value is skipped when of another type). */
    public static long longValue(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_NUMBER_INT) {
            return p.getLongValue();
        }
        if (v == JsonToken.VALUE_NUMBER_FLOAT) {
            return (long) p.getDoubleValue();
        }
        p.skipChildren();
        return -1;
    }

    /** A number as a double, or -1. */
    public static double doubleValue(JsonParser p, JsonToken v) throws IOException {
        if (v != null && v.isNumeric()) {
            return p.getDoubleValue();
        }
        p.skipChildren();
        return -1;
    }

    /** A string value, or null. */
    public static String string(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_STRING) {
            return p.getText();
        }
        p.skipChildren();
        return null;
    }

    public static boolean nonEmptyString(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_STRING) {
            return p.getTextLength() > 0;
        }
        p.skipChildren();
        return false;
    }

    /** True for a non-empty array or object; the container is consumed either way. */
    public static boolean nonEmptyContainer(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.START_ARRAY && v != JsonToken.START_OBJECT) {
            return false;
        }
        JsonToken first = p.nextToken();
        if (first == JsonToken.END_ARRAY || first == JsonToken.END_OBJECT) {
            return false;
        }
        if (first == JsonToken.FIELD_NAME) {
            p.nextToken();
        }
        p.skipChildren();
        int depth = 1;
        while (depth > 0) {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw new IOException("truncated");
            }
            if (t.isStructStart()) {
                depth++;
            } else if (t.isStructEnd()) {
                depth--;
            }
        }
        return true;
    }

    /** Milliseconds (possibly fractional) to nanoseconds; -1 stays -1. */
    public static long msToNanos(double ms) {
        return ms < 0 ? -1 : Math.round(ms * 1_000_000);
    }
}
