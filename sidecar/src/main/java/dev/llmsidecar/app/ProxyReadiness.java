package dev.llmsidecar.app;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.engine.EngineHealth;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * {@code /q/health/ready}: DOWN the moment SIGTERM starts the drain, while the proxy port still accepts connections
 * (it answers new requests 503 until the server closes), so a balancer that still routes here takes the pod out
 * before its listener goes away; and, with sidecar.engine.readiness-follows-engine, DOWN while the engine's health
 * check fails (loading its model, or down), so the pod takes no traffic its engine cannot serve.
 */
@Readiness
@ApplicationScoped
public class ProxyReadiness implements HealthCheck {

    @Inject
    ProxyLifecycle route;

    @Inject
    EngineScrapeLifecycle engine;

    @Inject
    SidecarConfig config;

    @Override
    public HealthCheckResponse call() {
        boolean draining = route.draining();
        EngineHealth health = engine.health();
        boolean follows = config.engine().readinessFollowsEngine() && health != null;
        boolean engineReady = !follows || health.ready();
        var response = HealthCheckResponse.named("llm-sidecar-proxy").status(!draining && engineReady)
                .withData("draining", draining);
        if (health != null) {
            response.withData("engine_ready", health.ready()).withData("engine_started", health.started());
        }
        return response.build();
    }
}
