package dev.llmsidecar.app;

import dev.llmsidecar.config.SidecarConfig;
import dev.llmsidecar.trace.TraceFiles;
import dev.llmsidecar.trace.TraceRecorder;
import io.quarkus.vertx.http.ManagementInterface;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.jboss.logging.Logger;

/**
 * Serves the trace recorder's closed files on the management interface: {@code GET /q/traces} lists them (JSON, or
 * one name a line with {@code ?format=text}), {@code GET /q/traces/<name>} sends one. Both need the bearer token of
 * sidecar.trace.token-file ({@link TokenFile}): 401 without it; without a token file the files are not served
 * at all (404, and a warning at start). Only a closed file's exact name is served ({@link TraceFiles#CLOSED_NAME}),
 * never the open file, a path or a link: the file is opened without following a link and the channel opened is the one
 * sent, so a link swapped in after the name was checked is not followed either. 404 while the recorder is off.
 * docs/security.md lists every route and its guard.
 */
@ApplicationScoped
public class TraceFilesRoute {

    private static final Logger LOG = Logger.getLogger(TraceFilesRoute.class);
    static final String OFF = "the trace recorder is off (sidecar.trace.enabled=false, or its settings were refused: "
            + "see the log)\n";
    static final String NO_TOKEN = "the trace files are not served without sidecar.trace.token-file\n";
    static final String UNAUTHORIZED = "a bearer token is required (Authorization: Bearer <the token of "
            + "sidecar.trace.token-file>)\n";
    /** Bytes read from a file per write to the client (writes wait for the client: its queue is not filled). */
    static final int CHUNK = 64 * 1024;

    /** What a guarded request may do. */
    private enum Access { NOT_SERVED, UNAUTHORIZED, GRANTED }

    void install(@Observes ManagementInterface management, TelemetryProducer telemetry, SidecarConfig config) {
        TokenFile token = config.trace().tokenFile().filter(f -> !f.isBlank())
                .map(f -> new TokenFile("sidecar.trace.token-file", Path.of(f), System::nanoTime)).orElse(null);
        if (config.trace().enabled() && token == null) {
            LOG.warn("sidecar.trace.enabled without sidecar.trace.token-file: the trace files are recorded but not "
                    + "served (/q/traces answers 404); docs/security.md");
        }
        management.router().get("/q/traces").handler(rc -> {
            TraceRecorder recorder = telemetry.telemetry().trace();
            if (recorder == null) {
                notFound(rc, OFF);
                return;
            }
            String authorization = rc.request().getHeader("authorization");
            // the token file and the directory: off the event loop
            rc.vertx().executeBlocking(() -> {
                Access access = access(token, authorization);
                return access == Access.GRANTED ? listing(TraceFiles.closed(recorder.dir())) : access;
            }, false).onComplete(ar -> {
                if (ar.failed()) {
                    rc.fail(ar.cause());
                } else if (ar.result() instanceof Access refused) {
                    refuse(rc, refused);
                } else if ("text".equals(rc.request().getParam("format"))) {
                    StringBuilder names = new StringBuilder();
                    for (Object f : ((JsonObject) ar.result()).getJsonArray("files")) {
                        names.append(((JsonObject) f).getString("name")).append('\n');
                    }
                    rc.response().putHeader("content-type", "text/plain; charset=utf-8").end(names.toString());
                } else {
                    rc.response().putHeader("content-type", "application/json")
                            .end(((JsonObject) ar.result()).encode());
                }
            });
        });
        management.router().get("/q/traces/:name").handler(rc -> {
            TraceRecorder recorder = telemetry.telemetry().trace();
            if (recorder == null) {
                notFound(rc, OFF);
                return;
            }
            String authorization = rc.request().getHeader("authorization");
            String name = rc.pathParam("name");
            rc.vertx().executeBlocking(() -> {
                Access access = access(token, authorization);
                if (access != Access.GRANTED) {
                    return access;
                }
                Optional<FileChannel> file = TraceFiles.openClosed(recorder.dir(), name);
                if (file.isEmpty()) {
                    return Optional.empty();
                }
                try {
                    return new Open(file.get(), file.get().size());
                } catch (IOException | RuntimeException e) {
                    closeQuietly(file.get()); // not handed on: nothing else would close it
                    throw e;
                }
            }, false).onComplete(ar -> {
                if (ar.failed()) {
                    notFound(rc, "that trace file is gone (deleted beyond sidecar.trace.max-files)\n");
                } else if (ar.result() instanceof Access refused) {
                    refuse(rc, refused);
                } else if (ar.result() instanceof Open open) {
                    HttpServerResponse response = rc.response();
                    response.closeHandler(v -> closeQuietly(open.channel()));
                    response.putHeader("content-type", "application/jsonl")
                            .putHeader("content-disposition", "attachment; filename=\"" + name + "\"")
                            .putHeader("content-length", Long.toString(open.size()));
                    pump(rc, open.channel(), open.size());
                } else {
                    notFound(rc, "no closed trace file of that name (GET /q/traces lists them)\n");
                }
            });
        });
    }

    /** A file opened for sending, and its size then (a closed file does not change; it may only be deleted). */
    private record Open(FileChannel channel, long size) {
    }

    private static Access access(TokenFile token, String authorization) {
        if (token == null) {
            return Access.NOT_SERVED;
        }
        return token.acceptsBearer(authorization) ? Access.GRANTED : Access.UNAUTHORIZED;
    }

    private static void refuse(RoutingContext rc, Access access) {
        if (access == Access.NOT_SERVED) {
            notFound(rc, NO_TOKEN);
            return;
        }
        rc.response().setStatusCode(401).putHeader("www-authenticate", "Bearer realm=\"llm-sidecar traces\"")
                .putHeader("content-type", "text/plain; charset=utf-8").end(UNAUTHORIZED);
    }

    /**
     * Sends {@code remaining} more bytes of the channel: a chunk read off the event loop, written, and the next one once
     * the client has taken it (a slow reader holds one chunk, not the file). A file that ends early (cut on a failing
     * disk) resets the response: its length was promised.
     */
    private static void pump(RoutingContext rc, FileChannel channel, long remaining) {
        HttpServerResponse response = rc.response();
        if (remaining == 0) {
            closeQuietly(channel);
            response.end();
            return;
        }
        rc.vertx().executeBlocking(() -> {
            ByteBuffer chunk = ByteBuffer.allocate((int) Math.min(CHUNK, remaining));
            while (chunk.hasRemaining() && channel.read(chunk) > 0) {
                // fill the chunk
            }
            return chunk;
        }, false).onComplete(ar -> {
            if (response.closed()) {
                closeQuietly(channel);
                return;
            }
            if (ar.failed() || ar.result().position() == 0) {
                closeQuietly(channel);
                response.reset();
                return;
            }
            ByteBuffer chunk = ar.result();
            int n = chunk.position();
            response.write(Buffer.buffer().appendBytes(chunk.array(), 0, n));
            long left = remaining - n;
            if (response.writeQueueFull()) {
                response.drainHandler(v -> pump(rc, channel, left));
            } else {
                pump(rc, channel, left);
            }
        });
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing a read-only channel
        }
    }

    /** {"files":[{"name":..., "bytes":...}, ...]}, oldest first. */
    static JsonObject listing(List<Path> files) {
        JsonArray out = new JsonArray();
        for (Path p : files) {
            long bytes = TraceFiles.regularFileSize(p);
            if (bytes < 0) {
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
