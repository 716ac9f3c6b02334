package dev.llmsidecar.fuzz;

import dev.llmsidecar.engine.ExpositionParser.Sample;
import java.util.HashMap;
import java.util.Map;

/**
 * A reader of one line of the Prometheus text exposition format 0.0.4, written from its specification
 * (prometheus/docs, "Exposition formats") and nothing else: the reference for {@code ExpositionParser}.
 *
 * <pre>
 * metric_name [ "{" label_name "=" '"' label_value '"' { "," label_name "=" '"' label_value '"' } [ "," ] "}" ]
 *     value [ timestamp ]
 * </pre>
 *
 * Tokens are separated by blanks and tabs (at least one where they would otherwise merge), leading and trailing
 * ones are ignored, a line whose first non-blank character is {@code #} is a comment (HELP and TYPE included),
 * an empty line is ignored. Names are {@code [a-zA-Z_:][a-zA-Z0-9_:]*}, label names {@code [a-zA-Z_][a-zA-Z0-9_]*}
 * and not repeated; in a label value {@code \\}, {@code \"} and {@code \n} are escapes (Prometheus' own reader keeps
 * any other backslash pair as written). The value is a Go float (ParseFloat, without Go 1.13's hex, underscore and
 * out-of-range forms, as Prometheus reads it), NaN, +Inf or -Inf; the timestamp an int64. The one thing taken from
 * OpenMetrics, because the parser documents it: a {@code # EOF} line ends the exposition.
 */
final class TextFormatReference {

    private TextFormatReference() {
    }

    /** What one line is. */
    sealed interface Line permits Blank, Comment, Eof, Valid, Invalid {
    }

    record Blank() implements Line {
    }

    record Comment() implements Line {
    }

    record Eof() implements Line {
    }

    record Valid(Sample sample) implements Line {
    }

    record Invalid(String why) implements Line {
    }

    /** Reads one line, without its line feed. */
    static Line read(String line) {
        int i = skipBlanks(line, 0);
        int end = line.length();
        while (end > i && isBlank(line.charAt(end - 1))) {
            end--;
        }
        if (i == end) {
            return new Blank();
        }
        if (line.charAt(i) == '#') {
            return line.substring(Math.min(skipBlanks(line, i + 1), end), end).equals("EOF") ? new Eof() : new Comment();
        }
        String s = line.substring(i, end);
        int p = 0;
        if (!isNameStart(s.charAt(p))) {
            return new Invalid("name start");
        }
        while (p < s.length() && isNameChar(s.charAt(p))) {
            p++;
        }
        String name = s.substring(0, p);
        Map<String, String> labels = new HashMap<>();
        if (p == s.length() || (s.charAt(p) != '{' && !isBlank(s.charAt(p)))) {
            return new Invalid("the name runs into something else");
        }
        p = skipBlanks(s, p);
        if (s.charAt(p) == '{') {
            p = skipBlanks(s, p + 1);
            while (true) {
                if (p < s.length() && s.charAt(p) == '}') {
                    p++;
                    break;
                }
                if (p >= s.length() || !isLabelStart(s.charAt(p))) {
                    return new Invalid("label name start");
                }
                int from = p;
                while (p < s.length() && isLabelChar(s.charAt(p))) {
                    p++;
                }
                String label = s.substring(from, p);
                p = skipBlanks(s, p);
                if (p >= s.length() || s.charAt(p) != '=') {
                    return new Invalid("no =");
                }
                p = skipBlanks(s, p + 1);
                if (p >= s.length() || s.charAt(p) != '"') {
                    return new Invalid("no quote");
                }
                StringBuilder value = new StringBuilder();
                p++;
                while (true) {
                    if (p >= s.length()) {
                        return new Invalid("unterminated label value");
                    }
                    char c = s.charAt(p);
                    if (c == '"') {
                        p++;
                        break;
                    }
                    if (c == '\\') {
                        if (p + 1 >= s.length()) {
                            return new Invalid("unterminated escape");
                        }
                        char e = s.charAt(p + 1);
                        switch (e) {
                            case '\\', '"' -> value.append(e);
                            case 'n' -> value.append('\n');
                            default -> value.append('\\').append(e);
                        }
                        p += 2;
                    } else {
                        value.append(c);
                        p++;
                    }
                }
                if (labels.put(label, value.toString()) != null) {
                    return new Invalid("repeated label name");
                }
                p = skipBlanks(s, p);
                if (p < s.length() && s.charAt(p) == ',') {
                    p = skipBlanks(s, p + 1);
                } else if (p >= s.length() || s.charAt(p) != '}') {
                    return new Invalid("no , or }");
                }
            }
        }
        p = skipBlanks(s, p);
        int valueFrom = p;
        while (p < s.length() && !isBlank(s.charAt(p))) {
            p++;
        }
        Double value = goFloat(s.substring(valueFrom, p));
        if (value == null) {
            return new Invalid("value");
        }
        p = skipBlanks(s, p);
        if (p < s.length()) {
            int tsFrom = p;
            while (p < s.length() && !isBlank(s.charAt(p))) {
                p++;
            }
            if (!isInt64(s.substring(tsFrom, p))) {
                return new Invalid("timestamp");
            }
            if (skipBlanks(s, p) < s.length()) {
                return new Invalid("after the timestamp");
            }
        }
        return new Valid(new Sample(name, labels, value));
    }

    /** Go's strconv.ParseFloat as Prometheus calls it (no p, P or _), finite unless spelled as a special value. */
    static Double goFloat(String t) {
        if (t.isEmpty() || t.indexOf('p') >= 0 || t.indexOf('P') >= 0 || t.indexOf('_') >= 0) {
            return null;
        }
        int i = t.charAt(0) == '+' || t.charAt(0) == '-' ? 1 : 0;
        String rest = t.substring(i).toLowerCase(java.util.Locale.ROOT);
        if (rest.equals("inf") || rest.equals("infinity")) {
            return t.charAt(0) == '-' ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
        }
        if (rest.equals("nan")) {
            return i == 0 ? Double.NaN : null; // Go reads no sign before NaN
        }
        if (!t.matches("[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?")) {
            return null;
        }
        double d = Double.parseDouble(t);
        return Double.isInfinite(d) ? null : d; // Go: ErrRange, which Prometheus refuses
    }

    static boolean isInt64(String t) {
        if (!t.matches("[+-]?[0-9]+")) {
            return false;
        }
        try {
            Long.parseLong(t.startsWith("+") ? t.substring(1) : t);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static int skipBlanks(String s, int i) {
        while (i < s.length() && isBlank(s.charAt(i))) {
            i++;
        }
        return i;
    }

    static boolean isBlank(char c) {
        return c == ' ' || c == '\t';
    }

    static boolean isLabelStart(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }

    static boolean isLabelChar(char c) {
        return isLabelStart(c) || (c >= '0' && c <= '9');
    }

    static boolean isNameStart(char c) {
        return isLabelStart(c) || c == ':';
    }

    static boolean isNameChar(char c) {
        return isLabelChar(c) || c == ':';
    }
}
