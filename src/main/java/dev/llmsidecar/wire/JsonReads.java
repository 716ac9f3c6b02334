package dev.llmsidecar.wire;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;

/** Small helpers for Jackson's streaming parser: read a value of the expected type or skip it. */
public final class JsonReads {

    private JsonReads() {
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
