package dev.llmsidecar.wire.openai;

import dev.llmsidecar.wire.Usage;

/**
 * The fast path of {@link OpenAiChunkParser}: one pass over the bytes of a chunk, no tokens, no strings, no parser
 * object. It reads exactly the members the Jackson path reads, with the same meaning, and gives up
 * ({@link #BAIL}) on anything it is not sure about, so the caller parses that object with Jackson instead: escapes
 * in member names or in {@code finish_reason}, {@code metrics} / {@code timings} objects, a {@code choices}
 * element or {@code finish_reason} of an unexpected type, integers beyond 18 digits, malformed UTF-8 or JSON,
 * nesting deeper than 62. Everything it accepts is well-formed JSON, on which both paths agree (a differential test
 * checks this); the common chunk ({@code {"id":..,"choices":[{"index":0,"delta":{"content":"..."}, ...}]}})
 * allocates nothing but the scanner itself.
 */
final class OpenAiChunkScanner {

    /** Returned when the scanner is not sure: parse with Jackson. */
    static final OpenAiChunk BAIL = new OpenAiChunk(false, false, false, false, null, null, false, null, false);

    private static final OpenAiChunk CONTENT = new OpenAiChunk(true, false, true, false, null, null, false, null, false);
    private static final OpenAiChunk REASONING = new OpenAiChunk(true, false, false, true, null, null, false, null, false);
    private static final OpenAiChunk EMPTY_DELTA = new OpenAiChunk(true, false, false, false, null, null, false, null, false);

    private static final byte[] CHOICES = ascii("choices");
    private static final byte[] USAGE = ascii("usage");
    private static final byte[] METRICS = ascii("metrics");
    private static final byte[] TIMINGS = ascii("timings");
    private static final byte[] ERROR = ascii("error");
    private static final byte[] DELTA = ascii("delta");
    private static final byte[] MESSAGE = ascii("message");
    private static final byte[] TEXT = ascii("text");
    private static final byte[] FINISH_REASON = ascii("finish_reason");
    private static final byte[] CONTENT_NAME = ascii("content");
    private static final byte[] REFUSAL = ascii("refusal");
    private static final byte[] REASONING_CONTENT = ascii("reasoning_content");
    private static final byte[] REASONING_NAME = ascii("reasoning");
    private static final byte[] TOOL_CALLS = ascii("tool_calls");
    private static final byte[] FUNCTION_CALL = ascii("function_call");
    private static final byte[] PROMPT_TOKENS = ascii("prompt_tokens");
    private static final byte[] COMPLETION_TOKENS = ascii("completion_tokens");
    private static final byte[] PROMPT_TOKENS_DETAILS = ascii("prompt_tokens_details");
    private static final byte[] CACHED_TOKENS = ascii("cached_tokens");
    private static final byte[] COMPLETION_TOKENS_DETAILS = ascii("completion_tokens_details");
    private static final byte[] REASONING_TOKENS = ascii("reasoning_tokens");
    private static final String[] KNOWN_FINISH = {"stop", "length", "tool_calls", "content_filter", "function_call",
        "abort", "error"};
    private static final byte[][] KNOWN_FINISH_BYTES = new byte[KNOWN_FINISH.length][];

    static {
        for (int i = 0; i < KNOWN_FINISH.length; i++) {
            KNOWN_FINISH_BYTES[i] = ascii(KNOWN_FINISH[i]);
        }
    }

    /** Thrown (preallocated, no stack trace) to leave the scan from any depth. */
    private static final class Bail extends RuntimeException {
        Bail() {
            super(null, null, false, false);
        }
    }

    private static final Bail BAIL_SIGNAL = new Bail();

    /**
     * One scanner per thread, reset for each event: an event costs no allocation (a chunk that says only what most
     * chunks say is a shared constant). A scan never starts another on its thread.
     */
    private static final ThreadLocal<OpenAiChunkScanner> SCANNER = ThreadLocal.withInitial(OpenAiChunkScanner::new);

    private byte[] b;
    private int end;
    private int pos;
    // last string or number scanned
    private int strStart;
    private int strEnd;
    private boolean strEscaped;
    private boolean numberIsInt;

    // what the chunk says
    private boolean choicesPresent;
    private boolean choicesEmpty = true;
    private boolean content;
    private boolean reasoning;
    private String finishReason;
    private Usage usage;
    private boolean usageMember;
    private boolean error;

    private OpenAiChunkScanner() {
    }

    private void reset(byte[] bytes, int offset, int length) {
        b = bytes;
        pos = offset;
        end = offset + length;
        strStart = 0;
        strEnd = 0;
        strEscaped = false;
        numberIsInt = false;
        choicesPresent = false;
        choicesEmpty = true;
        content = false;
        reasoning = false;
        finishReason = null;
        usage = null;
        usageMember = false;
        error = false;
    }

    /** The chunk, or {@link #BAIL} when Jackson must decide. */
    static OpenAiChunk scan(byte[] bytes, int offset, int length) {
        OpenAiChunkScanner s = SCANNER.get();
        s.reset(bytes, offset, length);
        try {
            return s.object();
        } catch (Bail | ArrayIndexOutOfBoundsException e) {
            return BAIL;
        } finally {
            s.b = null; // the event's bytes are not kept past the call
        }
    }

    private OpenAiChunk object() {
        if (peekNonWs() != '{') {
            throw BAIL_SIGNAL;
        }
        pos++;
        if (peekNonWs() == '}') {
            pos++;
        } else {
            while (true) {
                int name = memberName();
                if (is(name, CHOICES)) {
                    choices();
                } else if (is(name, USAGE)) {
                    usageMember = true;
                    usage = peekNonWs() == '{' ? usageObject() : skipValueReturningNull();
                } else if (is(name, METRICS) || is(name, TIMINGS)) {
                    if (peekNonWs() == '{') {
                        throw BAIL_SIGNAL; // rare (last chunk only): Jackson reads the timings
                    }
                    skipValue();
                } else if (is(name, ERROR)) {
                    error = !isNullLiteralAhead();
                    skipValue();
                } else {
                    skipValue();
                }
                if (!nextMemberOrEnd('}')) {
                    break;
                }
            }
        }
        // bytes after the object are not read, as with Jackson
        if (!error && !usageMember && finishReason == null && choicesPresent && !choicesEmpty) {
            if (content && !reasoning) {
                return CONTENT;
            }
            if (reasoning && !content) {
                return REASONING;
            }
            if (!content && !reasoning) {
                return EMPTY_DELTA;
            }
        }
        return new OpenAiChunk(choicesPresent, choicesEmpty, content, reasoning, finishReason, usage, error, null,
                usageMember);
    }

    private void choices() {
        if (peekNonWs() != '[') {
            skipValue();
            return;
        }
        choicesPresent = true;
        pos++;
        if (peekNonWs() == ']') {
            pos++;
            return;
        }
        while (true) {
            if (peekNonWs() != '{') {
                throw BAIL_SIGNAL; // a choice that is not an object is rare: Jackson reads it
            }
            choicesEmpty = false;
            pos++;
            if (peekNonWs() == '}') {
                pos++;
            } else {
                while (true) {
                    int name = memberName();
                    if (is(name, DELTA) || is(name, MESSAGE)) {
                        delta();
                    } else if (is(name, TEXT)) {
                        content |= nonEmptyString();
                    } else if (is(name, FINISH_REASON)) {
                        byte c = peekNonWs();
                        if (c == '"') {
                            string();
                            if (strEscaped) {
                                throw BAIL_SIGNAL;
                            }
                            finishReason = finish();
                        } else if (c == 'n') {
                            skipValue();
                        } else {
                            throw BAIL_SIGNAL;
                        }
                    } else {
                        skipValue();
                    }
                    if (!nextMemberOrEnd('}')) {
                        break;
                    }
                }
            }
            if (!nextMemberOrEnd(']')) {
                return;
            }
        }
    }

    private void delta() {
        if (peekNonWs() != '{') {
            skipValue();
            return;
        }
        pos++;
        if (peekNonWs() == '}') {
            pos++;
            return;
        }
        while (true) {
            int name = memberName();
            if (is(name, CONTENT_NAME) || is(name, REFUSAL)) {
                content |= nonEmptyString();
            } else if (is(name, REASONING_CONTENT) || is(name, REASONING_NAME)) {
                reasoning |= nonEmptyString();
            } else if (is(name, TOOL_CALLS) || is(name, FUNCTION_CALL)) {
                content |= nonEmptyContainer();
            } else {
                skipValue();
            }
            if (!nextMemberOrEnd('}')) {
                return;
            }
        }
    }

    private Usage usageObject() {
        pos++;
        long prompt = -1;
        long completion = -1;
        long cached = -1;
        long reasoningTokens = -1;
        if (peekNonWs() == '}') {
            pos++;
            return new Usage(prompt, completion, cached, reasoningTokens);
        }
        while (true) {
            int name = memberName();
            if (is(name, PROMPT_TOKENS)) {
                prompt = longValue();
            } else if (is(name, COMPLETION_TOKENS)) {
                completion = longValue();
            } else if (is(name, PROMPT_TOKENS_DETAILS)) {
                cached = detail(CACHED_TOKENS);
            } else if (is(name, COMPLETION_TOKENS_DETAILS)) {
                reasoningTokens = detail(REASONING_TOKENS);
            } else {
                skipValue();
            }
            if (!nextMemberOrEnd('}')) {
                return new Usage(prompt, completion, cached, reasoningTokens);
            }
        }
    }

    /** The integer member {@code wanted} of a usage details object, -1 when absent. */
    private long detail(byte[] wanted) {
        if (peekNonWs() != '{') {
            skipValue();
            return -1;
        }
        pos++;
        long value = -1;
        if (peekNonWs() == '}') {
            pos++;
            return value;
        }
        while (true) {
            int name = memberName();
            if (is(name, wanted)) {
                value = longValue();
            } else {
                skipValue();
            }
            if (!nextMemberOrEnd('}')) {
                return value;
            }
        }
    }

    private long longValue() {
        byte c = peekNonWs();
        if (c != '-' && (c < '0' || c > '9')) {
            skipValue();
            return -1;
        }
        int start = pos;
        number();
        if (!numberIsInt) {
            return -1;
        }
        int digits = pos - start - (b[start] == '-' ? 1 : 0);
        if (digits > 18) {
            throw BAIL_SIGNAL;
        }
        long v = 0;
        for (int i = b[start] == '-' ? start + 1 : start; i < pos; i++) {
            v = v * 10 + (b[i] - '0');
        }
        return b[start] == '-' ? -v : v;
    }

    private boolean nonEmptyString() {
        if (peekNonWs() == '"') {
            string();
            return strEnd > strStart;
        }
        skipValue();
        return false;
    }

    private boolean nonEmptyContainer() {
        byte c = peekNonWs();
        if (c != '[' && c != '{') {
            skipValue();
            return false;
        }
        int start = pos;
        pos++;
        byte first = peekNonWs();
        boolean nonEmpty = first != (c == '[' ? ']' : '}');
        pos = start;
        skipValue();
        return nonEmpty;
    }

    private String finish() {
        int len = strEnd - strStart;
        for (int i = 0; i < KNOWN_FINISH_BYTES.length; i++) {
            byte[] k = KNOWN_FINISH_BYTES[i];
            if (k.length == len && regionIs(strStart, k)) {
                return KNOWN_FINISH[i];
            }
        }
        return new String(b, strStart, len, java.nio.charset.StandardCharsets.UTF_8);
    }

    private Usage skipValueReturningNull() {
        skipValue();
        return null;
    }

    private boolean isNullLiteralAhead() {
        return peekNonWs() == 'n';
    }

    // ------------------------------------------------------------------------------------------ JSON grammar

    /** Reads {@code "name" :} and returns the constant it equals, or null for any other name. */
    private int memberName() {
        if (peekNonWs() != '"') {
            throw BAIL_SIGNAL;
        }
        string();
        if (strEscaped) {
            throw BAIL_SIGNAL;
        }
        if (peekNonWs() != ':') {
            throw BAIL_SIGNAL;
        }
        pos++;
        return strEnd - strStart;
    }

    /** After a value in a container: true on ',' (another member follows), false on the closing bracket. */
    private boolean nextMemberOrEnd(char close) {
        byte c = peekNonWs();
        pos++;
        if (c == ',') {
            return true;
        }
        if (c == close) {
            return false;
        }
        throw BAIL_SIGNAL;
    }

    /** Skips one value of any type, validating it; nesting is tracked in a 62-level bit stack. */
    private void skipValue() {
        long stack = 1; // sentinel bit; 1 = object, 0 = array per level
        int depth = 0;
        while (true) {
            byte c = peekNonWs();
            switch (c) {
                case '{', '[' -> {
                    pos++;
                    if (++depth > 62) {
                        throw BAIL_SIGNAL;
                    }
                    stack = (stack << 1) | (c == '{' ? 1 : 0);
                    byte n = peekNonWs();
                    if (n == (c == '{' ? '}' : ']')) {
                        pos++;
                        depth--;
                        stack >>>= 1;
                        break;
                    }
                    if (c == '{') {
                        memberName();
                    }
                    continue;
                }
                case '"' -> string();
                case 't' -> literal("true");
                case 'f' -> literal("false");
                case 'n' -> literal("null");
                default -> {
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        number();
                    } else {
                        throw BAIL_SIGNAL;
                    }
                }
            }
            // after a complete value: close containers or move to the next element
            while (true) {
                if (depth == 0) {
                    return;
                }
                boolean inObject = (stack & 1) == 1;
                byte n = peekNonWs();
                pos++;
                if (n == ',') {
                    if (inObject) {
                        memberName();
                    }
                    break;
                }
                if (n == (inObject ? '}' : ']')) {
                    depth--;
                    stack >>>= 1;
                    continue;
                }
                throw BAIL_SIGNAL;
            }
        }
    }

    private void literal(String word) {
        for (int i = 0; i < word.length(); i++) {
            if (at(pos + i) != word.charAt(i)) {
                throw BAIL_SIGNAL;
            }
        }
        pos += word.length();
        requireDelimiter();
    }

    private void number() {
        int p = pos;
        if (at(p) == '-') {
            p++;
        }
        if (at(p) == '0') {
            p++;
        } else if (b[p] >= '1' && b[p] <= '9') {
            while (p < end && b[p] >= '0' && b[p] <= '9') {
                p++;
            }
        } else {
            throw BAIL_SIGNAL;
        }
        numberIsInt = true;
        if (p < end && b[p] == '.') {
            numberIsInt = false;
            p = requiredDigits(p + 1);
        }
        if (p < end && (b[p] == 'e' || b[p] == 'E')) {
            numberIsInt = false;
            p++;
            if (p < end && (b[p] == '+' || b[p] == '-')) {
                p++;
            }
            p = requiredDigits(p);
        }
        pos = p;
        requireDelimiter();
    }

    /** Past the run of digits at {@code p}, which must not be empty (a fraction or an exponent). */
    private int requiredDigits(int p) {
        int digits = p;
        while (p < end && b[p] >= '0' && b[p] <= '9') {
            p++;
        }
        if (p == digits) {
            throw BAIL_SIGNAL;
        }
        return p;
    }

    /** A value must be followed by whitespace or a structural character (Jackson rejects e.g. {@code 12x}). */
    private void requireDelimiter() {
        if (pos >= end) {
            throw BAIL_SIGNAL; // the object cannot be complete
        }
        byte c = b[pos];
        if (c != ',' && c != '}' && c != ']' && c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            throw BAIL_SIGNAL;
        }
    }

    /** Scans a string starting at the quote; sets strStart/strEnd (raw bytes) and strEscaped. Strict UTF-8. */
    private void string() {
        int p = pos + 1;
        strStart = p;
        strEscaped = false;
        while (true) {
            int c = at(p) & 0xFF;
            if (c == '"') {
                break;
            }
            if (c < 0x20) {
                throw BAIL_SIGNAL;
            }
            if (c == '\\') {
                strEscaped = true;
                int e = at(p + 1);
                if (e == 'u') {
                    for (int i = 2; i < 6; i++) {
                        if (Character.digit(at(p + i), 16) < 0) {
                            throw BAIL_SIGNAL;
                        }
                    }
                    p += 6;
                } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r'
                        || e == 't') {
                    p += 2;
                } else {
                    throw BAIL_SIGNAL;
                }
                continue;
            }
            if (c < 0x80) {
                p++;
                continue;
            }
            p = utf8(p, c);
        }
        strEnd = p;
        pos = p + 1;
    }

    /** Validates one multi-byte UTF-8 sequence (no overlongs, no surrogates, at most U+10FFFF); returns its end. */
    private int utf8(int p, int c) {
        int n;
        int min;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 1;
            min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            min = 0x10000;
        } else {
            throw BAIL_SIGNAL;
        }
        int cp = c & (0x3F >> n);
        for (int i = 1; i <= n; i++) {
            int cc = at(p + i) & 0xFF;
            if ((cc & 0xC0) != 0x80) {
                throw BAIL_SIGNAL;
            }
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            throw BAIL_SIGNAL;
        }
        return p + n + 1;
    }

    private byte peekNonWs() {
        while (true) {
            byte c = at(pos);
            if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
                pos++;
                continue;
            }
            return c;
        }
    }

    /** Every read goes through here: bytes past the end of the event may be stale data of an earlier one. */
    private byte at(int p) {
        if (p >= end) {
            throw BAIL_SIGNAL;
        }
        return b[p];
    }

    private boolean is(int nameLength, byte[] wanted) {
        return nameLength == wanted.length && regionIs(strStart, wanted);
    }

    private boolean regionIs(int at, byte[] wanted) {
        for (int i = 0; i < wanted.length; i++) {
            if (b[at + i] != wanted[i]) {
                return false;
            }
        }
        return true;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }
}
