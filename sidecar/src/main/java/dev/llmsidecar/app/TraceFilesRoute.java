package dev.llmsidecar.app;

import dev.llmsidecar.trace.TraceFiles;
import dev.llmsidecar.trace.TraceRecorder;
import io.quarkus.vertx.http.ManagementInterface;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Serves the trace recorder's closed files on the management interface: {@code GET /q/traces} lists them (JSON, or
 * one name a line with {@code ?format=text}), {@code GET /q/traces/<name>} sends one. Only a closed file's exact name
 * is served ({@link TraceFiles#CLOSED_NAME}): never the open file, never a path. 404 while the recorder is off.
 */
@ApplicationScoped
public class TraceFilesRoute {

    static final String OFF = "the trace recorder is off (sidecar.trace.enabled=false)\n";

    void install(@Observes ManagementInterface management, TelemetryProducer telemetry) {
        management.router().get("/q/traces").handler(rc -> {
            TraceRecorder recorder = telemetry.telemetry().trace();
            if (recorder == null) {
                notFound(rc, OFF);
                return;
            }
            // a directory listing: off the event loop
            rc.vertx().executeBlocking(() -> TraceFiles.closed(recorder.dir()), false).onComplete(ar -> {
                if (ar.failed()) {
                    rc.fail(ar.cause());
                } else if ("text".equals(rc.request().getParam("format"))) {
                    StringBuilder names = new StringBuilder();
                    ar.result().forEach(p -> names.append(p.getFileName()).append('\n'));
                    rc.response().putHeader("content-type", "text/plain; charset=utf-8").end(names.toString());
                } else {
                    rc.response().putHeader("content-type", "application/json").end(listing(ar.result()).encode());
                }
            });
        });
        management.router().get("/q/traces/:name").handler(rc -> {
            TraceRecorder recorder = telemetry.telemetry().trace();
            if (recorder == null) {
                notFound(rc, OFF);
                return;
            }
            Optional<Path> file = TraceFiles.closed(recorder.dir(), rc.pathParam("name"));
            if (file.isEmpty()) {
                notFound(rc, "no closed trace file of that name (GET /q/traces lists them)\n");
                return;
            }
            rc.response().putHeader("content-type", "application/jsonl")
                    .putHeader("content-disposition", "attachment; filename=\"" + file.get().getFileName() + "\"")
                    .sendFile(file.get().toString()).onFailure(e -> {
                        if (!rc.response().headWritten()) {
                            notFound(rc, "that trace file is gone (deleted beyond sidecar.trace.max-files)\n");
                        }
                    });
        });
    }

    /** {"files":[{"name":..., "bytes":...}, ...]}, oldest first. */
    static JsonObject listing(List<Path> files) {
        JsonArray out = new JsonArray();
        for (Path p : files) {
            long bytes;
            try {
                bytes = Files.size(p);
            } catch (IOException e) {
                continue; // deleted meanwhile
            }
            out.add(new JsonObject().put("name", p.getFileName().toString()).put("bytes", bytes));
        }
        return new JsonObject().put("files", out);
    }

    private static void notFound(RoutingContext rc, String message) {
        rc.response().setStatusCode(404).putHeader("content-type", "text/plain; charset=utf-8").end(message);
    }
}
