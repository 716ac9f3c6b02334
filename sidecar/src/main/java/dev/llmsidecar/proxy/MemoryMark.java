package dev.llmsidecar.proxy;

import io.netty.util.internal.PlatformDependent;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;

/**
 * Whether the sidecar is near the end of its memory, so that it sheds new work before it would die of it (the JVM
 * exits on OutOfMemoryError, and with it every stream of the pod). Two pools, each with its mark:
 * <ul>
 *   <li>the live heap: the tenured pool as it stood after its last collection (what is live, not garbage not yet
 *   collected), or its current use when that is lower (a sidecar that sheds allocates little, and may not be
 *   collected again soon), plus the survivor space after the last young collection (live objects not yet promoted:
 *   an open stream's state lives there until it has survived a few collections). Against the room live data has: the
 *   tenured pool and one survivor space (24 + 14 MB with the shipped flags; eden holds only what dies young);</li>
 *   <li>direct memory in use (Netty's buffers: reads in flight, what waits for a slow peer).</li>
 * </ul>
 * Read every {@link #check} (the proxy's sweep, a few times a second): two MXBean reads, nothing allocated.
 */
public final class MemoryMark {

    /** One reading: bytes used and the mark, per pool. */
    public record Reading(long heapUsed, long heapMark, long directUsed, long directMark) {
        public boolean over() {
            return heapUsed > heapMark || directUsed > directMark;
        }
    }

    private final MemoryPoolMXBean tenured;
    private final MemoryPoolMXBean survivor;
    private final BufferPoolMXBean direct;
    private final long heapMark;
    private final long directMark;
    private volatile Reading last;

    /**
     * @param heapFraction the mark as a fraction of the room live data has: the tenured pool's maximum and a survivor
     *     space's (the heap's maximum, where there is no tenured pool)
     * @param directFraction the mark as a fraction of the maximum direct memory
     */
    public MemoryMark(double heapFraction, double directFraction) {
        this.tenured = tenuredPool();
        this.survivor = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP && p.getName().contains("Survivor")
                        && p.isCollectionUsageThresholdSupported()).findFirst().orElse(null);
        long tenuredMax = tenured != null ? tenured.getUsage().getMax() : -1;
        long survivorMax = survivor != null ? Math.max(0, survivor.getUsage().getMax()) : 0;
        long heapMax = tenuredMax > 0 ? tenuredMax + survivorMax : Runtime.getRuntime().maxMemory();
        this.heapMark = (long) (heapMax * heapFraction);
        this.direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(p -> p.getName().equals("direct")).findFirst().orElse(null);
        this.directMark = (long) (PlatformDependent.maxDirectMemory() * directFraction);
        this.last = new Reading(0, heapMark, 0, directMark);
    }

    /** The heap pool that holds long-lived objects (Serial's Tenured Gen, G1's Old Gen, ...), or null. */
    public static MemoryPoolMXBean tenuredPool() {
        MemoryPoolMXBean best = null;
        for (MemoryPoolMXBean p : ManagementFactory.getMemoryPoolMXBeans()) {
            if (p.getType() != MemoryType.HEAP || !p.isCollectionUsageThresholdSupported()) {
                continue;
            }
            String name = p.getName();
            if (name.contains("Old") || name.contains("Tenured")) {
                return p;
            }
            if (best == null || p.getUsage().getMax() > best.getUsage().getMax()) {
                best = p;
            }
        }
        return best;
    }

    /** Reads both pools now; the proxy sheds while the last reading is over a mark. */
    public Reading check() {
        long heap = 0;
        if (tenured != null) {
            MemoryUsage afterGc = tenured.getCollectionUsage();
            long now = tenured.getUsage().getUsed();
            heap = afterGc == null ? now : Math.min(afterGc.getUsed(), now);
        }
        if (survivor != null) {
            MemoryUsage young = survivor.getCollectionUsage();
            heap += young == null ? 0 : young.getUsed();
        }
        long netty = PlatformDependent.usedDirectMemory(); // -1 where Netty does not count its own
        long nio = direct == null ? 0 : direct.getMemoryUsed();
        Reading r = new Reading(heap, heapMark, Math.max(netty, nio), directMark);
        last = r;
        return r;
    }

    /** The last reading. */
    public Reading last() {
        return last;
    }

    /** Past a mark at the last reading: new requests are refused with 503. */
    public boolean over() {
        return last.over();
    }
}
