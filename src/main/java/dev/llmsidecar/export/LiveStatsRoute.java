package dev.llmsidecar.export;

import io.quarkus.vertx.http.ManagementInterface;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/** Serves {@link LiveStats} at /q/llm on the management interface only. */
@ApplicationScoped
public class LiveStatsRoute {

    void install(@Observes ManagementInterface management, TelemetryProducer telemetry) {
        management.router().get("/q/llm").handler(rc -> rc.response()
                .putHeader("content-type", "application/json")
                .end(LiveStats.render(telemetry.telemetry()).encodePrettily()));
    }
}
