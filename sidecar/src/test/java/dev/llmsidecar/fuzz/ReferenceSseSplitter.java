package dev.llmsidecar.fuzz;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The text/event-stream reading {@code SseEventSplitter} must agree with, written the plain way: the whole stream at
 * once, line by line (WHATWG "Interpreting an event stream"), plus the splitter's documented choices:
 * <ul>
 *   <li>one leading UTF-8 BOM is not part of the first line (WHATWG: "One leading U+FEFF BYTE ORDER MARK character
 *       must be ignored if any are present");
 *   <li>every empty line ends an event, also one without data (reported with empty data: comments, keep-alives);
 *   <li>llama.cpp's {@code error:} line is data of an event whose type becomes {@code error};
 *   <li>an event whose line bytes (line ends not counted) exceed the limit is oversize: reported without data, the
 *       event type it had before the limit kept;
 *   <li>an event not ended by an empty line when the stream stops is never reported.
 * </ul>
 * Data is kept as ISO-8859-1 text, one char per byte, so equality is byte equality.
 */
final class ReferenceSseSplitter {

    /** One event: what the splitter reports, with the CRLF end already extended. */
    record Event(String data, String type, boolean oversize, long start, long end) {
    }

    private ReferenceSseSplitter() {
    }

    static List<Event> split(byte[] s, int maxEventBytes) {
        List<Event> events = new ArrayList<>();
        int pos = startsWithBom(s) ? 3 : 0;
        long eventStart = 0;
        ByteArrayOutputStream data = new ByteArrayOutputStream();
        boolean hasData = false;
        String type = null;
        boolean oversize = false;
        long eventBytes = 0;
        while (pos < s.length) {
            int lineEnd = pos;
            while (lineEnd < s.length && s[lineEnd] != '\n' && s[lineEnd] != '\r') {
                lineEnd++;
            }
            if (lineEnd == s.length) {
                break; // a line without its end: nothing more is decided
            }
            int next = lineEnd + 1;
            if (s[lineEnd] == '\r' && next < s.length && s[next] == '\n') {
                next++;
            }
            int length = lineEnd - pos;
            if (length == 0) {
                String text = oversize ? "" : data.toString(StandardCharsets.ISO_8859_1);
                events.add(new Event(text, type, oversize, eventStart, next));
                eventStart = next;
                data.reset();
                hasData = false;
                type = null;
                oversize = false;
                eventBytes = 0;
            } else if (!oversize) {
                eventBytes += length;
                if (eventBytes > maxEventBytes) {
                    oversize = true;
                } else if (s[pos] != ':') {
                    int colon = pos;
                    while (colon < lineEnd && s[colon] != ':') {
                        colon++;
                    }
                    String name = new String(s, pos, colon - pos, StandardCharsets.ISO_8859_1);
                    int valueStart = Math.min(colon + 1, lineEnd);
                    if (valueStart < lineEnd && s[valueStart] == ' ') {
                        valueStart++;
                    }
                    if (name.equals("data") || name.equals("error")) {
                        if (name.equals("error")) {
                            type = "error";
                        }
                        if (hasData) {
                            data.write('\n');
                        }
                        data.write(s, valueStart, lineEnd - valueStart);
                        hasData = true;
                    } else if (name.equals("event")) {
                        type = new String(s, valueStart, lineEnd - valueStart, StandardCharsets.UTF_8);
                    }
                }
            }
            pos = next;
        }
        return events;
    }

    static boolean startsWithBom(byte[] s) {
        return s.length >= 3 && s[0] == (byte) 0xEF && s[1] == (byte) 0xBB && s[2] == (byte) 0xBF;
    }
}
