package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.ErrorReportConfiguration;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.ContentReference;
import com.fasterxml.jackson.core.io.IOContext;
import com.fasterxml.jackson.core.json.ByteSourceJsonBootstrapper;
import com.fasterxml.jackson.core.sym.ByteQuadsCanonicalizer;
import com.fasterxml.jackson.core.sym.CharsToNameCanonicalizer;
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

    /** What a caller reads from one parser; an exception it lets out makes the reading null. */
    @FunctionalInterface
    public interface Reading<T> {
        T read(JsonParser p) throws IOException;
    }

    /**
     * Reads {@code bytes[offset, offset + length)} with {@code reading}, so that the answer depends on those bytes
     * alone; null when the reading threw. A Jackson factory keeps the field names its parsers met, and two of its
     * answers change with them (docs/fuzzing.md): once it knows {@code "model"} it takes the bytes
     * {@code "mode\xFFl"} (not UTF-8) for that name, because it pads names with 0xFF bytes to compare them; and names
     * of one hash fill a table's spill area, after which it refuses further ones as a hash-flooding attack. So no
     * reading uses {@code json}'s own tables. Each thread keeps one name table ({@link NameTables}); bytes holding
     * 0xFF are read with an empty one, and a reading after which the thread's table holds a spilled name (the only
     * way to a refusal) is done again with an empty table, whose answer is returned, and the thread's table dropped.
     * Otherwise a name found in the table is one whose bytes were read before, identical, so the table answers what
     * decoding them would. Names the thread met stay known, so a parse of known names allocates only what the parse
     * itself does (0.8 KB for a small request, against 9.5 KB and twice the time with a copy of the factory per parse,
     * as before). Input that is not UTF-8 is read with an empty char table each time. The factory's features, codec
     * and constraints apply.
     */
    public static <T> T read(JsonFactory json, byte[] bytes, int offset, int length, Reading<T> reading) {
        NameTables tables = NAME_TABLES.get();
        if (!holdsFF(bytes, offset, length)) {
            T answer = readWith(json, bytes, offset, length, tables.bytes(), tables, reading);
            if (!tables.spilled(json)) {
                return answer;
            }
            tables.drop();
        }
        return readWith(json, bytes, offset, length, ByteQuadsCanonicalizer.createRoot(), tables, reading);
    }

    private static <T> T readWith(JsonFactory json, byte[] bytes, int offset, int length,
            ByteQuadsCanonicalizer byteNames, NameTables tables, Reading<T> reading) {
        ErrorReportConfiguration errors = ErrorReportConfiguration.defaults();
        IOContext context = new IOContext(json.streamReadConstraints(), json.streamWriteConstraints(), errors,
                json._getBufferRecycler(), ContentReference.unknown(), true);
        try (JsonParser p = new ByteSourceJsonBootstrapper(context, bytes, offset, length).constructParser(
                json.getParserFeatures(), json.getCodec(), byteNames, tables.chars(), json.getFactoryFeatures())) {
            return reading.read(p);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * As {@link #read(JsonFactory, byte[], int, int, Reading)} for a request body: from its own array when it is a heap
     * buffer starting at index 0 of it; otherwise (a body gathered in direct memory) through a stream, read in the
     * parser's own small buffer, so a body of megabytes is never copied whole into the heap.
     */
    public static <T> T read(JsonFactory json, io.vertx.core.buffer.Buffer body, Reading<T> reading) {
        io.netty.buffer.ByteBuf b = body.getByteBuf();
        if (b.hasArray() && b.arrayOffset() + b.readerIndex() == 0) {
            return read(json, b.array(), 0, b.readableBytes(), reading);
        }
        try (JsonParser p = json.createParser((java.io.InputStream) new io.netty.buffer.ByteBufInputStream(b))) {
            return reading.read(p);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static final ThreadLocal<NameTables> NAME_TABLES = ThreadLocal.withInitial(NameTables::new);

    /**
     * One thread's root name tables: the byte table (UTF-8) keeps the names its parses met (merged in as each parser
     * closes), until one spilled or it holds {@value #MAX_NAMES}; the char table (other encodings) is kept empty.
     */
    static final class NameTables {
        static final int MAX_NAMES = 2000;
        static final int CHAR_SEED = 0x5eed_1e5 | 1;
        private ByteQuadsCanonicalizer bytes;
        private CharsToNameCanonicalizer chars;

        ByteQuadsCanonicalizer bytes() {
            if (bytes == null || bytes.size() > MAX_NAMES) {
                bytes = ByteQuadsCanonicalizer.createRoot();
            }
            return bytes;
        }

        /** Whether the table as merged holds a name in its spill area (a root's own counts do not follow merges). */
        boolean spilled(JsonFactory json) {
            return bytes.makeChild(json.getFactoryFeatures()).spilloverCount() > 0;
        }

        void drop() {
            bytes = null;
        }

        CharsToNameCanonicalizer chars() {
            if (chars == null || chars.size() != 0) {
                chars = CharsToNameCanonicalizer.createRoot(CHAR_SEED);
            }
            return chars;
        }
    }

    /** Whether any byte is 0xFF, eight at a time (a byte of all ones is a zero byte of the complement). */
    static boolean holdsFF(byte[] bytes, int offset, int length) {
        int i = offset;
        int end = offset + length;
        for (; i + 8 <= end; i += 8) {
            long x = ~(long) LONGS.get(bytes, i);
            if (((x - 0x0101010101010101L) & ~x & 0x8080808080808080L) != 0) {
                return true;
            }
        }
        for (; i < end; i++) {
            if (bytes[i] == (byte) 0xFF) {
                return true;
            }
        }
        return false;
    }

    private static final java.lang.invoke.VarHandle LONGS = java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
            long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    /**
     * Parses bytes that hold one JSON object, handing each member to a new reader (one per reading: a reading may be
     * done twice, see {@link #read}).
     *
     * @param nothingAfter also reject bytes after the object (an NDJSON line holds exactly one)
     * @return what the reader built, or null when the bytes are not one object (another value, malformed or
     *     truncated)
     */
    public static <T> T parseObject(JsonFactory json, byte[] bytes, int offset, int length, boolean nothingAfter,
            java.util.function.Supplier<? extends ObjectReader<T>> newReader) {
        return read(json, bytes, offset, length, p -> {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            ObjectReader<T> reader = newReader.get();
            readMembers(p, reader);
            if (p.currentToken() != JsonToken.END_OBJECT || (nothingAfter && p.nextToken() != null)) {
                return null;
            }
            return reader.build();
        });
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

    /** The value as an int when it is an integer in int range, else null; anything else is skipped. */
    public static Integer intOrNull(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
            return p.getIntValue();
        }
        p.skipChildren();
        return null;
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
