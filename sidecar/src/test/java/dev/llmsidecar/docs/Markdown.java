package dev.llmsidecar.docs;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Just enough of Markdown (CommonMark's rules where they matter here) for the docs tests: fenced code blocks, the
 * text units between them (a paragraph, one list item, one table row, a heading), each with the heading of its
 * section, and a unit's inline code spans, links and table cells.
 */
public final class Markdown {

    /** Text outside fenced blocks: a paragraph, a list item, a table row or a heading; {@code line} is 1-based. */
    record Unit(String text, int line, String section) {

        boolean tableRow() {
            return text.startsWith("|");
        }
    }

    /** A fenced code block: its info string (e.g. bash), its lines, and the unit just before it (may be null). */
    record Block(String info, List<String> lines, int line, String section, Unit before) {

        boolean shell() {
            return List.of("bash", "sh", "shell", "console").contains(info);
        }
    }

    record Doc(List<Unit> units, List<Block> blocks) {
    }

    private static final Pattern FENCE = Pattern.compile("^\\s*(`{3,}|~{3,})\\s*([^`\\s]*).*$");
    private static final Pattern UNIT_START = Pattern.compile("^\\s*(?:[-*+]\\s|\\d+[.)]\\s|\\||#)");
    private static final Pattern LINK =
            Pattern.compile("!?\\[[^\\]]*\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");

    private Markdown() {
    }

    static Doc parse(String text) {
        List<Unit> units = new ArrayList<>();
        List<Block> blocks = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        String section = "";
        StringBuilder unit = null;
        int unitLine = 0;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            Matcher fence = FENCE.matcher(line);
            if (fence.matches()) {
                if (unit != null) {
                    units.add(new Unit(unit.toString(), unitLine, section));
                    unit = null;
                }
                String marker = fence.group(1);
                int start = i + 1;
                List<String> body = new ArrayList<>();
                for (i++; i < lines.length && !lines[i].strip().startsWith(marker); i++) {
                    body.add(lines[i]);
                }
                blocks.add(new Block(fence.group(2), body, start, section,
                        units.isEmpty() ? null : units.get(units.size() - 1)));
                continue;
            }
            if (line.isBlank() || UNIT_START.matcher(line).find()) {
                if (unit != null) {
                    units.add(new Unit(unit.toString(), unitLine, section));
                    unit = null;
                }
                if (line.isBlank()) {
                    continue;
                }
            }
            if (line.startsWith("#")) {
                section = line.replaceFirst("^#+\\s*", "").strip();
                units.add(new Unit(line.strip(), i + 1, section));
                continue;
            }
            if (unit == null) {
                unit = new StringBuilder(line.strip());
                unitLine = i + 1;
            } else {
                unit.append('\n').append(line.strip());
            }
        }
        if (unit != null) {
            units.add(new Unit(unit.toString(), unitLine, section));
        }
        return new Doc(units, blocks);
    }

    /** A code span: its text, and the line it starts on counted from the first of its unit (0). */
    record Span(String text, int lineOffset) {
    }

    /** The inline code spans of {@code text}, as CommonMark reads them (line ends become spaces). */
    static List<Span> spans(String text) {
        List<Span> spans = new ArrayList<>();
        for (int[] s : spanRanges(text)) {
            String span = text.substring(s[1], s[2]).replace('\n', ' ');
            if (span.length() > 1 && span.startsWith(" ") && span.endsWith(" ") && !span.isBlank()) {
                span = span.substring(1, span.length() - 1);
            }
            spans.add(new Span(span, linesBefore(text, s[0])));
        }
        return spans;
    }

    static List<String> codeSpans(String text) {
        return spans(text).stream().map(Span::text).toList();
    }

    /** {@code text} with its inline code spans blanked (so that what they hold is not read as links); lines kept. */
    static String withoutCodeSpans(String text) {
        StringBuilder out = new StringBuilder();
        int from = 0;
        for (int[] s : spanRanges(text)) {
            out.append(text, from, s[0]).append(text.substring(s[0], s[3]).replaceAll("[^\n]", " "));
            from = s[3];
        }
        return out.append(text.substring(from)).toString();
    }

    /** Each code span as {start, content start, content end, end}: a backtick run closed by one of equal length. */
    public static List<int[]> spanRanges(String text) {
        List<int[]> ranges = new ArrayList<>();
        int i = 0;
        while ((i = text.indexOf('`', i)) >= 0) {
            int run = runLength(text, i);
            int close = i + run;
            while ((close = text.indexOf('`', close)) >= 0 && runLength(text, close) != run) {
                close += runLength(text, close);
            }
            if (close < 0) {
                i += run; // an unclosed run is literal text
                continue;
            }
            ranges.add(new int[] {i, i + run, close, close + run});
            i = close + run;
        }
        return ranges;
    }

    /** Targets of the links and images of {@code text} (code spans left out). */
    static List<Span> linkTargets(String text) {
        List<Span> targets = new ArrayList<>();
        String prose = withoutCodeSpans(text);
        Matcher m = LINK.matcher(prose);
        while (m.find()) {
            targets.add(new Span(m.group(1), linesBefore(prose, m.start())));
        }
        return targets;
    }

    /** The cells of a table row, split at pipes outside code spans and not escaped. */
    static List<String> cells(String row) {
        List<String> cells = new ArrayList<>();
        String r = row.strip();
        if (r.startsWith("|")) {
            r = r.substring(1);
        }
        StringBuilder cell = new StringBuilder();
        int inCode = 0;
        for (int i = 0; i < r.length(); i++) {
            char c = r.charAt(i);
            if (c == '`') {
                int run = runLength(r, i);
                inCode = inCode == 0 ? run : inCode == run ? 0 : inCode;
                cell.append(r, i, i + run);
                i += run - 1;
            } else if (c == '\\' && i + 1 < r.length() && r.charAt(i + 1) == '|') {
                cell.append('|');
                i++;
            } else if (c == '|' && inCode == 0) {
                cells.add(cell.toString().strip());
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        if (!cell.toString().isBlank()) {
            cells.add(cell.toString().strip());
        }
        return cells;
    }

    private static int linesBefore(String text, int at) {
        return (int) text.substring(0, at).chars().filter(c -> c == '\n').count();
    }

    private static int runLength(String text, int at) {
        int end = at;
        while (end < text.length() && text.charAt(end) == '`') {
            end++;
        }
        return end - at;
    }
}
