package dev.llmsidecar.sweep;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * What one step of a trace replay sends and when: the records of a recorded trace that fit the step's time at its
 * speed-up, rebased to start at 0, and each one's send time. A trace longer than the step (wall seconds × speed-up
 * of trace time) is cut down to it, {@link SweepOptions.TraceSample#WINDOW} (a contiguous window: arrivals exactly as
 * recorded, bursts and sessions intact, but only that stretch of the day) or
 * {@link SweepOptions.TraceSample#UNIFORM} (each record kept with probability f = step's trace time ÷ the trace's
 * span, timestamps multiplied by f: the whole day's mix and mean rate, its time of day compressed, short bursts
 * thinned and sessions broken up). The step stops sending when its records run out.
 *
 * <p>A conversation's later turn (a record of the same {@link TraceRecord#sessionId} as an earlier one sent in the
 * step, whose {@code e2e_ms} is known) is sent as its client sent it: after the previous turn's answer ended, plus the
 * gap the recording had between that turn's end and its arrival (÷ speed-up), whatever the replayed answer took. Only
 * first turns and requests of no conversation keep their clock times. A later turn whose previous turn has no
 * {@code e2e_ms} is sent at its time, or when the previous turn ended if that is later.
 *
 * @param records the records sent, in send order, their timestamps rebased (and compressed) to the step's trace time
 * @param offsetsNanos when each is sent, from the step's start: timestamp ÷ speed-up (a turn sent after its previous
 *     one: when it was, in the recording)
 * @param timed the indices of the records sent at their offsets, in order
 * @param next for each record, the index of its conversation's next turn sent after it ends, or -1
 * @param gapNanos for each record sent after its previous turn, the time after that turn's end (else -1)
 * @param description what was taken, for the report
 */
record TraceReplay(List<TraceRecord> records, long[] offsetsNanos, int[] timed, int[] next, long[] gapNanos,
        String description) {

    /**
     * The replay of {@code sorted} (by timestamp) at {@code speedup} for a step of {@code wallSeconds} (warm-up
     * included, extensions included).
     *
     * @param offset null or "start": the trace's start; "busiest": the window with the most records; else seconds
     */
    static TraceReplay plan(List<TraceRecord> sorted, double speedup, double wallSeconds,
            SweepOptions.TraceSample sample, String offset, long seed) {
        if (sorted.isEmpty()) {
            throw new IllegalArgumentException("the trace has no records to replay");
        }
        long first = sorted.get(0).timestampMs();
        long span = TraceFile.spanMs(sorted);
        double coveredMs = wallSeconds * speedup * 1000;
        List<TraceRecord> out = new ArrayList<>();
        String what;
        if (coveredMs > span && offset == null) {
            for (TraceRecord r : sorted) {
                out.add(r.at(r.timestampMs() - first));
            }
            what = String.format(Locale.ROOT, "the whole trace (%d records over %s s)", sorted.size(), s(span));
        } else if (sample == SweepOptions.TraceSample.UNIFORM && offset == null) {
            double f = coveredMs / Math.max(1, span);
            Random random = new Random(seed);
            for (TraceRecord r : sorted) {
                if (random.nextDouble() < f) {
                    out.add(r.at(Math.round((r.timestampMs() - first) * f)));
                }
            }
            what = String.format(Locale.ROOT, "a uniform sample: each record kept with probability %.4f (%d of %d), "
                    + "the trace's %s s compressed to %s s (timestamps × %.4f)", f, out.size(), sorted.size(), s(span),
                    s(span * f), f);
        } else {
            long start = first + windowStart(sorted, offset, (long) coveredMs);
            long end = start + (long) Math.ceil(coveredMs);
            for (TraceRecord r : sorted) {
                if (r.timestampMs() >= start && r.timestampMs() < end) {
                    out.add(r.at(r.timestampMs() - start));
                }
            }
            what = String.format(Locale.ROOT, "a contiguous window [%s s, %s s) of the trace's %s s%s (%d of %d "
                    + "records)", s(start - first), s(Math.min(end, first + span + 1) - first), s(span),
                    "busiest".equals(offset) ? ", the busiest" : "", out.size(), sorted.size());
        }
        long[] offsets = new long[out.size()];
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = Math.round(out.get(i).timestampMs() * 1e6 / speedup);
        }
        int[] next = new int[out.size()];
        long[] gaps = new long[out.size()];
        java.util.Arrays.fill(next, -1);
        java.util.Arrays.fill(gaps, -1);
        java.util.Map<String, Integer> last = new java.util.HashMap<>();
        List<Integer> timed = new ArrayList<>();
        int turns = 0;
        for (int i = 0; i < out.size(); i++) {
            TraceRecord r = out.get(i);
            Integer before = r.sessionId() == null ? null : last.put(r.sessionId(), i);
            if (before != null && !Double.isNaN(out.get(before).e2eMs())) {
                TraceRecord b = out.get(before);
                next[before] = i;
                gaps[i] = Math.round(Math.max(0, r.timestampMs() - b.timestampMs() - b.e2eMs()) * 1e6 / speedup);
                turns++;
            } else {
                timed.add(i);
            }
        }
        if (turns > 0) {
            what += String.format(Locale.ROOT, "; %d later turns of %d conversations sent after the previous turn's "
                    + "answer and the recorded gap", turns, last.size());
        }
        return new TraceReplay(List.copyOf(out), offsets, timed.stream().mapToInt(Integer::intValue).toArray(), next,
                gaps, what + String.format(Locale.ROOT, ", at speed-up %s",
                        SloSpec.fmt(Math.round(speedup * 1000) / 1000.0)));
    }

    /** Where the window starts, ms after the first record. */
    static long windowStart(List<TraceRecord> sorted, String offset, long lengthMs) {
        long first = sorted.get(0).timestampMs();
        if (offset == null) {
            return 0;
        }
        if (!offset.equals("busiest")) {
            long at = Math.round(Double.parseDouble(offset) * 1000);
            if (at > TraceFile.spanMs(sorted)) {
                throw new IllegalArgumentException("--trace-offset " + offset + " s: the trace spans only "
                        + s(TraceFile.spanMs(sorted)) + " s");
            }
            return at;
        }
        // two pointers over the window starts at each record: the most records in [t, t + length)
        int best = 0;
        long bestStart = 0;
        int j = 0;
        for (int i = 0; i < sorted.size(); i++) {
            long t = sorted.get(i).timestampMs();
            while (j < sorted.size() && sorted.get(j).timestampMs() < t + lengthMs) {
                j++;
            }
            if (j - i > best) {
                best = j - i;
                bestStart = t - first;
            }
        }
        return bestStart;
    }

    private static String s(double ms) {
        return Report.f3(ms / 1000);
    }
}
