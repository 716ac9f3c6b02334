package dev.llmsidecar.fuzz;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.llmsidecar.engine.ExpositionParser.Result;
import dev.llmsidecar.engine.ExpositionParser.Sample;
import dev.llmsidecar.engine.ExpositionParser;
import dev.llmsidecar.fuzz.TextFormatReference.Eof;
import dev.llmsidecar.fuzz.TextFormatReference.Invalid;
import dev.llmsidecar.fuzz.TextFormatReference.Line;
import dev.llmsidecar.fuzz.TextFormatReference.Valid;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * {@link ExpositionParser} against {@link TextFormatReference}, a reader written from the text format's
 * specification: on generated valid expositions (with lines both must refuse mixed in) they agree exactly; on any
 * text, every line the specification accepts is read as it says (the parser may accept more: it is lenient by
 * design) and nothing throws; on huge repetitive text the parser stays linear, and so it does on hostile bodies as
 * large as the scrapers read (plain tests).
 */
class ExpositionParserFuzzTest {

    private static final String[] NAMES = {"vllm:num_requests_running", "vllm:gpu_cache_usage_perc",
        "sglang:num_queue_reqs", "http_requests_total", "up", "_", ":", "a:b_c9", "DCGM_FI_DEV_GPU_UTIL"};
    private static final String[] VALUES = {"0", "-0", "1", "12.0", "1027", "-3.5", "1.5e+03", "1e-07", "1E5",
        ".5", "5.", "+3", "NaN", "nan", "+Inf", "-Inf", "Inf", "inf", "+Infinity", "-infinity",
        "1.7976931348623157e308", "4.9e-324", "123456789012345678901234567890"};
    /** Lines both readers refuse: each breaks the grammar in one place. */
    private static final String[] INVALID = {"1abc 1", "foo", "foo ", "foo abc", "foo 0x1p3", "foo 1d", "foo NaNa",
        "foo{a=\"b} 1", "foo{a} 1", "foo 1 2 3", "foo{1a=\"b\"} 1", "foo{a=\"b\" 1", "foo{a=b} 1", "foo{=\"b\"} 1",
        "{a=\"b\"} 1", "foo{a=\"b\"}} 1", "foo 1 2.5.5", "foo{a=\"\\\"} 1", "foo\u00e9 1", "foo 1 abc"};

    /** Valid expositions, with blank, comment and invalid lines between the samples. */
    @FuzzTest(maxDuration = "5m")
    void generatedExposition(FuzzedDataProvider data) {
        JsonGen g = new JsonGen(data);
        int lines = g.upTo(20);
        List<String> text = new ArrayList<>();
        for (int i = 0; i < lines; i++) {
            text.add(switch (g.upTo(7)) {
                case 0 -> blanks(g);
                case 1 -> blanks(g) + "#" + g.pick(" HELP ", " TYPE ", "", " ", "\t") + name(g) + " "
                        + g.text().replace('\n', ' ').replace('\r', ' ');
                case 2 -> blanks(g) + g.pick(INVALID) + blanks(g);
                default -> sample(g);
            });
        }
        if (g.upTo(31) == 31) {
            text.add(g.upTo(text.size()), g.pick("# EOF", "#EOF", " # EOF\t"));
        }
        String exposition = String.join("\n", text) + (g.chance() ? "\n" : "");

        List<Sample> samples = new ArrayList<>();
        int rejected = 0;
        for (String line : exposition.split("\n", -1)) {
            Line read = TextFormatReference.read(line);
            if (read instanceof Eof) {
                break;
            }
            if (read instanceof Valid v) {
                samples.add(v.sample());
            } else if (read instanceof Invalid) {
                rejected++;
            }
        }
        Result result = ExpositionParser.parse(exposition);
        assertThat(result.samples()).as(exposition).containsExactlyElementsOf(samples);
        assertThat(result.rejectedLines()).as(exposition).isEqualTo(rejected);

        Predicate<String> keep = name -> (name.hashCode() & 1) == 0;
        Result filtered = ExpositionParser.parse(exposition, keep);
        assertThat(filtered.samples()).as("filtered: %s", exposition)
                .containsExactlyElementsOf(samples.stream().filter(s -> keep.test(s.name())).toList());
        assertThat(filtered.rejectedLines()).as("the filter does not change what is rejected").isEqualTo(rejected);
    }

    /** Any text a neighbour's /metrics may hold. */
    @FuzzTest(maxDuration = "5m")
    void anyText(byte[] bytes) {
        String text = new String(bytes, UTF_8);
        Result whole = ExpositionParser.parse(text);
        List<Sample> samples = new ArrayList<>();
        int rejected = 0;
        for (String line : text.split("\n", -1)) {
            // CRLF line ends: the parser takes them (documented by its tests), the specification knows only LF
            Line read = TextFormatReference.read(line.endsWith("\r") ? line.substring(0, line.length() - 1) : line);
            if (read instanceof Eof) {
                break;
            }
            Result alone = ExpositionParser.parse(line);
            if (read instanceof Valid v) {
                assertThat(alone.samples()).as("a valid line: %s", line).containsExactly(v.sample());
                assertThat(alone.rejectedLines()).as("a valid line: %s", line).isZero();
            } else if (read instanceof Invalid i) {
                // the parser is lenient by design (exemplars, CRLF, a timestamp in seconds...): either is fine
                assertThat(alone.samples().size() + alone.rejectedLines())
                        .as("an invalid line (%s): %s", i.why(), line).isEqualTo(1);
            } else {
                assertThat(alone).as("blank or comment: %s", line).isEqualTo(new Result(List.of(), 0));
            }
            samples.addAll(alone.samples());
            rejected += alone.rejectedLines();
        }
        assertThat(whole.samples()).as("the whole text is its lines: %s", text).containsExactlyElementsOf(samples);
        assertThat(whole.rejectedLines()).as("the whole text is its lines: %s", text).isEqualTo(rejected);
        assertThat(ExpositionParser.parse(text, name -> false).rejectedLines()).isEqualTo(rejected);
    }

    /**
     * A head, a unit repeated up to a quarter of a mebibyte, a tail: long lines, many labels, many lines. The
     * parser stays linear (a quarter mebibyte takes milliseconds; the bound leaves room for a loaded machine) and
     * returns at most one sample per line.
     */
    @FuzzTest(maxDuration = "5m")
    void repeatedText(FuzzedDataProvider data) {
        String head = data.consumeString(64);
        String unit = data.consumeString(32);
        String tail = data.consumeString(32);
        if (unit.isEmpty()) {
            unit = "a=\"\",";
        }
        int times = Math.min(data.consumeInt(1, 1 << 18), (256 * 1024) / unit.length());
        String text = head + unit.repeat(times) + tail;
        long start = System.nanoTime();
        Result result = ExpositionParser.parse(text);
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(millis).as("parse time of %d chars", text.length()).isLessThan(2_000);
        long lines = text.chars().filter(c -> c == '\n').count() + 1;
        assertThat((long) result.samples().size() + result.rejectedLines()).isLessThanOrEqualTo(lines);
    }

    // ------------------------------------------------------------------------------------------ hostile text

    /** The scrapers read at most this much of a body (EngineMetricsScraper and DcgmScraper.MAX_BODY_BYTES). */
    private static final int MAX_BODY = 8 * 1024 * 1024;

    @Test
    void oneLineAsLongAsABodyMayBe() {
        String value = "x".repeat(MAX_BODY - 40);
        Result r = parseQuickly("vllm:num_requests_running{a=\"" + value + "\"} 1\n");
        assertThat(r.samples()).singleElement().satisfies(s -> assertThat(s.labels().get("a")).hasSize(value.length()));
    }

    @Test
    void aMillionLabelsOnOneLine() {
        StringBuilder sb = new StringBuilder("vllm:num_requests_running{");
        int labels = 0;
        while (sb.length() < MAX_BODY - 32) {
            sb.append('l').append(labels++).append("=\"\",");
        }
        int written = labels;
        Result r = parseQuickly(sb.append("} 1").toString());
        assertThat(r.samples()).singleElement().satisfies(s -> assertThat(s.labels()).hasSize(written));
        assertThat(written).isGreaterThan(700_000);
    }

    @Test
    void repetitionThatNeverCloses() {
        for (String unit : new String[] {"{", "a{", "{a=\"", "\\", "a=\"\",", "#", " ", "\r", "1e", "-"}) {
            Result r = parseQuickly("vllm:x{a=\"" + unit.repeat((MAX_BODY - 16) / unit.length()));
            assertThat(r.samples().size() + r.rejectedLines()).as(unit).isLessThanOrEqualTo(1);
        }
    }

    @Test
    void aLineForEveryFewBytes() {
        // one sample per line at most: an engine name makes a line of 28 bytes (the scraper keeps engine names)
        String line = "vllm:num_requests_running 1\n";
        Result r = parseQuickly(line.repeat(MAX_BODY / line.length()));
        assertThat(r.samples()).hasSize(MAX_BODY / line.length());
        assertThat(parseQuickly("\n".repeat(MAX_BODY)).samples()).isEmpty();
        assertThat(parseQuickly("}\n".repeat(MAX_BODY / 2)).rejectedLines()).isEqualTo(MAX_BODY / 2);
    }

    /** Linear work: a body the size the scrapers allow takes well under a second; the bound leaves room. */
    private static Result parseQuickly(String text) {
        return assertTimeoutPreemptively(Duration.ofSeconds(10), () -> ExpositionParser.parse(text));
    }

    // ------------------------------------------------------------------------------------------ the generator

    private static String blanks(JsonGen g) {
        return g.pick("", "", " ", "\t", "  \t ");
    }

    private static String name(JsonGen g) {
        if (g.chance()) {
            return g.pick(NAMES);
        }
        String first = "abcXYZ_:";
        String rest = "abcXYZ_:019";
        StringBuilder sb = new StringBuilder().append(first.charAt(g.upTo(first.length() - 1)));
        for (int n = g.upTo(8); n > 0; n--) {
            sb.append(rest.charAt(g.upTo(rest.length() - 1)));
        }
        return sb.toString();
    }

    private static String labelName(JsonGen g) {
        String first = "abcXYZ_";
        String rest = "abcXYZ_019";
        StringBuilder sb = new StringBuilder().append(first.charAt(g.upTo(first.length() - 1)));
        for (int n = g.upTo(6); n > 0; n--) {
            sb.append(rest.charAt(g.upTo(rest.length() - 1)));
        }
        return sb.toString();
    }

    /** A label value written with the format's escapes (and now and then an escape it does not define). */
    private static String labelValue(JsonGen g) {
        String value = g.text();
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '\\' -> sb.append(g.upTo(7) == 7 ? "\\t" : "\\\\");
                case '"' -> sb.append("\\\"");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append(' '); // a raw CR before the line feed would end the line early (CRLF)
                default -> sb.append(c);
            }
        }
        return sb.append('"').toString();
    }

    private static String sample(JsonGen g) {
        StringBuilder sb = new StringBuilder(blanks(g)).append(name(g));
        int labels = g.upTo(5) - 1; // -1: no braces
        if (labels >= 0) {
            sb.append(blanks(g)).append('{').append(blanks(g));
            List<String> names = new ArrayList<>();
            for (int i = 0; i < labels; i++) {
                String label = labelName(g);
                if (names.contains(label)) {
                    continue;
                }
                if (!names.isEmpty()) {
                    sb.append(',').append(blanks(g));
                }
                names.add(label);
                sb.append(label).append(blanks(g)).append('=').append(blanks(g)).append(labelValue(g))
                        .append(blanks(g));
            }
            if (!names.isEmpty() && g.upTo(3) == 3) {
                sb.append(',').append(blanks(g)); // a trailing comma is allowed
            }
            sb.append('}');
            sb.append(g.chance() ? "" : " ");
        } else {
            sb.append(g.pick(" ", "\t", "  "));
        }
        String value = g.chance() ? g.pick(VALUES) : g.number();
        sb.append(TextFormatReference.goFloat(value) != null ? value : "1"); // no out-of-range literal
        if (g.chance()) {
            sb.append(g.pick(" ", "\t ")).append(g.chance() ? "1395066363000" : g.integer(g.upTo(Integer.MAX_VALUE)));
        }
        return sb.append(blanks(g)).toString();
    }
}
