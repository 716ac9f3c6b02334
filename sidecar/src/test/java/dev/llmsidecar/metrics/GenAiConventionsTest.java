package dev.llmsidecar.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** sidecar.otel.semconv and OTEL_SEMCONV_STABILITY_OPT_IN together. */
class GenAiConventionsTest {

    @Test
    void theSettingPinsUnlessTheLatestAreOptedIn() {
        assertThat(GenAiConventions.of("latest", List.of())).isEqualTo(GenAiConventions.LATEST);
        assertThat(GenAiConventions.of("v1.36", List.of())).isEqualTo(GenAiConventions.V1_36);
        assertThat(GenAiConventions.of(" V1.36.0 ", List.of("http", "database/dup")))
                .as("other categories' opt-ins leave it").isEqualTo(GenAiConventions.V1_36);
        assertThat(GenAiConventions.of("v1.36", List.of("http", " gen_ai_latest_experimental")))
                .isEqualTo(GenAiConventions.LATEST);
        assertThat(GenAiConventions.V1_36.providerKey()).isEqualTo("gen_ai.system");
        assertThat(GenAiConventions.LATEST.providerKey()).isEqualTo("gen_ai.provider.name");
        assertThatThrownBy(() -> GenAiConventions.of("1.40", List.of())).hasMessageContaining("latest or v1.36");
    }
}
