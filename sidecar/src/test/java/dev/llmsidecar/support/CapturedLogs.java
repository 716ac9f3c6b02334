package dev.llmsidecar.support;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Every JUL record (Vert.x, Netty and the sidecar log through it in plain tests) while open, at every level. */
public final class CapturedLogs implements AutoCloseable {

    /** One record: level, logger, message with its parameters and throwable. */
    public record Entry(Level level, String logger, String text) {
        @Override
        public String toString() {
            return level + " " + logger + ": " + text;
        }
    }

    private final List<Entry> entries = new CopyOnWriteArrayList<>();
    private final Logger root = Logger.getLogger("");
    private final Level rootLevel = root.getLevel();
    private final Logger ours = Logger.getLogger("dev.llmsidecar");
    private final Level oursLevel = ours.getLevel();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            StringBuilder sb = new StringBuilder(String.valueOf(r.getMessage()));
            if (r.getParameters() != null) {
                for (Object p : r.getParameters()) {
                    sb.append(' ').append(p);
                }
            }
            if (r.getThrown() != null) {
                sb.append(' ').append(r.getThrown());
            }
            entries.add(new Entry(r.getLevel(), r.getLoggerName(), sb.toString()));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    /** @param rootLevel the level every logger logs at meanwhile (ours: everything) */
    public CapturedLogs(Level rootLevel) {
        capture.setLevel(Level.ALL);
        root.addHandler(capture);
        ours.setLevel(Level.ALL);
        root.setLevel(rootLevel);
    }

    public List<Entry> entries() {
        return entries;
    }

    /** Records at {@code level} or above. */
    public List<Entry> atLeast(Level level) {
        return entries.stream().filter(e -> e.level().intValue() >= level.intValue()).toList();
    }

    @Override
    public void close() {
        root.removeHandler(capture);
        root.setLevel(rootLevel);
        ours.setLevel(oursLevel);
    }
}
