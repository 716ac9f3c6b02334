package dev.llmsidecar.docscheck;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The inline code spans of a Markdown file, as CommonMark reads them: a backtick run closed by the next run of the same
 * length within the same block (a paragraph, list item, table row or heading: a blank line, a fence or the start of
 * another block ends it), line ends read as spaces, one space on each side stripped. Fenced code blocks are commands
 * and listings, not spans, and are left out.
 */
final class CodeSpans {

    /** One span: its text and the 1-based line it starts on. */
    record Span(String text, int line) {
    }

    private static final Pattern FENCE = Pattern.compile("^\\s{0,3}(`{3,}|~{3,}).*$");
    private static final Pattern BLOCK_START = Pattern.compile("^\\s*(?:[-*+]\\s|\\d+[.)]\\s|\\||#)");

    private CodeSpans() {
    }

    static List<Span> of(String markdown) {
        List<Span> spans = new ArrayList<>();
        String[] lines = markdown.split("\n", -1);
        StringBuilder block = new StringBuilder();
        int blockLine = 0;
        String fence = null;
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            var f = FENCE.matcher(line);
            if (fence != null) {
                String closing = line.strip();
                char marker = fence.charAt(0);
                if (closing.startsWith(fence) && closing.chars().allMatch(c -> c == marker)) {
                    fence = null;
                }
                continue;
            }
            boolean ends = f.matches() || line.isBlank() || BLOCK_START.matcher(line).find();
            if (ends && block.length() > 0) {
                spans(block.toString(), blockLine, spans);
                block.setLength(0);
            }
            if (f.matches()) {
                fence = f.group(1);
                continue;
            }
            if (line.isBlank()) {
                continue;
            }
            if (block.length() == 0) {
                blockLine = i + 1;
            } else {
                block.append('\n');
            }
            block.append(line);
        }
        if (block.length() > 0) {
            spans(block.toString(), blockLine, spans);
        }
        return spans;
    }

    private static void spans(String text, int firstLine, List<Span> out) {
        for (int[] range : dev.llmsidecar.docs.Markdown.spanRanges(text)) { // the sidecar's docs tests' one rule
            String span = text.substring(range[1], range[2]).replace('\n', ' ');
            if (span.length() > 2 && span.startsWith(" ") && span.endsWith(" ") && !span.isBlank()) {
                span = span.substring(1, span.length() - 1);
            }
            int line = firstLine + (int) text.substring(0, range[0]).chars().filter(c -> c == '\n').count();
            out.add(new Span(span, line));
        }
    }
}
