package dev.llmsidecar.app;

import dev.llmsidecar.live.LiveStats;
import dev.llmsidecar.live.LiveStatsText;
import io.quarkus.vertx.http.ManagementInterface;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Serves {@link LiveStats} at /q/llm (and as a screenful of text at /q/llm?format=text), the live page that plots it
 * at /q/llm/ui and what the page plotted in the last minutes at /q/llm/history, on the management interface only.
 */
@ApplicationScoped
public class LiveStatsRoute {

    /** The live page: one self-contained HTML file (inline script and style, no external URL) in the jar. */
    static final String PAGE_RESOURCE = "llm-ui/index.html";

    void install(@Observes ManagementInterface management, TelemetryProducer telemetry) {
        management.router().get("/q/llm").handler(rc -> {
            JsonObject doc = LiveStats.render(telemetry.telemetry());
            if ("text".equals(rc.request().getParam("format"))) {
                rc.response().putHeader("content-type", "text/plain; charset=utf-8").end(LiveStatsText.render(doc));
            } else {
                rc.response().putHeader("content-type", "application/json").end(doc.encodePrettily());
            }
        });
        management.router().get("/q/llm/history").handler(rc -> rc.response()
                .putHeader("content-type", "application/json")
                .end(telemetry.telemetry().history().render(System.currentTimeMillis()).encode()));
        LivePage page = LivePage.load(PAGE_RESOURCE);
        management.router().get("/q/llm/ui").handler(page::serve);
    }

    /** The page's bytes, read from the classpath once, and a Content-Security-Policy allowing only its own inline code. */
    record LivePage(Buffer body, String contentSecurityPolicy) {

        private static final Pattern SCRIPT = Pattern.compile("<script>(.*?)</script>", Pattern.DOTALL);
        private static final Pattern STYLE = Pattern.compile("<style>(.*?)</style>", Pattern.DOTALL);

        static LivePage load(String resource) {
            String html;
            try (InputStream in = LiveStatsRoute.class.getClassLoader().getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException("live page " + resource + " missing from the classpath");
                }
                html = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            // no 'unsafe-inline': the inline script and style blocks are allowed by their hashes, nothing else runs;
            // the page only talks to its own origin (/q/llm)
            String csp = "default-src 'none'; script-src " + hashes(SCRIPT, html) + "; style-src " + hashes(STYLE, html)
                    + "; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
                    + "frame-ancestors 'none'";
            return new LivePage(Buffer.buffer(html), csp);
        }

        private static String hashes(Pattern block, String html) {
            StringBuilder out = new StringBuilder();
            Matcher m = block.matcher(html);
            while (m.find()) {
                try {
                    byte[] digest = MessageDigest.getInstance("SHA-256").digest(m.group(1).getBytes(StandardCharsets.UTF_8));
                    out.append(out.length() == 0 ? "" : " ").append("'sha256-")
                            .append(Base64.getEncoder().encodeToString(digest)).append('\'');
                } catch (NoSuchAlgorithmException e) {
                    throw new IllegalStateException(e);
                }
            }
            return out.length() == 0 ? "'none'" : out.toString();
        }

        void serve(RoutingContext rc) {
            rc.response()
                    .putHeader("content-type", "text/html; charset=utf-8")
                    .putHeader("cache-control", "no-cache")
                    .putHeader("content-security-policy", contentSecurityPolicy)
                    .putHeader("x-content-type-options", "nosniff")
                    .putHeader("referrer-policy", "no-referrer")
                    .end(body);
        }
    }
}
