package dev.llmsidecar.trace;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NotDirectoryException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
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
 * <p><b>Every record counted once.</b> A record is counted written when the bytes of its line reached the file (a
 * flush of the recorder's own buffer succeeded), and dropped ({@code write_failed}) when they did not: on a failed
 * write the file is cut back to the lines counted, so its lines and the drops add up to the requests. A file with no
 * whole line is deleted, never published. The records of requests that arrived in a file that failed are dropped as
 * {@code write_failed}, not {@code late}.
 *
 * <p><b>Failing open.</b> Nothing here stops the proxy: the directory is made ready on the recorder's thread, and a
 * failure (it cannot be created, a full or read-only disk, permissions) moves the files to {@link State#FAILING}:
 * records are dropped and counted, and the next attempt waits 1 s, then twice as long each time, up to 60 s.
 *
 * <p><b>No links.</b> Files are created, opened, listed, recovered and served without following a symbolic link at the
 * last step ({@link LinkOption#NOFOLLOW_LINKS}), so a link placed in the directory is never listed, served, recovered
 * or truncated. The directories the recorder creates are 0700, its files 0600.
 *
 * <p>Names: {@code trace-<first arrival, UTC, yyyyMMdd'T'HHmmssSSS>Z-<sequence>.jsonl}, so name order is time order.
 * A file left open by a crash is closed when the recorder starts, cut after its last whole line.
 *
 * <p>Threads: {@link #enter} on the event loops; listing ({@link #closed}) and {@link #state} on any thread; the rest
 * on the recorder's.
 */
public final class TraceFiles {

    /** A closed file's name: nothing else is ever served (no path, no open file). */
    public static final Pattern CLOSED_NAME = Pattern.compile("trace-[0-9]{8}T[0-9]{9}Z-([0-9]{6})\\.jsonl");
    static final String OPEN_SUFFIX = ".open";
    /** Old files waiting for their last requests at once; past it the oldest is closed. */
    static final int MAX_SEALED = 4;
    /** How long an old file waits for its last requests. */
    static final long SEALED_GRACE_NANOS = 3600L * 1_000_000_000L;
    /** The first wait after a failure; it doubles with each failure in a row, up to {@link #MAX_RETRY_NANOS}. */
    static final long FIRST_RETRY_NANOS = 1_000_000_000L;
    static final long MAX_RETRY_NANOS = 60_000_000_000L;
    /** Lines are gathered this far before they are written (a longer line is written at once). */
    static final int BUFFER_BYTES = 16 * 1024;
    static final Set<PosixFilePermission> DIR_MODE = PosixFilePermissions.fromString("rwx------");
    static final Set<PosixFilePermission> FILE_MODE = PosixFilePermissions.fromString("rw-------");
    private static final Set<OpenOption> CREATE = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS);
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmssSSS")
            .withZone(ZoneOffset.UTC);

    /** Whether records reach the files. */
    public enum State {
        /** The directory is not ready yet (the recorder's thread prepares it). */
        STARTING,
        /** The last attempt to prepare the directory or to write succeeded. */
        WRITING,
        /** The last attempt failed: records are dropped until the next one, after a wait. */
        FAILING
    }

    /** Why writing failed ({@code llm_sidecar_trace_write_failures_total{reason}}). */
    public enum Failure {
        /** No space left on the device (or no inode). */
        NO_SPACE,
        /** The file system is read-only. */
        READ_ONLY,
        /** The process may not create or write there. */
        PERMISSION,
        /** A file, or something else, stands where a directory must be. */
        NOT_A_DIRECTORY,
        /** Any other I/O error. */
        IO_ERROR,
        /** The recorder's settings were refused at start (no secret, a short one): it never ran. */
        CONFIGURATION;

        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Failure of(IOException e) {
            String message = String.valueOf(e.getMessage()) + " "
                    + (e instanceof FileSystemException f ? String.valueOf(f.getReason()) : "");
            if (message.contains("No space left") || message.contains("Disk quota exceeded")) {
                return NO_SPACE;
            }
            if (message.contains("Read-only file system")) {
                return READ_ONLY;
            }
            if (e instanceof AccessDeniedException || message.contains("Permission denied")
                    || message.contains("Operation not permitted")) {
                return PERMISSION;
            }
            if (e instanceof NotDirectoryException || e instanceof FileAlreadyExistsException
                    || message.contains("Not a directory")) {
                return NOT_A_DIRECTORY;
            }
            return IO_ERROR;
        }
    }

    /** Where a window's file is. */
    enum FileState {
        /** No record yet, so no file. */
        UNOPENED,
        /** {@code NAME.jsonl.open}, taking records. */
        OPEN,
        /** Published under its final name (or deleted, having no line): a record for it now is late. */
        CLOSED,
        /** A write failed: published with the lines counted; a record for it now is dropped as write_failed. */
        FAILED
    }

    /** What became of a record handed to {@link #prepare}. */
    enum Ready {
        /** Its file is open: {@link #append} it. */
        READY,
        /** Its file was closed before it ended. */
        LATE,
        /** Its file failed, or the directory cannot be written now. */
        FAILED
    }

    /** The requests that arrived while one file was current. */
    static final class Generation {
        /** Requests of this window not recorded or dropped yet. */
        final AtomicInteger open = new AtomicInteger();
        /** The earliest arrival of the window (epoch ms), Long.MAX_VALUE before the first. */
        final AtomicLong firstArrival = new AtomicLong(Long.MAX_VALUE);
        /** Set once another file is current: no request enters this one any more. */
        volatile boolean sealed;
        // the recorder's thread only
        FileState file = FileState.UNOPENED;
        long sealedAtNanos;
        long openedAtNanos;
        long base;
        String name;
        Path openPath;
        FileChannel channel;
        ByteBuffer buffer;
        /** Lines in {@link #buffer}, not counted yet. */
        int bufferedLines;
        /** Bytes of the lines handed to the file, buffered or not. */
        long bytes;
        /** Bytes of whole lines known to be in the file (counted as written). */
        long durableBytes;

        /** The request ended and its record was written or dropped. */
        void leave() {
            open.decrementAndGet();
        }
    }

    /**
     * Retention beyond this directory's file count: {@code shared} (null: none) holds every pod's directory; at most
     * {@code maxTotalBytes} (0: no cap) of closed files across them; a directory there that is not this one, with no
     * open file and nothing newer than {@code reclaimAfterMillis}, is reclaimed.
     */
    record Retention(Path shared, long maxTotalBytes, long reclaimAfterMillis) {
    }

    private final Path dir;
    private final Retention retention;
    private final long maxFileBytes;
    private final long maxFileAgeNanos;
    private final int maxFiles;
    private final TraceStats stats;
    private final LongSupplier nanoClock;
    private volatile Generation current = new Generation();
    /** Old files waiting for their last requests, oldest first (the recorder's thread). */
    private final List<Generation> sealed = new ArrayList<>();
    private volatile State state = State.STARTING;
    private boolean prepared;
    private long retryAtNanos;
    private long retryWaitNanos = FIRST_RETRY_NANOS;
    private int nextSequence;
    private volatile long openBytes;
    private volatile long closedBytes;

    /** No I/O here: the recorder's thread prepares the directory ({@link #idle}, {@link #prepare}). */
    TraceFiles(Path dir, long maxFileBytes, long maxFileAgeNanos, int maxFiles, Retention retention, TraceStats stats,
            LongSupplier nanoClock) {
        this.dir = dir;
        this.retention = retention;
        this.maxFileBytes = maxFileBytes;
        this.maxFileAgeNanos = maxFileAgeNanos;
        this.maxFiles = maxFiles;
        this.stats = stats;
        this.nanoClock = nanoClock;
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

    // ------------------------------------------------------------------------------------------------ any thread

    /** Whether records reach the files now. */
    public State state() {
        return state;
    }

    // --------------------------------------------------------------------------------------- the recorder's thread

    /**
     * Makes {@code g}'s file ready for a record: the directory first (once, or again after the wait that followed a
     * failure), then the file. {@link Generation#base} is then the base of its timestamps.
     */
    Ready prepare(Generation g) {
        if (g.file == FileState.CLOSED) {
            return Ready.LATE;
        }
        if (g.file == FileState.FAILED) {
            return Ready.FAILED;
        }
        if (g.file == FileState.OPEN) {
            return Ready.READY;
        }
        if (state == State.FAILING && nanoClock.getAsLong() - retryAtNanos < 0) {
            return Ready.FAILED;
        }
        if (!prepared && !prepareDirectory()) {
            return Ready.FAILED;
        }
        long first = g.firstArrival.get();
        long base = first == Long.MAX_VALUE ? System.currentTimeMillis() : first;
        String name = "trace-" + STAMP.format(Instant.ofEpochMilli(base)) + "Z-"
                + String.format(Locale.ROOT, "%06d", nextSequence) + ".jsonl";
        Path openPath = dir.resolve(name + OPEN_SUFFIX);
        try {
            g.channel = FileChannel.open(openPath, CREATE, PosixFilePermissions.asFileAttribute(FILE_MODE));
        } catch (IOException | UnsupportedOperationException e) {
            if (e instanceof java.nio.file.NoSuchFileException) {
                prepared = false; // the directory went away (deleted under us): made again at the next attempt
            }
            failed(e instanceof IOException io ? Failure.of(io) : Failure.IO_ERROR);
            return Ready.FAILED;
        }
        nextSequence = (nextSequence + 1) % 1_000_000;
        g.base = base;
        g.name = name;
        g.openPath = openPath;
        g.buffer = ByteBuffer.allocate(BUFFER_BYTES);
        g.openedAtNanos = nanoClock.getAsLong();
        g.file = FileState.OPEN;
        return Ready.READY;
    }

    /**
     * Appends one whole line to {@code g}'s open file (after {@link #prepare} said READY); counted written once it
     * reached the file, or dropped if that failed. Makes a new file current when this one is full.
     */
    void append(Generation g, byte[] line, int length) {
        if (g.buffer.remaining() < length && !flush(g)) {
            stats.dropped(TraceStats.Drop.WRITE_FAILED, 1);
            return;
        }
        g.bytes += length;
        openBytes += length;
        if (length > g.buffer.capacity()) {
            try {
                writeFully(g.channel, ByteBuffer.wrap(line, 0, length));
                g.durableBytes += length;
                written(1);
            } catch (IOException e) {
                fail(g, Failure.of(e), 1);
                return;
            }
        } else {
            g.buffer.put(line, 0, length);
            g.bufferedLines++;
        }
        if (g == current && g.bytes >= maxFileBytes) {
            rotate();
        }
    }

    /**
     * Between batches: prepares the directory when it is due, writes what is buffered, starts a new file when the
     * current one is too old, and closes the old files whose requests have all ended (or that waited too long).
     */
    void idle() {
        long now = nanoClock.getAsLong();
        if (!prepared && (state == State.STARTING || now - retryAtNanos >= 0)) {
            prepareDirectory();
        }
        Generation g = current;
        if (g.file == FileState.OPEN && now - g.openedAtNanos >= maxFileAgeNanos) {
            rotate();
        }
        for (Generation s : List.copyOf(sealed)) {
            if (s.open.get() <= 0 || now - s.sealedAtNanos >= SEALED_GRACE_NANOS) {
                close(s);
            }
        }
        flush(current);
        for (Generation s : List.copyOf(sealed)) {
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

    /**
     * Creates the directory (0700) if needed, closes files a crash left open, finds the next sequence number and
     * applies the count limit; false, the failure noted, when the directory cannot be used.
     */
    private boolean prepareDirectory() {
        try {
            if (!Files.isDirectory(dir)) {
                Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(DIR_MODE));
            }
            recover();
            int last = -1;
            for (Path p : closed(dir)) {
                Matcher m = CLOSED_NAME.matcher(p.getFileName().toString());
                if (m.matches()) {
                    last = Math.max(last, Integer.parseInt(m.group(1)));
                }
            }
            nextSequence = (last + 1) % 1_000_000;
            prepared = true;
            state = State.WRITING;
            retryWaitNanos = FIRST_RETRY_NANOS;
            enforceCount();
            return true;
        } catch (IOException e) {
            failed(Failure.of(e));
            return false;
        } catch (UnsupportedOperationException e) {
            failed(Failure.IO_ERROR); // a file system without POSIX permissions
            return false;
        }
    }

    /** An attempt failed: counted, and the next one waits (1 s, doubling up to 60 s). */
    private void failed(Failure why) {
        stats.writeFailed(why);
        state = State.FAILING;
        retryAtNanos = nanoClock.getAsLong() + retryWaitNanos;
        retryWaitNanos = Math.min(MAX_RETRY_NANOS, retryWaitNanos * 2);
    }

    /** Bytes reached a file: writing again. */
    private void written(int lines) {
        stats.recorded(lines);
        if (state != State.WRITING) {
            state = State.WRITING;
            retryWaitNanos = FIRST_RETRY_NANOS;
        }
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

    /** Writes {@code g}'s buffered lines; false (the file failed, its buffered lines dropped) when that failed. */
    private boolean flush(Generation g) {
        if (g.file != FileState.OPEN) {
            return g.file == FileState.UNOPENED;
        }
        if (g.buffer.position() == 0) {
            return true;
        }
        int lines = g.bufferedLines;
        g.buffer.flip();
        try {
            int n = g.buffer.remaining();
            writeFully(g.channel, g.buffer);
            g.buffer.clear();
            g.bufferedLines = 0;
            g.durableBytes += n;
            written(lines);
            return true;
        } catch (IOException e) {
            fail(g, Failure.of(e), 0);
            return false;
        }
    }

    private static void writeFully(FileChannel channel, ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }

    /** Closes {@code g}'s file and publishes it under its final name (deletes it when it holds no line). */
    private void close(Generation g) {
        sealed.remove(g);
        if (g.file == FileState.UNOPENED) {
            g.file = FileState.CLOSED;
            return;
        }
        if (g.file != FileState.OPEN || !flush(g)) {
            return;
        }
        g.file = FileState.CLOSED;
        openBytes -= g.bytes;
        try {
            g.channel.close();
            publish(g);
        } catch (IOException e) {
            failed(Failure.of(e));
            deleteQuietly(g.openPath);
        }
        g.channel = null;
        g.buffer = null;
        enforceCount();
    }

    /**
     * A write to {@code g}'s file failed: its buffered lines and {@code more} are dropped, the file is cut back to the
     * lines counted and published (deleted if it has none), and a new file becomes current if it was.
     */
    private void fail(Generation g, Failure why, int more) {
        stats.dropped(TraceStats.Drop.WRITE_FAILED, g.bufferedLines + more);
        g.bufferedLines = 0;
        g.file = FileState.FAILED;
        openBytes -= g.bytes;
        try {
            g.channel.truncate(g.durableBytes);
        } catch (IOException e) {
            // the lines past the count may stay; nothing more can be done for them
        }
        try {
            g.channel.close();
        } catch (IOException e) {
            // closing what failed
        }
        g.channel = null;
        g.buffer = null;
        try {
            publish(g);
        } catch (IOException e) {
            deleteQuietly(g.openPath);
        }
        if (g == current) {
            current = new Generation();
            g.sealed = true;
        }
        sealed.remove(g);
        failed(why);
        enforceCount();
    }

    private void publish(Generation g) throws IOException {
        if (g.durableBytes == 0) {
            Files.deleteIfExists(g.openPath); // no line: nothing to publish
            return;
        }
        Files.move(g.openPath, dir.resolve(g.name), StandardCopyOption.ATOMIC_MOVE);
        stats.fileClosed();
    }

    private static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            // nothing more can be done for it
        }
    }

    /**
     * Deletes the oldest closed files beyond the count, then, across the shared directory when there is one, the
     * oldest beyond the total bytes, and reclaims gone pods' directories; refreshes the closed files' size.
     */
    private void enforceCount() {
        List<Path> files = closed(dir);
        for (int i = 0; i < files.size() - maxFiles; i++) {
            delete(files.get(i));
        }
        if (retention.shared() != null) {
            reclaimGoneDirectories();
        }
        if (retention.maxTotalBytes() > 0) {
            enforceTotal();
        }
        long total = 0;
        for (Path p : closed(dir)) {
            total += regularFileSize(p);
        }
        closedBytes = total;
    }

    private void delete(Path p) {
        try {
            Files.deleteIfExists(p);
            stats.fileDeleted();
        } catch (IOException e) {
            // not ours to fight over: counted next time round
        }
    }

    /** The directories retention covers: this one, and every other directory of the shared one (never a link). */
    private List<Path> directories() {
        List<Path> out = new ArrayList<>();
        out.add(dir);
        if (retention.shared() == null) {
            return out;
        }
        try (DirectoryStream<Path> all = Files.newDirectoryStream(retention.shared())) {
            for (Path p : all) {
                if (!p.equals(dir) && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    out.add(p);
                }
            }
        } catch (IOException e) {
            // the shared directory cannot be listed: this one only
        }
        return out;
    }

    /** The oldest closed files across the directories (name order is time order) until their bytes fit the cap. */
    private void enforceTotal() {
        List<Path> all = new ArrayList<>();
        long total = 0;
        for (Path d : directories()) {
            for (Path p : closed(d)) {
                long size = regularFileSize(p);
                if (size >= 0) {
                    all.add(p);
                    total += size;
                }
            }
        }
        all.sort(java.util.Comparator.comparing(p -> p.getFileName().toString()));
        for (int i = 0; i < all.size() && total > retention.maxTotalBytes(); i++) {
            total -= Math.max(0, regularFileSize(all.get(i)));
            delete(all.get(i));
        }
    }

    /**
     * Another directory of the shared one with no open file, whose newest entry is older than reclaim-after, belongs
     * to a pod that is gone: its trace files are deleted, then the directory if nothing else is in it. Counted.
     */
    private void reclaimGoneDirectories() {
        long now = System.currentTimeMillis();
        for (Path d : directories()) {
            if (d.equals(dir)) {
                continue;
            }
            List<Path> traceFiles = new ArrayList<>();
            boolean keep;
            try {
                // a pod that just made its directory has written nothing yet: the directory's own time counts too
                keep = now - Files.readAttributes(d, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
                        .lastModifiedTime().toMillis() < retention.reclaimAfterMillis();
            } catch (IOException e) {
                continue;
            }
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(d)) {
                for (Path p : entries) {
                    String name = p.getFileName().toString();
                    BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class,
                            LinkOption.NOFOLLOW_LINKS);
                    if (keep || name.endsWith(OPEN_SUFFIX) || now - a.lastModifiedTime().toMillis()
                            < retention.reclaimAfterMillis()) {
                        keep = true; // a pod still writes here, or did lately
                        break;
                    }
                    if (CLOSED_NAME.matcher(name).matches() && a.isRegularFile()) {
                        traceFiles.add(p);
                    }
                }
            } catch (IOException e) {
                continue;
            }
            if (keep) {
                continue;
            }
            for (Path p : traceFiles) {
                delete(p);
            }
            try {
                Files.delete(d); // fails when something else is in it: then it is not only ours
                stats.directoryReclaimed();
            } catch (IOException e) {
                // not empty, or gone meanwhile
            }
        }
    }

    /** Files a crash left open: cut after their last whole line and closed; empty ones deleted; links left alone. */
    private void recover() throws IOException {
        try (DirectoryStream<Path> open = Files.newDirectoryStream(dir, "trace-*.jsonl" + OPEN_SUFFIX)) {
            for (Path p : open) {
                if (regularFileSize(p) < 0) {
                    continue; // a link or anything but a file: never followed, truncated or moved
                }
                String name = p.getFileName().toString();
                Path target = dir.resolve(name.substring(0, name.length() - OPEN_SUFFIX.length()));
                long kept = cutAfterLastLine(p);
                if (kept <= 0 || !CLOSED_NAME.matcher(target.getFileName().toString()).matches()
                        || Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                    Files.deleteIfExists(p);
                } else {
                    Files.move(p, target, StandardCopyOption.ATOMIC_MOVE);
                }
            }
        }
    }

    /** Cuts the file after its last whole line; its length then, or -1 when it could not be opened as a file. */
    private static long cutAfterLastLine(Path p) {
        try (FileChannel f = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            long end = f.size();
            ByteBuffer buf = ByteBuffer.allocate(8192);
            long keep = 0;
            for (long at = end; at > 0 && keep == 0; ) {
                int n = (int) Math.min(buf.capacity(), at);
                at -= n;
                buf.clear().limit(n);
                while (buf.hasRemaining() && f.read(buf, at + buf.position()) > 0) {
                    // read the whole slice
                }
                for (int i = buf.position() - 1; i >= 0; i--) {
                    if (buf.get(i) == '\n') {
                        keep = at + i + 1;
                        break;
                    }
                }
            }
            f.truncate(keep);
            return keep;
        } catch (IOException e) {
            return -1;
        }
    }

    /** The size of {@code p} when it is a regular file itself (not a link to one), else -1. */
    public static long regularFileSize(Path p) {
        try {
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return a.isRegularFile() ? a.size() : -1;
        } catch (IOException e) {
            return -1;
        }
    }

    long openBytes() {
        return openBytes;
    }

    long closedBytes() {
        return closedBytes;
    }

    // ------------------------------------------------------------------------------------------------ any thread

    /** The closed trace files of {@code dir}, oldest first (by name): regular files only, never a link. */
    public static List<Path> closed(Path dir) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "trace-*.jsonl")) {
            for (Path p : files) {
                if (CLOSED_NAME.matcher(p.getFileName().toString()).matches() && regularFileSize(p) >= 0) {
                    out.add(p);
                }
            }
        } catch (IOException e) {
            return List.of();
        }
        out.sort(null);
        return out;
    }

    /**
     * The closed file named {@code name} in {@code dir}, opened for reading without following a link: only a closed
     * file's exact name, never a path, never a link (the open fails on one, so a link swapped in after a check is
     * not followed either), never anything but a regular file. The caller closes the channel.
     */
    public static Optional<FileChannel> openClosed(Path dir, String name) {
        // checked first as a regular file: a FIFO would block the open
        return closed(dir, name).flatMap(p -> {
            try {
                return Optional.of(FileChannel.open(p, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
            } catch (IOException e) {
                return Optional.empty();
            }
        });
    }

    /** The closed file named {@code name} in {@code dir}: only a closed file's exact name, never a path or a link. */
    public static Optional<Path> closed(Path dir, String name) {
        if (name == null || !CLOSED_NAME.matcher(name).matches()) {
            return Optional.empty();
        }
        Path p = dir.resolve(name);
        return p.getParent().equals(dir) && regularFileSize(p) >= 0 ? Optional.of(p) : Optional.empty();
    }
}
