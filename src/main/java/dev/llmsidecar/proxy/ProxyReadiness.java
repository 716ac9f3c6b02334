package dev.llmsidecar.proxy;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * {@code /q/health/ready} goes DOWN the moment SIGTERM starts the drain, while the proxy port still accepts
 * connections (it answers new requests 503 until the server closes), so a balancer that still routes here takes
 * the pod out before its listener goes away.
 */
@Readiness
@ApplicationScoped
public class ProxyReadiness implements HealthCheck {

    @Inject
    ProxyRoute route;

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("llm-sidecar-proxy").status(!route.draining())
                .withData("draining", route.draining()).build();
    }
}
