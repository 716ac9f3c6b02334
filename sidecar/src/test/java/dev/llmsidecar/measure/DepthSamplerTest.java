package dev.llmsidecar.measure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The waiting depth without a timer records what a 250 ms timer would have, instant for instant. */
class DepthSamplerTest {

    static final long STEP = TimeUnit.MILLISECONDS.toNanos(250);

    @Test
    void recordsTheDepthAtEveryInstantOfTheGrid() {
        long[] now = {1_000_000_000L};
        List<Double> recorded = new ArrayList<>();
        DepthSampler sampler = new DepthSampler(recorded::add, () -> now[0]);
        long start = now[0];
        // a random walk of starts and first tokens over 60 s, with idle stretches; the reference is the timer
        Random random = new Random(3);
        List<long[]> changes = new ArrayList<>(); // {time, depth after}
        int depth = 0;
        long t = start;
        for (int i = 0; i < 400; i++) {
            t += random.nextInt(10) == 0 ? TimeUnit.SECONDS.toNanos(3) : random.nextInt((int) (STEP / 2));
            int delta = depth == 0 || random.nextBoolean() ? 1 : -1;
            depth += delta;
            now[0] = t;
            sampler.change(delta);
            changes.add(new long[] {t, depth});
        }
        now[0] = t + TimeUnit.SECONDS.toNanos(10); // idle, then a scrape
        sampler.catchUp();
        List<Double> timer = new ArrayList<>();
        int c = 0;
        int d = 0;
        for (long instant = start + STEP; instant <= now[0]; instant += STEP) {
            while (c < changes.size() && changes.get(c)[0] < instant) {
                d = (int) changes.get(c)[1];
                c++;
            }
            timer.add((double) d);
        }
        assertThat(recorded).isEqualTo(timer);
        assertThat(sampler.depth()).isEqualTo(depth);
    }

    @Test
    void idleTimeIsRecordedOnlyWhenRead() {
        long[] now = {0};
        List<Double> recorded = new ArrayList<>();
        DepthSampler sampler = new DepthSampler(recorded::add, () -> now[0]);
        now[0] = TimeUnit.MINUTES.toNanos(1);
        assertThat(recorded).isEmpty(); // nothing ran in that minute
        sampler.catchUp();
        assertThat(recorded).hasSize(240).containsOnly(0.0);
    }
}
