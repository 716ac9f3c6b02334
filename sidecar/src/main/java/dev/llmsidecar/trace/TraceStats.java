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
        /**
         * Its line did not reach the file: the write failed (disk full, I/O error), its file had failed before, or the
         * directory could not be written then.
         */
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
    private final Map<TraceFiles.Failure, Bound> writeFailures = new EnumMap<>(TraceFiles.Failure.class);
    private final Bound filesClosed;
    private final Bound filesDeleted;
    private final Bound directoriesReclaimed;
    private final Bound promptBytes;
    private final Bound promptTokens;

    /**
     * @param openBytes bytes of the files still open, read at collection
     * @param closedBytes bytes of the closed files kept, read at collection
     * @param writing 1 while records reach the files, else 0, read at collection
     */
    public TraceStats(Recorders recorders, LongSupplier openBytes, LongSupplier closedBytes, LongSupplier writing) {
        records = recorders.bound(Contract.TRACE_RECORDS);
        for (Drop d : Drop.values()) {
            dropped.put(d, recorders.bound(Contract.TRACE_RECORDS_DROPPED, LabelValues.of(REASON, d.label())));
        }
        for (TraceFiles.Failure f : TraceFiles.Failure.values()) {
            writeFailures.put(f, recorders.bound(Contract.TRACE_WRITE_FAILURES, LabelValues.of(REASON, f.label())));
        }
        filesClosed = recorders.bound(Contract.TRACE_FILES_CLOSED);
        filesDeleted = recorders.bound(Contract.TRACE_FILES_DELETED);
        directoriesReclaimed = recorders.bound(Contract.TRACE_DIRECTORIES_RECLAIMED);
        promptBytes = recorders.bound(Contract.TRACE_PROMPT_BYTES);
        promptTokens = recorders.bound(Contract.TRACE_PROMPT_TOKENS);
        for (Bound counter : new Bound[] {records, filesClosed, filesDeleted, directoriesReclaimed, promptBytes,
                promptTokens}) {
            counter.record(0);
        }
        dropped.values().forEach(b -> b.record(0));
        writeFailures.values().forEach(b -> b.record(0));
        recorders.observe(Contract.TRACE_WRITING, writing::getAsLong);
        recorders.observe(Contract.TRACE_OPEN_FILE_BYTES, openBytes::getAsLong);
        recorders.observe(Contract.TRACE_CLOSED_FILE_BYTES, closedBytes::getAsLong);
    }

    /** {@code lines} records reached their file. */
    void recorded(int lines) {
        if (lines > 0) {
            records.record(lines);
        }
    }

    void dropped(Drop reason) {
        dropped(reason, 1);
    }

    /** {@code n} requests got no record, for {@code reason}. */
    void dropped(Drop reason, int n) {
        if (n > 0) {
            dropped.get(reason).record(n);
        }
    }

    /** An attempt to prepare the directory, open a file or write failed. */
    void writeFailed(TraceFiles.Failure why) {
        writeFailures.get(why).record(1);
    }

    void fileClosed() {
        filesClosed.record(1);
    }

    void fileDeleted() {
        filesDeleted.record(1);
    }

    /** A gone pod's trace directory was reclaimed (sidecar.trace.shared-dir). */
    void directoryReclaimed() {
        directoriesReclaimed.record(1);
    }

    /** A recorded prompt of {@code bytes} canonical bytes that the engine counted as {@code tokens} tokens. */
    void prompt(long bytes, long tokens) {
        promptBytes.record(bytes);
        promptTokens.record(tokens);
    }
}
