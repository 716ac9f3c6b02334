package dev.llmsidecar.trace;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The trace files of one directory: the open ones, their rotation, the closed ones kept.
 *
 * <p><b>A file per window of arrivals.</b> A request belongs to the file that was current when it arrived (a
 * {@link Generation}), and its record goes there when it ends. A file's {@code timestamp}s count from its first
 * arrival, so they are never negative and the first arrival's is 0, although records are written in the order
 * requests end. When the current file reaches sidecar.trace.max-file-bytes, or its first record is
 * sidecar.trace.max-file-age old, a new one becomes current; the old one stays open until the requests that arrived
 * in it have ended (at most an hour; a record later than that is dropped as {@code late}, and at most
 * {@value #MAX_SEALED} old files wait at once), then it is closed: renamed from {@code NAME.jsonl.open} to
 * {@code NAME.jsonl}. So a closed file is complete, holds exactly the requests that arrived in its window, and windows
 * follow one another without overlap. Past sidecar.trace.max-files closed files, the oldest are deleted.
 *
 * <p>Names: {@code trace-<first arrival, UTC, yyyyMMdd'T'HHmmssSSS>Z-<sequence>.jsonl}, so name order is time order.
 * A file left open by a crash is closed when the recorder starts, cut after its last whole line.
 *
 * <p>Threads: {@link #enter} on the event loops; listing ({@link #closed}) on any thread; the rest on the recorder's.
 */
public final class TraceFiles {

    /** A closed file's name: nothing else is ever served (no path, no open file). */
    public static final Pattern CLOSED_NAME = Pattern.compile("trace-[0-9]{8}T[0-9]{9}Z-([0-9]{6})\\.jsonl");
    static final String OPEN_SUFFIX = ".open";
    /** Old files waiting for their last requests at once; past it the oldest is closed. */
    static final int MAX_SEALED = 4;
    /** How long an old file waits for its last requests. */
    static final long SEALED_GRACE_NANOS = 3600L * 1_000_000_000L;
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmssSSS")
            .withZone(ZoneOffset.UTC);

    /** The requests that arrived while one file was current. */
    static final class Generation {
        /** Requests of this window not recorded or dropped yet. */
        final AtomicInteger open = new AtomicInteger();
        /** The earliest arrival of the window (epoch ms), Long.MAX_VALUE before the first. */
        final AtomicLong firstArrival = new AtomicLong(Long.MAX_VALUE);
        /** Set once another file is current: no request enters this one any more. */
        volatile boolean sealed;
        // the recorder's thread only
        long sealedAtNanos;
        long openedAtNanos;
        boolean closed;
        long base;
        String name;
        Path openPath;
        OutputStream out;
        long bytes;

        /** The request ended and its record was written or dropped. */
        void leave() {
            open.decrementAndGet();
        }
    }

    private final Path dir;
    private final long maxFileBytes;
    private final long maxFileAgeNanos;
    private final int maxFiles;
    private final TraceStats stats;
    private final LongSupplier nanoClock;
    private volatile Generation current = new Generation();
    /** Old files waiting for their last requests, oldest first (the recorder's thread). */
    private final List<Generation> sealed = new ArrayList<>();
    private int nextSequence;
    private volatile long openBytes;
    private volatile long closedBytes;

    /** Creates the directory if needed and closes files a crash left open. */
    TraceFiles(Path dir, long maxFileBytes, long maxFileAgeNanos, int maxFiles, TraceStats stats,
            LongSupplier nanoClock) throws IOException {
        this.dir = dir;
        this.maxFileBytes = maxFileBytes;
        this.maxFileAgeNanos = maxFileAgeNanos;
        this.maxFiles = maxFiles;
        this.stats = stats;
        this.nanoClock = nanoClock;
        Files.createDirectories(dir);
        recover();
        int last = -1;
        for (Path p : closed(dir)) {
            Matcher m = CLOSED_NAME.matcher(p.getFileName().toString());
            if (m.matches()) {
                last = Math.max(last, Integer.parseInt(m.group(1)));
            }
        }
        nextSequence = (last + 1) % 1_000_000;
        enforceCount();
    }

    // ---------------------------------------------------------------------------------------------- event loops

    /** A request arrived at {@code arrivalMs}: its window (counted open until it {@link Generation#leave}s). */
    Generation enter(long arrivalMs) {
        while (true) {
            Generation g = current;
            g.open.incrementAndGet();
            if (!g.sealed) {
                long first = g.firstArrival.get();
                while (arrivalMs < first && !g.firstArrival.compareAndSet(first, arrivalMs)) {
                    first = g.firstArrival.get();
                }
                return g;
            }
            // it was sealed meanwhile: a newer one is current already
            g.open.decrementAndGet();
        }
    }

    // --------------------------------------------------------------------------------------- the recorder's thread

    /**
     * The base of {@code g}'s timestamps (its first arrival), opening its file first if needed; -1 when its file is
     * closed already (the record is late).
     */
    long base(Generation g) throws IOException {
        if (g.closed) {
            return -1;
        }
        if (g.out == null) {
            long first = g.firstArrival.get();
            g.base = first == Long.MAX_VALUE ? System.currentTimeMillis() : first;
            g.name = "trace-" + STAMP.format(Instant.ofEpochMilli(g.base)) + "Z-"
                    + String.format(java.util.Locale.ROOT, "%06d", nextSequence) + ".jsonl";
            nextSequence = (nextSequence + 1) % 1_000_000;
            g.openPath = dir.resolve(g.name + OPEN_SUFFIX);
            g.out = new BufferedOutputStream(Files.newOutputStream(g.openPath, StandardOpenOption.CREATE_NEW,
                    StandardOpenOption.WRITE), 16 * 1024);
            g.openedAtNanos = nanoClock.getAsLong();
        }
        return g.base;
    }

    /** Appends one whole line to {@code g}'s open file; makes a new file current when this one is full. */
    void append(Generation g, byte[] line, int length) throws IOException {
        try {
            g.out.write(line, 0, length);
        } catch (IOException e) {
            fail(g);
            throw e;
        }
        g.bytes += length;
        openBytes += length;
        if (g == current && g.bytes >= maxFileBytes) {
            rotate();
        }
    }

    /**
     * Between batches: writes what is buffered, starts a new file when the current one is too old, and closes the old
     * files whose requests have all ended (or that waited too long).
     */
    void idle() {
        long now = nanoClock.getAsLong();
        Generation g = current;
        if (g.out != null && now - g.openedAtNanos >= maxFileAgeNanos) {
            rotate();
        }
        for (Generation s : List.copyOf(sealed)) {
            if (s.open.get() <= 0 || now - s.sealedAtNanos >= SEALED_GRACE_NANOS) {
                close(s);
            }
        }
        flush(current);
        for (Generation s : sealed) {
            flush(s);
        }
    }

    /** Shutdown: every file is closed, whatever is still in flight. */
    void closeAll() {
        Generation g = current;
        g.sealed = true;
        for (Generation s : List.copyOf(sealed)) {
            close(s);
        }
        close(g);
    }

    private void rotate() {
        Generation old = current;
        current = new Generation();
        old.sealed = true; // after the new one is current: a request that still saw the old one moves on
        old.sealedAtNanos = nanoClock.getAsLong();
        sealed.add(old);
        while (sealed.size() > MAX_SEALED) {
            close(sealed.get(0));
        }
    }

    private void flush(Generation g) {
        if (g.out != null && !g.closed) {
            try {
                g.out.flush();
            } catch (IOException e) {
                fail(g);
            }
        }
    }

    /** Closes {@code g}'s file and renames it to its final name. */
    private void close(Generation g) {
        sealed.remove(g);
        if (g.closed) {
            return;
        }
        g.closed = true;
        if (g.out == null) {
            return;
        }
        openBytes -= g.bytes;
        try {
            g.out.close();
            Files.move(g.openPath, dir.resolve(g.name), StandardCopyOption.ATOMIC_MOVE);
            stats.fileClosed();
        } catch (IOException e) {
            // the disk failed under it: keep its whole lines
            cutAfterLastLine(g.openPath);
            moveQuietly(g.openPath, dir.resolve(g.name));
        }
        g.out = null;
        enforceCount();
    }

    /** A write failed: the file is closed with its whole lines, and a new one becomes current if it was. */
    private void fail(Generation g) {
        try {
            g.out.close();
        } catch (IOException ignored) {
            // closing what failed
        }
        g.out = null;
        g.closed = true;
        openBytes -= g.bytes;
        cutAfterLastLine(g.openPath);
        if (moveQuietly(g.openPath, dir.resolve(g.name))) {
            stats.fileClosed();
        }
        if (g == current) {
            current = new Generation();
            g.sealed = true;
        }
        sealed.remove(g);
        enforceCount();
    }

    /** Deletes the oldest closed files beyond the count; refreshes the closed files' size. */
    private void enforceCount() {
        List<Path> files = closed(dir);
        for (int i = 0; i < files.size() - maxFiles; i++) {
            try {
                Files.deleteIfExists(files.get(i));
                stats.fileDeleted();
            } catch (IOException e) {
                // not ours to fight over: counted next time round
            }
        }
        long total = 0;
        for (Path p : closed(dir)) {
            try {
                total += Files.size(p);
            } catch (IOException e) {
                // deleted meanwhile
            }
        }
        closedBytes = total;
    }

    /** Files a crash left open: cut after their last whole line and closed; empty ones deleted. */
    private void recover() throws IOException {
        try (DirectoryStream<Path> open = Files.newDirectoryStream(dir, "trace-*.jsonl" + OPEN_SUFFIX)) {
            for (Path p : open) {
                String name = p.getFileName().toString();
                Path target = dir.resolve(name.substring(0, name.length() - OPEN_SUFFIX.length()));
                cutAfterLastLine(p);
                if (Files.size(p) == 0 || !CLOSED_NAME.matcher(target.getFileName().toString()).matches()
                        || Files.exists(target)) {
                    Files.deleteIfExists(p);
                } else {
                    Files.move(p, target, StandardCopyOption.ATOMIC_MOVE);
                }
            }
        }
    }

    private static void cutAfterLastLine(Path p) {
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "rw")) {
            long end = f.length();
            byte[] buf = new byte[8192];
            long keep = 0;
            for (long at = end; at > 0 && keep == 0; ) {
                int n = (int) Math.min(buf.length, at);
                at -= n;
                f.seek(at);
                f.readFully(buf, 0, n);
                for (int i = n - 1; i >= 0; i--) {
                    if (buf[i] == '\n') {
                        keep = at + i + 1;
                        break;
                    }
                }
            }
            f.setLength(keep);
        } catch (IOException e) {
            // nothing more can be done for it
        }
    }

    private static boolean moveQuietly(Path from, Path to) {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            return false;
        }
    }

    long openBytes() {
        return openBytes;
    }

    long closedBytes() {
        return closedBytes;
    }

    // ------------------------------------------------------------------------------------------------ any thread

    /** The closed trace files of {@code dir}, oldest first (by name). */
    public static List<Path> closed(Path dir) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "trace-*.jsonl")) {
            for (Path p : files) {
                if (CLOSED_NAME.matcher(p.getFileName().toString()).matches() && Files.isRegularFile(p)) {
                    out.add(p);
                }
            }
        } catch (IOException e) {
            return List.of();
        }
        out.sort(null);
        return out;
    }

    /** The closed file named {@code name} in {@code dir}: only a closed file's exact name, never a path. */
    public static Optional<Path> closed(Path dir, String name) {
        if (name == null || !CLOSED_NAME.matcher(name).matches()) {
            return Optional.empty();
        }
        Path p = dir.resolve(name);
        return p.getParent().equals(dir) && Files.isRegularFile(p) ? Optional.of(p) : Optional.empty();
    }
}
