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
    void pinnedListedAndAdmittedNamesKeepTheirLabelAnyOtherIsOther() {
        ModelLabels labels = new ModelLabels(2, List.of("llama-70b"));
        assertThat(labels.label("a")).as("not answered yet: no slot").isEqualTo("other");
        labels.admit("a");
        labels.admit("b");
        labels.admit("c"); // past the cap
        assertThat(labels.label("a")).isEqualTo("a");
        assertThat(labels.label("b")).isEqualTo("b");
        assertThat(labels.label("c")).isEqualTo("other");
        assertThat(labels.label("llama-70b")).isEqualTo("llama-70b");
        assertThat(labels.label(null)).isEqualTo("unknown");
        labels.admit("x".repeat(500));
        assertThat(labels.label("x".repeat(500))).isEqualTo("other");
    }

    /**
     * Names the engine rejects never take a slot (issue 42: 50 of them took every slot and a real model then counted
     * as other): a slot is taken only by an answered name, so 60 rejected names leave every slot for a real one.
     */
    @Test
    void namesTheEngineRejectedLeaveTheSlotsFree() {
        ModelLabels labels = new ModelLabels(50, List.of());
        for (int i = 0; i < 60; i++) {
            assertThat(labels.label("typo-" + i)).isEqualTo("other"); // answered 404: never admitted
        }
        labels.admit("real-model");
        assertThat(labels.label("real-model")).isEqualTo("real-model");
    }

    @Test
    void concurrentFloodNeverAdmitsMoreThanTheCap() {
        ModelLabels labels = new ModelLabels(50, List.of());
        IntStream.range(0, 100_000).parallel().forEach(i -> labels.admit("model-" + i));
        Set<String> seen = ConcurrentHashMap.newKeySet();
        IntStream.range(0, 100_000).parallel().forEach(i -> seen.add(labels.label("model-" + i)));
        Set<String> distinct = new HashSet<>(seen);
        distinct.remove("other");
        assertThat(distinct).hasSize(50);
    }

    @Test
    void theEnginesListedModelsHaveLabelsOfTheirOwnAndTheOneServedNamesRequestsThatNameNone() {
        ModelLabels labels = new ModelLabels(2, List.of());
        labels.listed(List.of("served-8b"));
        assertThat(labels.serving()).isEqualTo("served-8b");
        assertThat(labels.label("served-8b")).isEqualTo("served-8b");
        labels.admit("a");
        labels.admit("b");
        labels.admit("c");
        assertThat(labels.label("c")).isEqualTo("other");
        assertThat(labels.label("served-8b")).as("past the cap, without a slot of its own").isEqualTo("served-8b");
        labels.listed(List.of("base-8b", "lora-sql"));
        assertThat(labels.serving()).as("several: none is the served one").isNull();
        assertThat(labels.label("lora-sql")).isEqualTo("lora-sql");
        labels.listed(List.of());
        assertThat(labels.serving()).isNull();
        assertThat(labels.label("served-8b")).as("listed before: kept").isEqualTo("served-8b");
    }

    @Test
    void listedNamesAreBoundedToo() {
        ModelLabels labels = new ModelLabels(2, List.of());
        for (int i = 0; i < 40; i++) {
            labels.listed(List.of("swap-" + i));
        }
        assertThat(labels.serving()).isEqualTo("swap-39");
        for (int i = 0; i < ModelLabels.MAX_LISTED; i++) {
            assertThat(labels.label("swap-" + i)).isEqualTo("swap-" + i);
        }
        assertThat(labels.label("swap-39")).as("past the listed bound: an ordinary name, not answered yet")
                .isEqualTo("other");
    }
}
