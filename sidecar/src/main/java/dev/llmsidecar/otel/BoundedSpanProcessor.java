package dev.llmsidecar.otel;

import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jboss.logging.Logger;

/**
 * Batches ended spans to an exporter on one background thread, like the SDK's BatchSpanProcessor, but counts
 * every span it loses in {@link OtlpExportStats}. The SDK processor reports drops only to an OpenTelemetry
 * meter, which is exported through the same endpoint that is failing; an SRE needs them on the Prometheus side.
 * {@link #onEnd} never blocks: a full queue drops the span.
 */
final class BoundedSpanProcessor implements SpanProcessor {

    private static final Logger LOG = Logger.getLogger(BoundedSpanProcessor.class);

    private final SpanExporter exporter;
    private final ArrayBlockingQueue<ReadableSpan> queue;
    private final int maxBatch;
    private final long delayNanos;
    private final long timeoutNanos;
    private final OtlpExportStats stats;
    private final Thread worker;
    // held while a batch is collected and exported, so a flush sees every earlier span exported or dropped
    private final Object exportLock = new Object();
    // accepted and not yet exported or dropped: queued, or in the batch being built or exported
    private final java.util.concurrent.atomic.AtomicInteger pending = new java.util.concurrent.atomic.AtomicInteger();
    private volatile boolean stopping;
    private volatile long lastFailureLog;

    BoundedSpanProcessor(SpanExporter exporter, int maxQueue, int maxBatch, Duration scheduleDelay,
            Duration exportTimeout, OtlpExportStats stats) {
        this.exporter = exporter;
        this.queue = new ArrayBlockingQueue<>(Math.max(1, maxQueue));
        this.maxBatch = Math.max(1, Math.min(maxBatch, maxQueue));
        this.delayNanos = scheduleDelay.toNanos();
        this.timeoutNanos = exportTimeout.toNanos();
        this.stats = stats;
        stats.queueGauges(pending::get, maxQueue);
        this.worker = new Thread(this::run, "llm-sidecar-otlp-spans");
        worker.setDaemon(true);
        worker.start();
    }

    @Override
    public void onStart(Context parentContext, ReadWriteSpan span) {
    }

    @Override
    public boolean isStartRequired() {
        return false;
    }

    @Override
    public void onEnd(ReadableSpan span) {
        if (!span.getSpanContext().isSampled() || stopping) {
            return;
        }
        pending.incrementAndGet();
        if (!queue.offer(span)) {
            pending.decrementAndGet();
            stats.spansDroppedQueueFull();
        }
    }

    @Override
    public boolean isEndRequired() {
        return true;
    }

    private void run() {
        List<SpanData> batch = new ArrayList<>(maxBatch);
        while (!stopping) {
            try {
                ReadableSpan first = queue.poll(delayNanos, TimeUnit.NANOSECONDS);
                if (first == null) {
                    continue;
                }
                synchronized (exportLock) {
                    batch.add(first.toSpanData());
                    long deadline = System.nanoTime() + delayNanos;
                    while (batch.size() < maxBatch) {
                        long wait = deadline - System.nanoTime();
                        ReadableSpan span = wait > 0 ? queue.poll(wait, TimeUnit.NANOSECONDS) : queue.poll();
                        if (span == null) {
                            break;
                        }
                        batch.add(span.toSpanData());
                    }
                    export(batch);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
    }

    private void export(List<SpanData> batch) {
        if (batch.isEmpty()) {
            return;
        }
        int n = batch.size();
        boolean ok;
        try {
            CompletableResultCode result = exporter.export(List.copyOf(batch));
            ok = result.join(timeoutNanos, TimeUnit.NANOSECONDS).isSuccess();
        } catch (RuntimeException e) {
            ok = false;
        }
        batch.clear();
        pending.addAndGet(-n);
        if (ok) {
            stats.spansExported(n);
        } else {
            stats.spansDroppedExportFailed(n);
            long now = System.nanoTime();
            if (now - lastFailureLog > TimeUnit.MINUTES.toNanos(1)) {
                // at most one line a minute: a down collector must not flood the logs
                lastFailureLog = now;
                LOG.warnf("OTLP span export failed or timed out; %d spans dropped (counted in "
                        + "llm_sidecar_otlp_spans_dropped_total)", n);
            }
        }
    }

    @Override
    public CompletableResultCode forceFlush() {
        synchronized (exportLock) {
            List<SpanData> batch = new ArrayList<>();
            ReadableSpan span;
            while ((span = queue.poll()) != null) {
                batch.add(span.toSpanData());
                if (batch.size() >= maxBatch) {
                    export(batch);
                }
            }
            export(batch);
        }
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
        stopping = true;
        worker.interrupt();
        try {
            worker.join(TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        forceFlush();
        return exporter.shutdown();
    }
}
