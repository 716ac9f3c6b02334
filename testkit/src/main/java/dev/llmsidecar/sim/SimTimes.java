package dev.llmsidecar.sim;

/**
 * When things happened to one simulated request (System.nanoTime()), for engines that report their own timings.
 *
 * @param arrival request fully received
 * @param slotStart generation slot obtained (queue time = slotStart - arrival)
 * @param firstSent first token written (-1: none yet)
 * @param lastSent last token written (-1: none yet)
 */
public record SimTimes(long arrival, long slotStart, long firstSent, long lastSent) {

    double queueMs() {
        return (slotStart - arrival) / 1e6;
    }

    /** Slot start to first token, the prefill. */
    double prefillMs() {
        return firstSent < 0 ? 0 : (firstSent - slotStart) / 1e6;
    }

    /** First to last token, the decode. */
    double decodeMs() {
        return firstSent < 0 ? 0 : (lastSent - firstSent) / 1e6;
    }
}
