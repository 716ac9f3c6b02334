package dev.llmsidecar.measure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ModelLabelsTest {

    @Test
    void keepsPinnedAndFirstNModelsThenFoldsIntoOther() {
        ModelLabels labels = new ModelLabels(2, List.of("llama-70b"));
        assertThat(labels.label("a")).isEqualTo("a");
        assertThat(labels.label("b")).isEqualTo("b");
        assertThat(labels.label("c")).isEqualTo("other");
        assertThat(labels.label("a")).isEqualTo("a");
        assertThat(labels.label("llama-70b")).isEqualTo("llama-70b");
        assertThat(labels.label(null)).isEqualTo("unknown");
        assertThat(labels.label("x".repeat(500))).isEqualTo("other");
    }

    @Test
    void concurrentFloodNeverAdmitsMoreThanTheCap() {
        ModelLabels labels = new ModelLabels(50, List.of());
        Set<String> seen = ConcurrentHashMap.newKeySet();
        IntStream.range(0, 100_000).parallel().forEach(i -> seen.add(labels.label("model-" + i)));
        Set<String> distinct = new HashSet<>(seen);
        distinct.remove("other");
        assertThat(distinct).hasSize(50);
    }

    @Test
    void theServedModelIsPinnedInEffect() {
        ModelLabels labels = new ModelLabels(2, List.of());
        labels.serving("served-8b");
        assertThat(labels.serving()).isEqualTo("served-8b");
        assertThat(labels.label("a")).isEqualTo("a");
        assertThat(labels.label("b")).isEqualTo("b");
        assertThat(labels.label("c")).isEqualTo("other");
        assertThat(labels.label("served-8b")).as("past the cap, without a slot of its own").isEqualTo("served-8b");

        labels.serving(null);
        assertThat(labels.serving()).isNull();
        assertThat(labels.label("served-8b")).as("served before: kept").isEqualTo("served-8b");
    }

    @Test
    void servedNamesAreBoundedToo() {
        ModelLabels labels = new ModelLabels(2, List.of());
        for (int i = 0; i < 20; i++) {
            labels.serving("swap-" + i);
        }
        assertThat(labels.serving()).isEqualTo("swap-19");
        for (int i = 0; i < ModelLabels.MAX_SERVED; i++) {
            assertThat(labels.label("swap-" + i)).isEqualTo("swap-" + i);
        }
        // later served names are ordinary names: the cap's two slots, then other
        assertThat(labels.label("swap-8")).isEqualTo("swap-8");
        assertThat(labels.label("swap-9")).isEqualTo("swap-9");
        assertThat(labels.label("swap-19")).isEqualTo("other");
    }
}
