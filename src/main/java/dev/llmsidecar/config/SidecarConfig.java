package dev.llmsidecar.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Every setting of the sidecar, under the {@code sidecar.} prefix (env: {@code SIDECAR_...}).
 * Defaults are the documented production defaults; README.md has the same table.
 */
@ConfigMapping(prefix = "sidecar")
public interface SidecarConfig {

    Upstream upstream();

    Llm llm();

    Metrics metrics();

    Demo demo();

    interface Upstream {
        /** Base URL of the inference server, e.g. http://127.0.0.1:8000. A path prefix is prepended to every request. */
        URI url();

        /** Forward the client's Host header instead of the upstream's authority. */
        @WithDefault("false")
        boolean preserveHost();

        @WithDefault("PT5S")
        Duration connectTimeout();

        /**
         * Longest silence tolerated on an upstream response (before headers or between chunks)
         * before the request is failed. Long, because a queued request on a busy engine can wait minutes.
         */
        @WithDefault("PT10M")
        Duration idleTimeout();

        /** Upstream connection pool size; every open stream holds one HTTP/1.1 connection. */
        @WithDefault("4096")
        int maxConnections();
    }

    interface Llm {
        /**
         * When a streaming client did not ask for usage, add stream_options.include_usage=true upstream
         * (exact token counts) and remove the resulting usage-only chunk from what the client receives.
         */
        @WithDefault("true")
        boolean injectIncludeUsage();

        /**
         * Largest LLM request body read to find model/stream and inject include_usage. A larger body is
         * forwarded untouched, streamed, and its request is timed without model or usage injection.
         */
        @WithDefault("16777216")
        int maxInspectedBodyBytes();

        /**
         * Largest single SSE event held back while deciding whether it is the injected usage chunk
         * (only in injection mode). A larger event disables stripping for that stream and is forwarded.
         */
        @WithDefault("1048576")
        int maxHeldEventBytes();
    }

    interface Metrics {
        /** Histogram upper bounds in seconds for every latency series (TTFT, TPOT, ITL, E2E, chunk gaps). */
        @WithDefault("0.001,0.002,0.003,0.005,0.0075,0.01,0.015,0.02,0.025,0.03,0.04,0.05,0.06,0.075,0.1,"
                + "0.125,0.15,0.2,0.25,0.3,0.4,0.5,0.75,1,1.5,2,2.5,3,4,5,7.5,10,15,20,30,45,60,90,120,180,300,600,900")
        List<Double> latencyBuckets();

        /** Histogram upper bounds for token counts (OTel GenAI recommended boundaries). */
        @WithDefault("1,4,16,64,256,1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864")
        List<Double> tokenBuckets();

        /** Distinct model label values kept; later unknown models are reported as model="other". */
        @WithDefault("50")
        int maxModels();

        /** Models always kept as their own label value, whatever the cap (e.g. the served model names). */
        Optional<List<String>> pinnedModels();
    }

    interface Demo {
        /** Starts the embedded simulated engine and demo traffic (profile "demo"). */
        @WithDefault("false")
        boolean enabled();

        @WithDefault("18001")
        int enginePort();

        /** Demo requests started per second. */
        @WithDefault("4")
        double requestsPerSecond();

        @WithDefault("16")
        int maxConcurrency();
    }
}
