package dev.llmsidecar.export;

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
}
