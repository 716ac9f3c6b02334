package dev.llmsidecar.fuzz;

import static java.nio.charset.StandardCharsets.ISO_8859_1;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An independent reading of the chunked-body grammar the raw relay enforces (docs/architecture.md, The raw relay),
 * for the fuzz targets: line by line with regular expressions over the whole input (where the relay's scanner is a
 * byte-at-a-time state machine over reads), a line's valid prefix told by {@link Matcher#hitEnd}. The grammar: a size
 * line is 1-16 hex digits (at most 2^31-1), then {@code *( *WSP ";" *WSP token [ *WSP "=" *WSP ( token /
 * quoted-string ) ] ) *WSP}, at most 4096 bytes before its CRLF; data is followed by CRLF; after the last chunk,
 * trailer lines {@code token ":" *( VCHAR / obs-text / SP / HTAB )} with their CRLFs at most 8192 bytes, then CRLF.
 */
final class ReferenceChunked {

    private static final String TCHAR = "[!#$%&'*+.^_`|~0-9A-Za-z-]";
    private static final String QUOTED = "\"(?:[\\t \\x21\\x23-\\x5B\\x5D-\\x7E\\x80-\\xFF]|\\\\[\\t \\x21-\\x7E\\x80-\\xFF])*\"";
    private static final Pattern SIZE_LINE = Pattern.compile("([0-9A-Fa-f]{1,16})(?:[ \\t]*;[ \\t]*" + TCHAR
            + "+(?:[ \\t]*=[ \\t]*(?:" + TCHAR + "+|" + QUOTED + "))?)*[ \\t]*");
    private static final Pattern TRAILER_LINE = Pattern.compile(TCHAR + "+:[\\t \\x21-\\x7E\\x80-\\xFF]*");

    enum Verdict {
        /** A whole body, ending at {@link Reading#end}. */
        COMPLETE,
        /** Every byte could still begin a valid body: more is needed. */
        INCOMPLETE,
        /** No body begins with these bytes. */
        INVALID
    }

    /** @param chunks each chunk's data, in order (the last, empty chunk left out) */
    record Reading(Verdict verdict, int end, List<byte[]> chunks) {
        byte[] entity() {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            chunks.forEach(out::writeBytes);
            return out.toByteArray();
        }
    }

    private ReferenceChunked() {
    }

    static Reading read(byte[] body) {
        String s = new String(body, ISO_8859_1);
        List<byte[]> chunks = new ArrayList<>();
        int pos = 0;
        while (true) {
            int eol = s.indexOf("\r\n", pos);
            String line = eol < 0 ? s.substring(pos) : s.substring(pos, eol);
            Matcher m = SIZE_LINE.matcher(line);
            if (eol < 0) {
                boolean prefix = (m.matches() || m.hitEnd()) && line.length() <= 4096 && sizeFits(line)
                        && !line.endsWith("\r") || line.endsWith("\r") && SIZE_LINE.matcher(cut(line)).matches()
                        && cut(line).length() <= 4096 && sizeFits(cut(line));
                return new Reading(prefix ? Verdict.INCOMPLETE : Verdict.INVALID, -1, chunks);
            }
            if (!m.matches() || line.length() > 4096 || !sizeFits(line)) {
                return new Reading(Verdict.INVALID, -1, chunks);
            }
            long size = Long.parseLong(m.group(1), 16);
            pos = eol + 2;
            if (size == 0) {
                return trailers(s, pos, chunks);
            }
            int dataEnd = pos + (int) size;
            if (dataEnd > s.length()) {
                return new Reading(Verdict.INCOMPLETE, -1, chunks);
            }
            String after = s.substring(dataEnd, Math.min(s.length(), dataEnd + 2));
            if (!"\r\n".startsWith(after)) {
                return new Reading(Verdict.INVALID, -1, chunks);
            }
            if (after.length() < 2) {
                return new Reading(Verdict.INCOMPLETE, -1, chunks);
            }
            chunks.add(s.substring(pos, dataEnd).getBytes(ISO_8859_1));
            pos = dataEnd + 2;
        }
    }

    private static Reading trailers(String s, int pos, List<byte[]> chunks) {
        int bytes = 0;
        while (true) {
            int eol = s.indexOf("\r\n", pos);
            String line = eol < 0 ? s.substring(pos) : s.substring(pos, eol);
            if (eol < 0) {
                Matcher m = TRAILER_LINE.matcher(line);
                String whole = line.endsWith("\r") ? cut(line) : line;
                boolean prefix = line.isEmpty() || line.equals("\r")
                        || (line.endsWith("\r") ? TRAILER_LINE.matcher(whole).matches() && bytes + whole.length() + 1
                                <= 8192 : (m.matches() || m.hitEnd()) && bytes + line.length() <= 8192);
                return new Reading(prefix ? Verdict.INCOMPLETE : Verdict.INVALID, -1, chunks);
            }
            if (line.isEmpty()) {
                return new Reading(Verdict.COMPLETE, eol + 2, chunks);
            }
            bytes += line.length() + 2;
            if (!TRAILER_LINE.matcher(line).matches() || bytes > 8192) {
                return new Reading(Verdict.INVALID, -1, chunks);
            }
            pos = eol + 2;
        }
    }

    /** The hex digits of a (partial) size line fit the limit. */
    private static boolean sizeFits(String line) {
        int n = 0;
        while (n < line.length() && Character.digit(line.charAt(n), 16) >= 0 && line.charAt(n) < 128) {
            n++;
        }
        return n <= 16 && (n == 0 || Long.compareUnsigned(Long.parseUnsignedLong(line.substring(0, n), 16),
                Integer.MAX_VALUE) <= 0);
    }

    private static String cut(String line) {
        return line.substring(0, line.length() - 1);
    }
}
