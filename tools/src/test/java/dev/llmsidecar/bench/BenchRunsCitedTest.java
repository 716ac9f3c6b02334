package dev.llmsidecar.bench;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.testkit.Repo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every figure the benchmark docs quote can be traced to the run it came from: each run file they cite exists under
 * docs/bench/runs/ (a run's raw results in a file no later run overwrites, {@link Bench#keepRun}), and each generated
 * report names its own.
 */
class BenchRunsCitedTest {

    static final Pattern CITED = Pattern.compile("runs/[A-Za-z0-9._-]+");

    static List<Path> docs() throws Exception {
        Path root = Repo.root();
        List<Path> docs = new ArrayList<>(List.of(root.resolve("docs/benchmarks.md")));
        try (Stream<Path> bench = Files.list(root.resolve("docs/bench"))) {
            bench.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    @Test
    void everyRunFileTheDocsCiteExists() throws Exception {
        Path runs = Repo.root().resolve("docs/bench");
        List<String> missing = new ArrayList<>();
        int cited = 0;
        for (Path doc : docs()) {
            Matcher m = CITED.matcher(Files.readString(doc));
            while (m.find()) {
                cited++;
                if (!Files.isRegularFile(runs.resolve(m.group()))) {
                    missing.add(doc.getFileName() + " cites " + m.group());
                }
            }
        }
        assertThat(cited).as("run files cited by the benchmark docs").isPositive();
        assertThat(missing).isEmpty();
    }

    @Test
    void eachGeneratedReportNamesTheRunItWasMadeFrom() throws Exception {
        Path root = Repo.root();
        for (String report : List.of("docs/benchmarks.md", "docs/bench/long-streams.md",
                "docs/bench/conversations.md")) {
            assertThat(CITED.matcher(Files.readString(root.resolve(report))).find()).as(report).isTrue();
        }
    }

    @Test
    void aRunFileIsNamedByItsStartAndKind() {
        assertThat(Bench.runFile("2026-11-29T08:12:31.5Z", "full-baseline"))
                .isEqualTo("runs/2026-11-29T0812Z-full-baseline.json");
    }
}
