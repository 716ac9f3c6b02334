package dev.llmsidecar.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.llmsidecar.testkit.Repo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/metrics.md (with docs/slo.md for the SLO series) is the prose of {@link Contract}: every declared series has a
 * table row with its Prometheus name, type and exactly its labels, every series row names a declared series, and
 * every label's OTLP attribute is in the label table.
 */
class MetricsContractDocsTest {

    static final Path DOCS = Repo.root().resolve("docs");
    static final Pattern SERIES = Pattern.compile("^`((?:gen_ai|llm_sidecar)_[a-z0-9_]+)`$");

    /** One documented series row: its type and OTLP cells (when the table has them) and its label names. */
    record Row(String file, String type, String otlp, Set<String> labels) {
    }

    static Map<String, Row> documentedSeries() throws Exception {
        Map<String, Row> rows = new HashMap<>();
        for (String file : List.of("metrics.md", "slo.md")) {
            int labelsColumn = -1;
            int typeColumn = -1;
            int otlpColumn = -1;
            for (String line : Files.readAllLines(DOCS.resolve(file))) {
                if (!line.startsWith("|")) {
                    labelsColumn = -1;
                    continue;
                }
                String[] cells = cells(line);
                if (cells.length > 1 && cells[0].equals("series")) {
                    labelsColumn = indexOf(cells, "labels");
                    typeColumn = indexOf(cells, "type");
                    otlpColumn = indexOf(cells, "OTLP");
                    continue;
                }
                Matcher m = SERIES.matcher(cells[0]);
                if (labelsColumn < 0 || !m.matches()) {
                    continue;
                }
                rows.put(m.group(1), new Row(file, typeColumn < 0 ? null : cells[typeColumn],
                        otlpColumn < 0 ? null : cells[otlpColumn], labelNames(cells[labelsColumn])));
            }
        }
        return rows;
    }

    static String[] cells(String line) {
        String inner = line.substring(1, line.lastIndexOf('|'));
        return java.util.Arrays.stream(inner.split("\\|", -1)).map(String::trim).toArray(String[]::new);
    }

    static int indexOf(String[] cells, String name) {
        for (int i = 0; i < cells.length; i++) {
            if (cells[i].equals(name)) {
                return i;
            }
        }
        return -1;
    }

    /** "model, token_type (`input`, `output`)" -> {model, token_type}; "—" -> {}. */
    static Set<String> labelNames(String cell) {
        Set<String> names = new TreeSet<>();
        String withoutValues = cell.replaceAll("\\([^)]*\\)", "");
        for (String part : withoutValues.split(",")) {
            String name = part.trim().replace("`", "");
            if (name.matches("[a-z_]+")) {
                names.add(name);
            }
        }
        return names;
    }

    @Test
    void everyDeclaredSeriesIsDocumentedWithItsTypeAndExactlyItsLabels() throws Exception {
        Map<String, Row> documented = documentedSeries();
        List<String> problems = new ArrayList<>();
        for (Series s : Contract.all()) {
            if (!s.on(Backend.PROMETHEUS)) {
                continue;
            }
            Row row = documented.get(s.prometheusName());
            if (row == null) {
                problems.add(s.prometheusName() + ": no row in docs/metrics.md or docs/slo.md");
                continue;
            }
            Set<String> declared = new TreeSet<>();
            s.prometheusLabels().forEach(l -> declared.add(l.prometheus()));
            if (!row.labels().equals(declared)) {
                problems.add(s.prometheusName() + ": documented labels " + row.labels() + ", declared " + declared);
            }
            if (row.otlp() == null) {
                problems.add(s.prometheusName() + ": its table has no OTLP column");
            } else if (s.on(Backend.OTLP) ? !row.otlp().startsWith("`" + s.name() + "`") : !row.otlp().startsWith("—")) {
                problems.add(s.prometheusName() + ": OTLP cell '" + row.otlp() + "', declared "
                        + (s.on(Backend.OTLP) ? s.name() : "Prometheus only (—)"));
            }
            String kind = s.kind().name().toLowerCase(java.util.Locale.ROOT);
            if (row.type() != null && !row.type().startsWith(kind)) {
                problems.add(s.prometheusName() + ": documented as " + row.type() + ", declared " + kind);
            }
        }
        assertThat(problems).isEmpty();
    }

    @Test
    void everyDocumentedSeriesIsDeclared() throws Exception {
        Set<String> declared = new TreeSet<>();
        Contract.all().forEach(s -> declared.add(s.prometheusName()));
        assertThat(documentedSeries().keySet()).allSatisfy(name -> assertThat(declared).as(name).contains(name));
    }

    @Test
    void everyLabelHasItsOtlpAttributeInTheLabelTable() throws Exception {
        String metrics = Files.readString(DOCS.resolve("metrics.md"));
        for (Label l : Label.values()) {
            String prometheus = l.otelOnly() ? "—" : "`" + l.prometheus() + "`";
            assertThat(metrics).as(l.name()).containsPattern(
                    "\\| " + Pattern.quote(prometheus) + " \\| `" + Pattern.quote(l.otel()) + "` \\|");
        }
    }
}
