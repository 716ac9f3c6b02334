package dev.llmsidecar.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A Markdown (GFM) table: a header row, each column left- or right-aligned, then rows of cells as given. */
public final class MarkdownTable {

    private final List<String> header;
    private final char[] align;
    private final List<List<String>> rows = new ArrayList<>();

    /** Every column left-aligned; {@link #align} changes that. */
    public MarkdownTable(String... header) {
        this.header = List.of(header);
        this.align = new char[header.length];
        Arrays.fill(align, 'l');
    }

    /** One letter per column: {@code l} (left) or {@code r} (right, for numbers). */
    public MarkdownTable align(String spec) {
        if (spec.length() != align.length || !spec.matches("[lr]*")) {
            throw new IllegalArgumentException("one of l, r per column (" + align.length + "): " + spec);
        }
        spec.getChars(0, align.length, align, 0);
        return this;
    }

    /** A row; a cell's pipes are escaped so they cannot split it. */
    public MarkdownTable row(Object... cells) {
        if (cells.length != header.size()) {
            throw new IllegalArgumentException(header.size() + " cells expected, got " + cells.length);
        }
        List<String> r = new ArrayList<>();
        for (Object c : cells) {
            r.add(String.valueOf(c).replace("|", "\\|"));
        }
        rows.add(r);
        return this;
    }

    public boolean isEmpty() {
        return rows.isEmpty();
    }

    /** The header, the alignment row and every row, each line ending in a newline. */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        line(sb, header);
        sb.append('|');
        for (char a : align) {
            sb.append(a == 'r' ? "---:|" : "---|");
        }
        sb.append('\n');
        rows.forEach(r -> line(sb, r));
        return sb.toString();
    }

    private static void line(StringBuilder sb, List<String> cells) {
        sb.append("| ").append(String.join(" | ", cells)).append(" |\n");
    }
}
