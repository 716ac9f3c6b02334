package dev.llmsidecar.trace;

import static dev.llmsidecar.metrics.Label.REASON;

import dev.llmsidecar.metrics.Contract;
import dev.llmsidecar.metrics.LabelValues;
import dev.llmsidecar.metrics.Recorder.Bound;
import dev.llmsidecar.metrics.Recorders;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The trace recorder's own series (docs/metrics.md, "Trace recorder"), bound once, every counter at 0 from the
 * start. Recorded from the event loops (drops) and the recorder's thread.
 */
public final class TraceStats {

    /** Why a request got no record. */
    public enum Drop {
        /** The recorder's queue (requests or body bytes) was full. */
        QUEUE_FULL,
        /** Writing the file failed (disk full, I/O error). */
        WRITE_FAILED,
        /** Its file had been closed already: it arrived in a file closed while it was still open (over an hour). */
        LATE,
        /** It ended after the recorder stopped (shutdown). */
        SHUTDOWN;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Bound records;
    private final Map<Drop, Bound> dropped = new EnumMap<>(Drop.class);
    private final Bound filesClosed;
    private final Bound filesDeleted;
    private final Bound promptBytes;
    private final Bound promptTokens;

    /**
     * @param openBytes bytes of the files still open, read at collection
     * @param closedBytes bytes of the closed files kept, read at collection
     */
    public TraceStats(Recorders recorders, LongSupplier openBytes, LongSupplier closedBytes) {
        records = recorders.bound(Contract.TRACE_RECORDS);
        for (Drop d : Drop.values()) {
            dropped.put(d, recorders.bound(Contract.TRACE_RECORDS_DROPPED, LabelValues.of(REASON, d.label())));
        }
        filesClosed = recorders.bound(Contract.TRACE_FILES_CLOSED);
        filesDeleted = recorders.bound(Contract.TRACE_FILES_DELETED);
        promptBytes = recorders.bound(Contract.TRACE_PROMPT_BYTES);
        promptTokens = recorders.bound(Contract.TRACE_PROMPT_TOKENS);
        for (Bound counter : new Bound[] {records, filesClosed, filesDeleted, promptBytes, promptTokens}) {
            counter.record(0);
        }
        dropped.values().forEach(b -> b.record(0));
        recorders.observe(Contract.TRACE_OPEN_FILE_BYTES, openBytes::getAsLong);
        recorders.observe(Contract.TRACE_CLOSED_FILE_BYTES, closedBytes::getAsLong);
    }

    void recorded() {
        records.record(1);
    }

    void dropped(Drop reason) {
        dropped.get(reason).record(1);
    }

    void fileClosed() {
        filesClosed.record(1);
    }

    void fileDeleted() {
        filesDeleted.record(1);
    }

    /** A recorded prompt of {@code bytes} canonical bytes that the engine counted as {@code tokens} tokens. */
    void prompt(long bytes, long tokens) {
        promptBytes.record(bytes);
        promptTokens.record(tokens);
    }
}
