package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Request length distributions: bounds, seeded determinism, the JSONL trace, and errors for bad input. */
class LengthDistributionTest {

    static int[] draw(LengthDistribution d, long seed, int n) {
        Random r = new Random(seed);
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = d.sample(r);
        }
        return out;
    }

    @Test
    void fixedAndUniform() {
        assertThat(draw(LengthDistribution.parse("128", "x"), 1, 100)).containsOnly(128);
        assertThat(draw(LengthDistribution.parse("fixed:7", "x"), 1, 100)).containsOnly(7);
        int[] u = draw(LengthDistribution.parse("uniform:10,20", "x"), 1, 10_000);
        assertThat(Arrays.stream(u).min().getAsInt()).isEqualTo(10);
        assertThat(Arrays.stream(u).max().getAsInt()).isEqualTo(20);
        assertThat(Arrays.stream(u).average().getAsDouble()).isBetween(14.8, 15.2);
    }

    @Test
    void normalStaysWithinItsBoundsAndKeepsItsMeanWhenTheyAreWide() {
        int[] wide = draw(LengthDistribution.parse("normal:512,64", "x"), 2, 20_000);
        assertThat(Arrays.stream(wide).average().getAsDouble()).isBetween(505.0, 519.0);
        double sd = Math.sqrt(Arrays.stream(wide).mapToDouble(v -> (v - 512.0) * (v - 512.0)).average().getAsDouble());
        assertThat(sd).isBetween(60.0, 68.0);
        assertThat(Arrays.stream(wide).min().getAsInt()).isGreaterThanOrEqualTo(1);
        int[] tight = draw(LengthDistribution.parse("normal:100,80,min=50,max=150", "x"), 3, 20_000);
        assertThat(Arrays.stream(tight).min().getAsInt()).isGreaterThanOrEqualTo(50);
        assertThat(Arrays.stream(tight).max().getAsInt()).isLessThanOrEqualTo(150);
        // truncation redraws, it does not pile up on the bounds
        assertThat(Arrays.stream(tight).filter(v -> v == 50 || v == 150).count()).isLessThan(1000);
    }

    @Test
    void logNormalHasTheGivenMeanAndAHeavyRightTailWithinBounds() {
        int[] v = draw(LengthDistribution.parse("lognormal:200,150", "x"), 4, 40_000);
        assertThat(Arrays.stream(v).average().getAsDouble()).isBetween(190.0, 210.0);
        double median = Arrays.stream(v).sorted().toArray()[v.length / 2];
        assertThat(median).as("right-skewed: median below mean").isLessThan(180);
        assertThat(Arrays.stream(v).max().getAsInt()).isLessThanOrEqualTo(200 + 6 * 150);
        int[] bounded = draw(LengthDistribution.parse("lognormal:200,150,min=100,max=300", "x"), 5, 10_000);
        assertThat(Arrays.stream(bounded).min().getAsInt()).isGreaterThanOrEqualTo(100);
        assertThat(Arrays.stream(bounded).max().getAsInt()).isLessThanOrEqualTo(300);
    }

    @Test
    void theSameSeedGivesTheSameLengths() {
        for (String spec : new String[] {"uniform:1,1000", "normal:300,100", "lognormal:300,200,max=2000"}) {
            LengthDistribution d = LengthDistribution.parse(spec, "x");
            assertThat(draw(d, 42, 500)).as(spec).containsExactly(draw(d, 42, 500));
            assertThat(draw(d, 42, 500)).as(spec).isNotEqualTo(draw(d, 43, 500));
        }
        RequestShapes a = RequestShapes.of(LengthDistribution.parse("normal:300,100", "x"),
                LengthDistribution.parse("lognormal:100,50", "x"), 9);
        RequestShapes b = RequestShapes.of(LengthDistribution.parse("normal:300,100", "x"),
                LengthDistribution.parse("lognormal:100,50", "x"), 9);
        for (int i = 0; i < 100; i++) {
            assertThat(a.next()).isEqualTo(b.next());
        }
        assertThat(PromptBuilder.prompt(50, new Random(1))).isEqualTo(PromptBuilder.prompt(50, new Random(1)));
        assertThat(PromptBuilder.prompt(50, new Random(1)).split(" ")).hasSize(50);
    }

    @Test
    void badSpecsAreRefusedWithTheOptionNamed() {
        String[][] bad = {
            {"", "empty"}, {"0", "at least 1"}, {"-5", "at least 1"}, {"fixed:1,2", "one length"},
            {"uniform:5", "uniform:MIN,MAX"}, {"uniform:9,3", "max below min"}, {"normal:100", "MEAN,SD"},
            {"normal:100,-1", "sd >= 0"}, {"normal:0.5,1", "mean must be >= 1"}, {"normal:100,10,min=90,max=80",
                "max below min"}, {"normal:100,10,foo=1", "unknown part"}, {"gamma:1,2", "unknown distribution"},
            {"normal:abc,1", "not a number"}, {"fixed:1.5", "whole number"}};
        for (String[] b : bad) {
            assertThatThrownBy(() -> LengthDistribution.parse(b[0], "--input-len")).as(b[0])
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--input-len")
                    .hasMessageContaining(b[1]);
        }
    }

    @Test
    void aTraceIsReplayedInOrderAndCycled(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("t.jsonl");
        Files.writeString(file, """
                {"input_tokens": 10, "output_tokens": 5}
                # a comment

                {"input_tokens": 2000, "output_tokens": 300, "note": "other members are ignored"}
                {"output_tokens": 1, "input_tokens": 1}
                """);
        RequestShapes t = RequestShapes.trace(RequestShapes.readTrace(file), "t.jsonl");
        List<RequestShapes.Shape> seen = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            seen.add(t.next());
        }
        assertThat(seen).containsExactly(new RequestShapes.Shape(10, 5), new RequestShapes.Shape(2000, 300),
                new RequestShapes.Shape(1, 1), new RequestShapes.Shape(10, 5), new RequestShapes.Shape(2000, 300),
                new RequestShapes.Shape(1, 1), new RequestShapes.Shape(10, 5));
        assertThat(t.describe()).contains("3 requests");
    }

    @Test
    void aBadTraceLineIsRefusedWithItsNumber() {
        String[][] bad = {
            {"{\"input_tokens\":1,\"output_tokens\":1}\nnot json", "t:2", "not a JSON object"},
            {"{\"input_tokens\":1}", "t:1", "output_tokens"},
            {"{\"input_tokens\":0,\"output_tokens\":1}", "t:1", "input_tokens"},
            {"{\"input_tokens\":1.5,\"output_tokens\":1}", "t:1", "whole number"},
            {"{\"input_tokens\":\"12\",\"output_tokens\":1}", "t:1", "whole number"},
            {"[1,2]", "t:1", "not a JSON object"},
            {"\n# only a comment\n", "t", "no requests"}};
        for (String[] b : bad) {
            assertThatThrownBy(() -> RequestShapes.parseTrace(b[0], "t")).as(b[0])
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(b[1])
                    .hasMessageContaining(b[2]);
        }
    }
}
