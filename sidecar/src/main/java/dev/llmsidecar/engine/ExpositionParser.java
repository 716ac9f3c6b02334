package dev.llmsidecar.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * A small, lenient parser for the Prometheus text exposition format (0.0.4) that also accepts the OpenMetrics
 * text quirks an engine may send: {@code # UNIT} / {@code # EOF} lines, sample timestamps (integer ms or float
 * seconds), exemplars after {@code " # "}, escaped label values and NaN / +Inf / -Inf.
 *
 * <p>It never throws: a line it cannot read is skipped and counted, because a neighbour's odd line must not cost
 * us the rest of its signals. Metadata (HELP / TYPE) is ignored; the normaliser works from sample names only.
 */
public final class ExpositionParser {

    /** One sample line. {@code labels} is immutable and empty for a bare name. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public Sample {
            // not Map.copyOf: its table probes linearly, so label names of one hash code ("Aa", "BB"...) cost
            // quadratic time; a HashMap keeps colliding String keys in a tree
            labels = labels.isEmpty() ? Map.of() : Collections.unmodifiableMap(new HashMap<>(labels));
        }
    }

    /**
     * The samples kept (in input order), how many non-comment lines could not be read and the first of them (null
     * when every line was read).
     */
    public record Result(List<Sample> samples, int rejectedLines, Rejected firstRejected) {
        public Result {
            samples = List.copyOf(samples);
        }

        public Result(List<Sample> samples, int rejectedLines) {
            this(samples, rejectedLines, null);
        }
    }

    /** A line that could not be read: its number, from 1, and its text. */
    public record Rejected(int lineNumber, String line) {
    }

    private ExpositionParser() {
    }

    public static Result parse(String text) {
        return parse(text, name -> true);
    }

    /**
     * Parses {@code text}, keeping only samples whose metric name passes {@code keepName}. Lines that are
     * dropped are still validated (so the rejected count does not depend on the filter) but build no label
     * map and no sample: an engine's histogram buckets are most of its exposition and we ignore them.
     */
    public static Result parse(String text, Predicate<String> keepName) {
        if (text == null || text.isEmpty()) {
            return new Result(List.of(), 0);
        }
        return new Reader(text, keepName).run();
    }

    /** Per-call cursor over the text; all parse state lives here, never in static fields. */
    private static final class Reader {
        private final String s;
        private final Predicate<String> keep;
        private final List<Sample> samples = new ArrayList<>();
        private int rejected;
        private Rejected firstRejected;
        // bounds of the line being read, and the position within it
        private int i;
        private int end;
        // out-values of the small helpers below, to avoid boxing / holder objects per line
        private double number;
        private String quoted;

        Reader(String s, Predicate<String> keep) {
            this.s = s;
            this.keep = keep;
        }

        Result run() {
            int n = s.length();
            int pos = 0;
            int lineNumber = 0;
            while (pos < n) {
                lineNumber++;
                int nl = s.indexOf('\n', pos);
                int lineEnd = nl < 0 ? n : nl;
                int next = nl < 0 ? n : nl + 1;
                if (lineEnd > pos && s.charAt(lineEnd - 1) == '\r') {
                    lineEnd--;
                }
                i = pos;
                end = lineEnd;
                skipBlanks();
                if (i < end) {
                    if (s.charAt(i) == '#') {
                        if (isEof()) {
                            break; // OpenMetrics: nothing after # EOF belongs to the exposition
                        }
                    } else if (!sample()) {
                        if (rejected++ == 0) {
                            firstRejected = new Rejected(lineNumber, s.substring(pos, lineEnd));
                        }
                    }
                }
                pos = next;
            }
            return new Result(samples, rejected, firstRejected);
        }

        private boolean isEof() {
            i++;
            skipBlanks();
            if (!s.startsWith("EOF", i)) {
                return false;
            }
            i += 3;
            skipBlanks();
            return i == end;
        }

        private boolean sample() {
            int start = i;
            if (!isNameStart(s.charAt(i))) {
                return false;
            }
            do {
                i++;
            } while (i < end && isNameChar(s.charAt(i)));
            String name = s.substring(start, i);
            boolean kept = keep.test(name);
            if (i < end && s.charAt(i) != '{' && !isBlank(s.charAt(i))) {
                return false;
            }
            skipBlanks();
            Map<String, String> labels = Map.of();
            if (i < end && s.charAt(i) == '{') {
                labels = labels(kept);
                if (labels == null) {
                    return false;
                }
                skipBlanks();
            }
            if (!numberToken()) {
                return false;
            }
            double value = number;
            skipBlanks();
            if (i < end && s.charAt(i) != '#') {
                if (!numberToken()) { // timestamp; its value is of no use to a gauge re-export
                    return false;
                }
                skipBlanks();
            }
            if (i < end && s.charAt(i) != '#') { // '#' here starts an OpenMetrics exemplar, which we ignore
                return false;
            }
            if (kept) {
                samples.add(new Sample(name, labels, value));
            }
            return true;
        }

        /** Reads {@code {k="v",...}} at i; null when malformed. Builds the map only when the sample is kept. */
        private Map<String, String> labels(boolean build) {
            i++;
            Map<String, String> map = build ? new HashMap<>(8) : null;
            skipBlanks();
            while (i < end && s.charAt(i) != '}') {
                int nameStart = i;
                if (!isLabelStart(s.charAt(i))) {
                    return null;
                }
                do {
                    i++;
                } while (i < end && isLabelChar(s.charAt(i)));
                int nameEnd = i;
                skipBlanks();
                if (i >= end || s.charAt(i) != '=') {
                    return null;
                }
                i++;
                skipBlanks();
                if (i >= end || s.charAt(i) != '"' || !quotedValue(build)) {
                    return null;
                }
                if (build) {
                    map.put(s.substring(nameStart, nameEnd), quoted); // a repeated name: last wins (lenient)
                }
                skipBlanks();
                if (i < end && s.charAt(i) == ',') { // a trailing comma before '}' is legal
                    i++;
                    skipBlanks();
                } else if (i >= end || s.charAt(i) != '}') {
                    return null;
                }
            }
            if (i >= end) {
                return null;
            }
            i++; // '}'
            return build && !map.isEmpty() ? map : Map.of();
        }

        /** Reads a double-quoted label value at i into {@link #quoted}, unescaping \\ \" \n. */
        private boolean quotedValue(boolean build) {
            i++;
            int from = i;
            StringBuilder sb = null;
            while (i < end) {
                char c = s.charAt(i);
                if (c == '"') {
                    if (build) {
                        quoted = sb == null ? s.substring(from, i) : sb.append(s, from, i).toString();
                    }
                    i++;
                    return true;
                }
                if (c == '\\') {
                    if (i + 1 >= end) {
                        return false;
                    }
                    if (build) {
                        if (sb == null) {
                            sb = new StringBuilder(i - from + 16);
                        }
                        sb.append(s, from, i);
                        char e = s.charAt(i + 1);
                        switch (e) {
                            case 'n' -> sb.append('\n');
                            case '\\', '"' -> sb.append(e);
                            default -> sb.append('\\').append(e); // unknown escape: keep it verbatim (lenient)
                        }
                    }
                    i += 2;
                    from = i;
                } else {
                    i++;
                }
            }
            return false; // unterminated
        }

        /** Reads a non-blank token at i as a float into {@link #number}. */
        private boolean numberToken() {
            int from = i;
            while (i < end && !isBlank(s.charAt(i))) {
                i++;
            }
            return from < i && parseNumber(from, i);
        }

        private boolean parseNumber(int from, int to) {
            char first = s.charAt(from);
            boolean signed = first == '+' || first == '-';
            int j = signed ? from + 1 : from;
            int len = to - j;
            if (len == 3 && s.regionMatches(true, j, "NaN", 0, 3)) {
                number = Double.NaN;
                return true;
            }
            if ((len == 3 && s.regionMatches(true, j, "Inf", 0, 3))
                    || (len == 8 && s.regionMatches(true, j, "Infinity", 0, 8))) {
                number = first == '-' ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
                return true;
            }
            // Double.parseDouble alone would also take "1d", "0x1p3" or "Infinity" spellings the format has not
            for (int k = from; k < to; k++) {
                char c = s.charAt(k);
                if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) {
                    return false;
                }
            }
            try {
                number = Double.parseDouble(s.substring(from, to));
                return true;
            } catch (NumberFormatException e) {
                return false;
            }
        }

        private void skipBlanks() {
            while (i < end && isBlank(s.charAt(i))) {
                i++;
            }
        }

        private static boolean isBlank(char c) {
            return c == ' ' || c == '\t';
        }

        private static boolean isLabelStart(char c) {
            return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        }

        private static boolean isLabelChar(char c) {
            return isLabelStart(c) || (c >= '0' && c <= '9');
        }

        private static boolean isNameStart(char c) {
            return isLabelStart(c) || c == ':';
        }

        private static boolean isNameChar(char c) {
            return isLabelChar(c) || c == ':';
        }
    }
}
