package dev.llmsidecar.docscheck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * No doc holds one passage twice: a scripted edit that splices a section back in (as one did to docs/metrics.md, 440
 * lines again further down) leaves two copies that drift apart, and both still read well. A passage is
 * {@value #RUN} consecutive lines of prose or tables, each of at least {@value #MIN_CHARS} characters; shorter lines
 * (headings, table rules, short list items) repeat for good reasons.
 */
class DocsRepeatTest {

    static final int RUN = 6;
    static final int MIN_CHARS = 40;

    @Test
    void noDocHoldsAPassageTwice() throws IOException {
        Path root = DocsNamesTest.repositoryRoot();
        List<String> repeats = new ArrayList<>();
        for (Path doc : DocsNamesTest.docs(root)) {
            repeats.addAll(repeats(root.relativize(doc).toString(),
                    Files.readAllLines(doc, StandardCharsets.UTF_8)));
        }
        assertThat(repeats).as("passages that stand twice in one doc").isEmpty();
    }

    /** Where a run of {@link #RUN} long lines stands again after its first place. */
    static List<String> repeats(String name, List<String> lines) {
        Map<String, Integer> first = new HashMap<>();
        List<String> out = new ArrayList<>();
        for (int i = 0; i + RUN <= lines.size(); i++) {
            boolean allLong = true;
            for (int j = i; j < i + RUN && allLong; j++) {
                allLong = lines.get(j).strip().length() >= MIN_CHARS;
            }
            if (!allLong) {
                continue;
            }
            String run = String.join("\n", lines.subList(i, i + RUN));
            Integer at = first.putIfAbsent(run, i + 1);
            if (at != null) {
                out.add(name + ":" + (i + 1) + " repeats lines from " + at);
                i += RUN - 1; // one report per run of the passage, not one per line of it
            }
        }
        return out;
    }
}
