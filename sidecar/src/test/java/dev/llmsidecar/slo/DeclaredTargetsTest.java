package dev.llmsidecar.slo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.llmsidecar.support.TestConfigs;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** Targets a request declares in its headers: parsing, clamping, buckets, and the bound on what a caller creates. */
class DeclaredTargetsTest {

    private final List<String> counted = new ArrayList<>();
    private final DeclaredTargets.Counter counter = (c, h) -> counted.add(c.label() + "/" + h.label());

    static DeclaredTargets declared(Map<String, String> config) {
        Map<String, String> all = new HashMap<>(config);
        all.putIfAbsent("sidecar.slo.declared.enabled", "true");
        return new SloPolicy(TestConfigs.sidecar("http://127.0.0.1:1", all).slo()).declared();
    }

    static UnaryOperator<String> headers(String... nameValue) {
        Map<String, String> h = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (int i = 0; i < nameValue.length; i += 2) {
            h.put(nameValue[i], nameValue[i + 1]);
        }
        return h::get;
    }

    @Test
    void offByDefaultTheHeadersAreNotRead() {
        DeclaredTargets d = new SloPolicy(TestConfigs.sidecar("http://127.0.0.1:1", Map.of()).slo()).declared();
        assertThat(d.enabled()).isFalse();
        assertThat(d.of(headers("x-llm-d-slo-ttft-ms", "500"), counter)).isNull();
        assertThat(d.bucketObjectives()).isEmpty();
        assertThat(counted).isEmpty();
    }

    @Test
    void aDeclaredValueJudgesTheRequestItselfUnderTheSmallestBucketAtOrAboveIt() {
        DeclaredTargets d = declared(Map.of());
        List<Objective> o = d.of(headers("x-llm-d-slo-ttft-ms", "300", "x-llm-d-slo-tpot-ms", "20"), counter);
        assertThat(o).extracting(Objective::name).containsExactly("declared:ttft<=500ms", "declared:tpot<=20ms");
        assertThat(o.get(0).ttftNanos()).as("its own value, not the bucket's").isEqualTo(300_000_000L);
        assertThat(o.get(0).tpotNanos()).isEqualTo(-1);
        assertThat(o.get(1).tpotNanos()).isEqualTo(20_000_000L);
        assertThat(o.get(1).ttftNanos()).isEqualTo(-1);
        assertThat(o.get(0).sloClass()).isEqualTo(DeclaredTargets.SLO_CLASS);
        assertThat(o.get(0).target()).isEqualTo(0.99);
        assertThat(counted).containsExactly("ttft/accepted", "tpot/accepted");
        // exactly at a bound: that bucket; a fraction of a millisecond
        assertThat(d.of(headers("x-llm-d-slo-ttft-ms", "250"), counter).get(0).name())
                .isEqualTo("declared:ttft<=250ms");
        List<Objective> fraction = d.of(headers("x-llm-d-slo-tpot-ms", "12.5"), counter);
        assertThat(fraction.get(0).name()).isEqualTo("declared:tpot<=20ms");
        assertThat(fraction.get(0).tpotNanos()).isEqualTo(12_500_000L);
    }

    @Test
    void theOlderHeadersAreAcceptedAndLlmDsWinsWhenBothAreThere() {
        DeclaredTargets d = declared(Map.of());
        assertThat(d.of(headers("x-slo-ttft-ms", "900"), counter).get(0).ttftNanos()).isEqualTo(900_000_000L);
        assertThat(d.of(headers("x-slo-ttft-ms", "900", "X-LLM-D-SLO-TTFT-MS", "150"), counter).get(0).ttftNanos())
                .isEqualTo(150_000_000L);
        DeclaredTargets renamed = declared(Map.of("sidecar.slo.declared.ttft-headers", "x-deadline-ttft"));
        assertThat(renamed.of(headers("x-llm-d-slo-ttft-ms", "900"), counter)).as("only the configured names")
                .isNull();
        assertThat(renamed.of(headers("x-deadline-ttft", "900"), counter)).hasSize(1);
    }

    @Test
    void valuesOutsideTheBoundsAreClampedAndCountedSo() {
        DeclaredTargets d = declared(Map.of());
        Objective low = d.of(headers("x-llm-d-slo-ttft-ms", "1"), counter).get(0);
        assertThat(low.ttftNanos()).isEqualTo(50_000_000L);
        assertThat(low.name()).isEqualTo("declared:ttft<=100ms");
        Objective high = d.of(headers("x-llm-d-slo-ttft-ms", "3600000"), counter).get(0);
        assertThat(high.ttftNanos()).isEqualTo(30_000_000_000L);
        assertThat(high.name()).isEqualTo("declared:ttft<=30000ms");
        Objective huge = d.of(headers("x-llm-d-slo-ttft-ms", "9999999999999999"), counter).get(0);
        assertThat(huge.ttftNanos()).as("too large for nanoseconds: clamped like any other").isEqualTo(30_000_000_000L);
        assertThat(counted).containsExactly("ttft/clamped", "ttft/clamped", "ttft/clamped");
    }

    @Test
    void whatDoesNotParseIsCountedAndIgnored() {
        DeclaredTargets d = declared(Map.of());
        for (String bad : List.of("", "abc", "-5", "0", "0.0000001", "1e3", "NaN", "Infinity", "500ms", ".5", "5.",
                "1.2.3", "0x10", "12345678901234567", " ")) {
            assertThat(d.of(headers("x-llm-d-slo-ttft-ms", bad), counter)).as("'%s'", bad).isNull();
        }
        assertThat(counted).hasSize(15).containsOnly("ttft/unparseable");
        counted.clear();
        List<Objective> onlyTpot = d.of(headers("x-llm-d-slo-ttft-ms", "soon", "x-llm-d-slo-tpot-ms", " 40 "),
                counter);
        assertThat(onlyTpot).extracting(Objective::name).containsExactly("declared:tpot<=50ms");
        assertThat(counted).containsExactly("ttft/unparseable", "tpot/accepted");
    }

    @Test
    void aFloodOfDistinctValuesNamesNoMoreObjectivesThanTheBuckets() {
        DeclaredTargets d = declared(Map.of());
        Set<String> bucketNames = new HashSet<>();
        d.bucketObjectives().forEach(o -> bucketNames.add(o.name()));
        assertThat(bucketNames).hasSize(8 + 6);
        Set<String> seen = new HashSet<>();
        Random random = new Random(36);
        for (int i = 0; i < 20_000; i++) {
            String ttft = Double.toString(random.nextDouble() * 100_000).replaceAll("E.*", "");
            String tpot = Integer.toString(random.nextInt(2_000_000));
            List<Objective> o = d.of(headers("x-llm-d-slo-ttft-ms", ttft, "x-llm-d-slo-tpot-ms", tpot), counter);
            if (o != null) {
                o.forEach(x -> seen.add(x.name()));
            }
        }
        assertThat(bucketNames).containsAll(seen);
        assertThat(seen).hasSizeGreaterThan(10);
    }

    @Test
    void theConfigurationIsCheckedAtStart() {
        assertThatThrownBy(() -> declared(Map.of("sidecar.slo.declared.ttft-max", "PT60S")))
                .hasMessageContaining("largest bucket");
        assertThatThrownBy(() -> declared(Map.of("sidecar.slo.declared.tpot-min", "PT1S")))
                .hasMessageContaining("min <= max");
        assertThatThrownBy(() -> declared(Map.of("sidecar.slo.declared.target", "1")))
                .hasMessageContaining("target");
        assertThatThrownBy(() -> declared(Map.of("sidecar.slo.classes", "declared,batch")))
                .hasMessageContaining("sidecar.slo.classes");
        assertThatThrownBy(() -> declared(Map.of("sidecar.slo.objectives.\"declared:x\".ttft", "PT1S")))
                .hasMessageContaining("declared:");
    }

    @Test
    void bucketNamesAreInMilliseconds() {
        assertThat(DeclaredTargets.millis(500_000_000L)).isEqualTo("500ms");
        assertThat(DeclaredTargets.millis(12_500_000L)).isEqualTo("12.5ms");
        assertThat(DeclaredTargets.millis(30_000_000_000L)).isEqualTo("30000ms");
        assertThat(DeclaredTargets.parseMillis("250")).isEqualTo(250_000_000L);
        assertThat(DeclaredTargets.parseMillis("0.5")).isEqualTo(500_000L);
    }
}
