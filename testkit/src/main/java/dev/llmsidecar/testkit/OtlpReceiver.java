package dev.llmsidecar.testkit;

import com.google.protobuf.InvalidProtocolBufferException;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.trace.v1.Span;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real OTLP receiver for tests: OTLP/HTTP (protobuf) and OTLP/gRPC (HTTP/2 cleartext, length-prefixed
 * messages, grpc-status trailer) on one loopback port, decoding with the official opentelemetry-proto classes.
 * It can also stall (accept the request, never answer) to play a slow collector.
 */
public final class OtlpReceiver implements AutoCloseable {

    private static final String GRPC_METRICS = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";
    private static final String GRPC_TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

    private final Vertx vertx;
    private final HttpServer server;
    private final ConcurrentLinkedQueue<ExportMetricsServiceRequest> metricExports = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<ExportTraceServiceRequest> traceExports = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> transports = new ConcurrentLinkedQueue<>();
    private final AtomicInteger stalledRequests = new AtomicInteger();
    private volatile boolean stall;
    public final int port;

    public OtlpReceiver(Vertx vertx) {
        this.vertx = vertx;
        this.server = vertx.createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0)
                .setHttp2ClearTextEnabled(true));
        this.port = await(server.requestHandler(this::handle).listen()).actualPort();
    }

    public String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    /** From now on, accept requests and never answer them. */
    public void stall() {
        stall = true;
    }

    public int stalledRequests() {
        return stalledRequests.get();
    }

    private void handle(HttpServerRequest req) {
        req.body().onSuccess(body -> {
            if (stall) {
                stalledRequests.incrementAndGet();
                return;
            }
            String path = req.path();
            boolean grpc = req.getHeader("content-type") != null && req.getHeader("content-type").startsWith("application/grpc");
            try {
                if (grpc) {
                    transports.add("grpc " + req.version());
                    byte[] message = unframe(body);
                    if (path.equals(GRPC_METRICS)) {
                        metricExports.add(ExportMetricsServiceRequest.parseFrom(message));
                        grpcReply(req, ExportMetricsServiceResponse.getDefaultInstance().toByteArray());
                    } else if (path.equals(GRPC_TRACES)) {
                        traceExports.add(ExportTraceServiceRequest.parseFrom(message));
                        grpcReply(req, ExportTraceServiceResponse.getDefaultInstance().toByteArray());
                    } else {
                        req.response().setStatusCode(200).putHeader("content-type", "application/grpc")
                                .putTrailer("grpc-status", "12").end();
                    }
                    return;
                }
                transports.add("http " + req.version());
                if (path.equals("/v1/metrics")) {
                    metricExports.add(ExportMetricsServiceRequest.parseFrom(body.getBytes()));
                    protobufReply(req, ExportMetricsServiceResponse.getDefaultInstance().toByteArray());
                } else if (path.equals("/v1/traces")) {
                    traceExports.add(ExportTraceServiceRequest.parseFrom(body.getBytes()));
                    protobufReply(req, ExportTraceServiceResponse.getDefaultInstance().toByteArray());
                } else {
                    req.response().setStatusCode(404).end();
                }
            } catch (InvalidProtocolBufferException e) {
                req.response().setStatusCode(400).end(e.getMessage());
            }
        });
    }

    private static byte[] unframe(Buffer body) {
        // gRPC message: 1 byte compressed flag, 4 bytes big-endian length, then the protobuf bytes
        if (body.getByte(0) != 0) {
            throw new IllegalStateException("compressed gRPC message not expected");
        }
        int length = body.getInt(1);
        return body.getBytes(5, 5 + length);
    }

    private static void grpcReply(HttpServerRequest req, byte[] message) {
        Buffer framed = Buffer.buffer().appendByte((byte) 0).appendInt(message.length).appendBytes(message);
        req.response().setStatusCode(200).putHeader("content-type", "application/grpc")
                .putTrailer("grpc-status", "0").end(framed);
    }

    private static void protobufReply(HttpServerRequest req, byte[] message) {
        req.response().setStatusCode(200).putHeader("content-type", "application/x-protobuf").end(Buffer.buffer(message));
    }

    /** Transports seen, e.g. "grpc HTTP_2" or "http HTTP_1_1". */
    public List<String> transports() {
        return List.copyOf(transports);
    }

    public List<Span> spans() {
        List<Span> spans = new ArrayList<>();
        for (ExportTraceServiceRequest r : traceExports) {
            r.getResourceSpansList().forEach(rs -> rs.getScopeSpansList().forEach(ss -> spans.addAll(ss.getSpansList())));
        }
        return spans;
    }

    /** Every exported instance of the named metric, oldest first (cumulative exports: the last is the total). */
    public List<Metric> metrics(String name) {
        List<Metric> found = new ArrayList<>();
        for (ExportMetricsServiceRequest r : metricExports) {
            r.getResourceMetricsList().forEach(rm -> rm.getScopeMetricsList().forEach(sm -> sm.getMetricsList()
                    .forEach(m -> {
                        if (m.getName().equals(name)) {
                            found.add(m);
                        }
                    })));
        }
        return found;
    }

    public List<ExportMetricsServiceRequest> metricExports() {
        return List.copyOf(metricExports);
    }

    /** OTLP attributes as plain Java values (string arrays as lists of strings). */
    public static java.util.Map<String, Object> attributes(List<io.opentelemetry.proto.common.v1.KeyValue> kvs) {
        java.util.Map<String, Object> m = new java.util.HashMap<>();
        for (var kv : kvs) {
            var v = kv.getValue();
            m.put(kv.getKey(), switch (v.getValueCase()) {
                case STRING_VALUE -> v.getStringValue();
                case BOOL_VALUE -> v.getBoolValue();
                case INT_VALUE -> v.getIntValue();
                case DOUBLE_VALUE -> v.getDoubleValue();
                case ARRAY_VALUE -> v.getArrayValue().getValuesList().stream().map(a -> a.getStringValue()).toList();
                default -> v.toString();
            });
        }
        return m;
    }

    @Override
    public void close() {
        await(server.close());
    }

    private static <T> T await(Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(60, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
