package dev.llmsidecar.proxy;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The idle timeouts of one event loop's exchanges, checked by one periodic task instead of a timer per exchange: an
 * open stream then costs two list pointers, not a scheduled task. The check runs every quarter of the timeout (at
 * most every second), so a stall is cut within 1.25 timeouts. Confined to its event loop.
 */
final class LoopTimeouts {

    /** What is watched: linked into the loop's list while it may time out. */
    abstract static class Watched {
        private Watched prev;
        private Watched next;
        private boolean linked;

        /** Called on every tick while linked. */
        abstract void tick(long now);
    }

    private final EventLoop loop;
    private final long tickNanos;
    private Watched head;
    private int size;
    private ScheduledFuture<?> ticker;

    LoopTimeouts(EventLoop loop, long timeoutNanos) {
        this.loop = loop;
        this.tickNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(5), Math.min(TimeUnit.SECONDS.toNanos(1),
                timeoutNanos / 4));
    }

    void add(Watched w) {
        if (w.linked) {
            return;
        }
        w.linked = true;
        w.prev = null;
        w.next = head;
        if (head != null) {
            head.prev = w;
        }
        head = w;
        if (size++ == 0 && ticker == null) {
            ticker = loop.scheduleAtFixedRate(this::tick, tickNanos, tickNanos, TimeUnit.NANOSECONDS);
        }
    }

    void remove(Watched w) {
        if (!w.linked) {
            return;
        }
        w.linked = false;
        if (w.prev != null) {
            w.prev.next = w.next;
        } else {
            head = w.next;
        }
        if (w.next != null) {
            w.next.prev = w.prev;
        }
        w.prev = null;
        w.next = null;
        size--;
    }

    private void tick() {
        if (size == 0) {
            ticker.cancel(false);
            ticker = null;
            return;
        }
        long now = System.nanoTime();
        for (Watched w = head; w != null;) {
            Watched next = w.next; // a tick may unlink w
            w.tick(now);
            w = next;
        }
    }
}
