package dev.llmsidecar.realengine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.llmsidecar.testkit.OtlpReceiver;
import dev.llmsidecar.testkit.Processes;
import io.vertx.core.Vertx;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * RealEngineIT's timing check against the defect it exists for: the packaged sidecar started with every byte held
 * 2 ms after its stamp ({@code -Dllm-sidecar.test.relay-hold=2ms}, a scheduled write that leaves the event loop
 * free), in front of llama-server. The check must fail on each relay hop, and not as inconclusive.
 */
class RealEngineHoldIT {

    @Test
    void theTimingCheckFailsWhenEveryByteIsHeldAfterItsStamp() throws Exception {
        Vertx vertx = Vertx.vertx();
        int enginePort = Processes.freePort();
        try (OtlpReceiver otlp = new OtlpReceiver(vertx);
                Processes.Running engine = Processes.llamaServer(enginePort);
                Processes.Sidecar held = new Processes.Sidecar("http://127.0.0.1:" + enginePort, Map.of(
                        "OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf",
                        "OTEL_BSP_SCHEDULE_DELAY", "100", "OTEL_METRIC_EXPORT_INTERVAL", "1000"),
                        Map.of("llm-sidecar.test.relay-hold", "2ms"))) {
            AssertionError failure = catchThrowableOfType(() -> RealEngineTiming.runAndCheck(enginePort,
                    held.proxyPort, otlp, RealEngineTiming.BOUNDS), AssertionError.class);
            assertThat(failure).as("the timing check with a 2 ms hold").isNotNull();
            assertThat(failure.getMessage()).doesNotContain("inconclusive");
            for (String check : RealEngineTiming.HOLD_CHECKS) {
                assertThat(failure.getMessage()).as("failed on %s", check).contains(check + " beyond");
            }
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
