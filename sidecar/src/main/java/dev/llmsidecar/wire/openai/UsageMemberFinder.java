package dev.llmsidecar.wire.openai;

import io.netty.util.ByteProcessor;

/**
 * Finds the top-level {@code "usage"} member of the JSON object on each SSE {@code data:} line as the bytes of a
 * stream pass, without holding them: it reports the exact byte range whose removal leaves the object as it would
 * have been without that member (the member and one separating comma, with the whitespace the engine's
 * serializer put around them), in stream offsets.
 *
 * <p>Why a byte-level scanner and not a parser: the range must be exact to the byte (the client gets the engine's
 * bytes minus what include_usage added), it must work on an event of any size (a 4 MB final chunk with usage
 * merged into it is forwarded as it streams; only the few bytes of a member whose name is still being read are
 * undecided), and it runs on every byte of an injected stream, so it allocates nothing.
 *
 * <p>Lines other than {@code data:} (comments, {@code event:}, {@code id:}) are passed over. One leading UTF-8 BOM is
 * not part of the first line, as for the SSE splitter (WHATWG). An object spread over several data lines of one event
 * (pretty-printed JSON: SSE joins data lines with LF, which JSON reads as blank) is followed onto the next data line,
 * and a range may then span line ends: removing a member with the line end and {@code data:} prefix inside it leaves
 * the lines as a serializer writes them without that member. Any other line inside such an object (a comment, an
 * {@code event:} field) ends it without a range: a range must not take a line of another kind with it.
 */
public final class UsageMemberFinder implements ByteProcessor {

    /** Told of every usage member found. */
    public interface Listener {
        /**
         * @param from stream offset of the first byte to remove
         * @param to stream offset just past the last byte to remove
         */
        void onUsageMember(long from, long to);
    }

    private static final byte[] DATA = {'d', 'a', 't', 'a'};
    private static final byte[] USAGE = {'u', 's', 'a', 'g', 'e'};
    private static final byte[] BOM = {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF};

    private enum Line { START, NAME, AFTER_COLON, JSON, SKIP }

    /** Where the scanner is among the members of the top-level object. */
    private enum Member { NONE, EXPECT_NAME, IN_NAME, EXPECT_COLON, EXPECT_VALUE, IN_VALUE, AFTER_VALUE, EXPECT_NEXT }

    private enum Value { SCALAR, STRING, CONTAINER }

    private final Listener listener;

    private long offset;
    private Line line = Line.START;
    private int nameMatched;        // bytes of "data" matched at the start of a line
    private boolean afterCr;
    // bytes of a leading BOM matched so far; -1 once the stream's start is decided
    private int bomMatched;

    private int depth;
    private boolean inString;
    private boolean escape;

    private Member member = Member.NONE;
    private long candidateFrom = -1;  // undecided from here: the comma before a member, or its name if first
    private boolean firstMember;
    private int nameLength;
    private Value value;
    private long valueEnd;            // just past the usage value
    private int found;

    // the top-level object of the last data line is still open: the next data line goes on with it
    private boolean continued;

    public UsageMemberFinder(Listener listener) {
        this.listener = listener;
    }

    /**
     * Forgets everything and takes the next byte as the stream byte at {@code streamOffset}, which starts a line (the
     * start of an event): for reading one event's bytes again.
     */
    public void restartAt(long streamOffset) {
        offset = streamOffset;
        bomMatched = streamOffset == 0 ? 0 : -1;
        afterCr = false;
        line = Line.START;
        continued = false;
        resetObject();
        found = 0;
    }

    /** Stream offset before which every byte is decided: no range reported later starts before it. */
    public long decidedUpTo() {
        return candidateFrom >= 0 ? candidateFrom : offset;
    }

    /** Usage members found so far. */
    public int found() {
        return found;
    }

    public void feed(byte[] bytes, int from, int to) {
        for (int i = from; i < to; i++) {
            process(bytes[i]);
        }
    }

    /** Takes the next byte of the stream (Netty's {@code ByteBuf.forEachByte} feeds it without a copy). */
    @Override
    public boolean process(byte b) {
        long here = offset++;
        if (bomMatched >= 0) {
            if (b == BOM[bomMatched]) {
                bomMatched = bomMatched == BOM.length - 1 ? -1 : bomMatched + 1;
                return true;
            }
            if (bomMatched > 0) {
                lineIsNotData(); // the first line began with part of a BOM: it is not a data line
            }
            bomMatched = -1;
        }
        if (afterCr) {
            afterCr = false;
            if (b == '\n') {
                return true; // the LF of a CRLF
            }
        }
        if (b == '\n' || b == '\r') {
            afterCr = b == '\r';
            endLine();
            return true;
        }
        switch (line) {
            case START -> {
                nameMatched = 1;
                if (b == DATA[0]) {
                    line = Line.NAME;
                } else {
                    lineIsNotData();
                }
            }
            case NAME -> {
                if (nameMatched < DATA.length && b == DATA[nameMatched]) {
                    nameMatched++;
                } else if (nameMatched == DATA.length && b == ':') {
                    line = Line.AFTER_COLON;
                } else {
                    lineIsNotData();
                }
            }
            case AFTER_COLON -> {
                line = Line.JSON;
                if (b != ' ') {
                    json(b, here);
                }
            }
            case JSON -> json(b, here);
            case SKIP -> {
            }
        }
        return true;
    }

    private void endLine() {
        if (line == Line.START) {
            resetObject(); // an empty line ends the event: nothing goes on past it
        } else if ((line == Line.JSON || line == Line.AFTER_COLON) && depth > 0 && !inString) {
            continued = true; // the object goes on, if the next line is a data line
        } else if (line != Line.SKIP || !continued) {
            resetObject();
        }
        line = Line.START;
    }

    /** A line that is not a data line ends an object still open; its undecided member gets no range. */
    private void lineIsNotData() {
        line = Line.SKIP;
        if (continued) {
            resetObject();
        }
    }

    private void resetObject() {
        continued = false;
        candidateFrom = -1;
        member = Member.NONE;
        depth = 0;
        inString = false;
        escape = false;
    }

    private void json(byte b, long here) {
        if (inString) {
            string(b, here);
            return;
        }
        switch (b) {
            case ' ', '\t' -> {
            }
            case '"' -> {
                inString = true;
                if (depth != 1) {
                    return;
                }
                if (member == Member.EXPECT_NEXT) {
                    // "usage" was the first member: it goes with its comma and the whitespace up to this name
                    report(candidateFrom, here);
                    firstMember = true;
                    member = Member.EXPECT_NAME;
                }
                if (member == Member.EXPECT_NAME) {
                    member = Member.IN_NAME;
                    nameLength = 0;
                    if (firstMember) {
                        candidateFrom = here;
                    }
                } else if (member == Member.EXPECT_VALUE) {
                    member = Member.IN_VALUE;
                    value = Value.STRING;
                }
            }
            case '{', '[' -> {
                depth++;
                if (depth == 1) {
                    member = b == '{' ? Member.EXPECT_NAME : Member.NONE;
                    firstMember = true;
                } else if (depth == 2 && member == Member.EXPECT_VALUE) {
                    member = Member.IN_VALUE;
                    value = Value.CONTAINER;
                }
            }
            case '}', ']' -> {
                if (depth == 2 && member == Member.IN_VALUE && value == Value.CONTAINER) {
                    valueEnd = here + 1;
                    member = Member.AFTER_VALUE;
                } else if (depth == 1) {
                    closeTopLevel();
                }
                depth = Math.max(0, depth - 1);
            }
            case ',' -> {
                if (depth == 1) {
                    comma(here);
                }
            }
            case ':' -> {
                if (depth == 1 && member == Member.EXPECT_COLON) {
                    member = Member.EXPECT_VALUE;
                }
            }
            default -> {
                // a byte of a scalar (null, true, false, a number)
                if (depth == 1 && member == Member.EXPECT_VALUE) {
                    member = Member.IN_VALUE;
                    value = Value.SCALAR;
                }
                if (depth == 1 && member == Member.IN_VALUE && value == Value.SCALAR) {
                    valueEnd = here + 1;
                }
            }
        }
    }

    private void string(byte b, long here) {
        if (escape) {
            escape = false;
            return;
        }
        if (b == '\\') {
            escape = true;
            if (member == Member.IN_NAME) {
                notUsage(); // an escaped name is not the plain "usage" engines write
            }
            return;
        }
        if (b == '"') {
            inString = false;
            if (member == Member.IN_NAME) {
                if (nameLength == USAGE.length) {
                    member = Member.EXPECT_COLON;
                } else {
                    notUsage();
                }
            } else if (member == Member.IN_VALUE && value == Value.STRING && depth == 1) {
                valueEnd = here + 1;
                member = Member.AFTER_VALUE;
            }
            return;
        }
        if (member == Member.IN_NAME) {
            if (nameLength < USAGE.length && b == USAGE[nameLength]) {
                nameLength++;
            } else {
                notUsage(); // decided at the first byte that differs: the rest of the name passes
            }
        }
    }

    private void notUsage() {
        member = Member.NONE;
        candidateFrom = -1;
    }

    private void comma(long here) {
        if (member == Member.IN_VALUE && value == Value.SCALAR) {
            member = Member.AFTER_VALUE;
        }
        if (member == Member.AFTER_VALUE) {
            if (firstMember) {
                member = Member.EXPECT_NEXT; // the range ends where the next name starts
                return;
            }
            report(candidateFrom, valueEnd);
        }
        candidateFrom = here;
        firstMember = false;
        member = Member.EXPECT_NAME;
    }

    private void closeTopLevel() {
        if (member == Member.IN_VALUE && value == Value.SCALAR) {
            member = Member.AFTER_VALUE;
        }
        if (member == Member.AFTER_VALUE || member == Member.EXPECT_NEXT) {
            // AFTER_VALUE of a first member: "usage" was the only one, the object's own whitespace stays
            report(candidateFrom, valueEnd);
        }
        member = Member.NONE;
        candidateFrom = -1;
    }

    private void report(long from, long to) {
        found++;
        candidateFrom = -1;
        member = Member.NONE;
        listener.onUsageMember(from, to);
    }
}
