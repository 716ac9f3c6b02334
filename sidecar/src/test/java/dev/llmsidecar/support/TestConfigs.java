package dev.llmsidecar.support;

import dev.llmsidecar.config.SidecarConfig;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.HashMap;
import java.util.Map;

/** The real @ConfigMapping, with its documented defaults, built outside Quarkus for plain tests. */
public final class TestConfigs {

    private TestConfigs() {
    }

    public static SidecarConfig sidecar(String upstreamUrl, Map<String, String> overrides) {
        Map<String, String> props = new HashMap<>(overrides);
        props.put("sidecar.upstream.url", upstreamUrl);
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withMapping(SidecarConfig.class)
                .withSources(new PropertiesConfigSource(props, "test", 500))
                .build();
        return config.getConfigMapping(SidecarConfig.class);
    }
}
