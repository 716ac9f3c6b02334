package dev.llmsidecar.sweep;

import dev.llmsidecar.load.Latencies;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The client's own view of one step's measured requests (those sent after the warm-up): counts and errors, and
 * percentiles of every sample by the tools' one rule ({@link Latencies}: HdrHistogram, 3 significant digits, nearest
 * rank) under two sets of definitions: {@code vllm bench serve}'s and the sidecar's. Only used to count client-side
 * errors and to compare definitions; the sweep's results are the sidecar's.
 *
 * @param sent measured requests sent
 * @param ok measured requests that completed with {@code [DONE]}
 * @param errors measured requests that did not, by kind
 * @param dropped arrivals not sent because {@code --max-in-flight} requests were open (open loop)
 * @param outputTokens output tokens of the ok requests (usage, else token-bearing chunks)
 */
public record ClientSummary(int sent, int ok, Map<String, Integer> errors, int dropped, long outputTokens,
        Dist benchTtft, Dist benchTpot, Dist benchItl, Dist benchE2el, Dist ttft, Dist tpot, Dist itl, Dist chunkGap,
        Dist e2e) {

    /** Count, mean and percentiles of one metric, seconds. */
    public record Dist(int count, double mean, double p50, double p95, double p99) {
        static final Dist NONE = new Dist(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN);

        static Dist of(double[] values) {
            Latencies l = new Latencies();
            for (double v : values) {
                if (!Double.isNaN(v)) {
                    l.record(Math.round(v * 1e9));
                }
            }
            return of(l, 1);
        }

        /** Weighted samples (value, weight), e.g. token-weighted gaps; weights kept to a thousandth. */
        static Dist weighted(double[] values, double[] weights) {
            Latencies l = new Latencies();
            for (int i = 0; i < values.length; i++) {
                l.record(Math.round(values[i] * 1e9), Math.round(weights[i] * 1000));
            }
            return of(l, 1000);
        }

        private static Dist of(Latencies l, long countScale) {
            if (l.count() == 0) {
                return NONE;
            }
            return new Dist((int) Math.round((double) l.count() / countScale), l.mean() / 1e9,
                    l.percentile(50) / 1e9, l.percentile(95) / 1e9, l.percentile(99) / 1e9);
        }
    }

    /** Summarises the measured records of a step. */
    static ClientSummary of(List<RequestRecord> all, int dropped) {
        List<RequestRecord> measured = all.stream().filter(RequestRecord::measured).toList();
        List<RequestRecord> ok = measured.stream().filter(RequestRecord::ok).toList();
        Map<String, Integer> errors = new TreeMap<>();
        for (RequestRecord r : measured) {
            if (!r.ok()) {
                errors.merge(r.error(), 1, Integer::sum);
            }
        }
        long tokens = ok.stream().mapToLong(RequestRecord::outputTokens).sum();
        double[] benchItl = ok.stream().flatMapToDouble(r -> Arrays.stream(r.benchItl())).toArray();
        double[] gaps = ok.stream().flatMapToDouble(r -> Arrays.stream(r.tokenChunkGaps())).toArray();
        // the sidecar's token-weighted ITL: with N tokens over C chunks, each gap g counts N/C times as g/(N/C)
        int n = ok.stream().mapToInt(r -> r.tokenChunkGaps().length).sum();
        double[] itl = new double[n];
        double[] weights = new double[n];
        int i = 0;
        for (RequestRecord r : ok) {
            double k = r.completionTokens() > r.tokenChunks() && r.tokenChunks() > 0
                    ? (double) r.completionTokens() / r.tokenChunks() : 1;
            for (double g : r.tokenChunkGaps()) {
                itl[i] = g / k;
                weights[i++] = k;
            }
        }
        return new ClientSummary(measured.size(), ok.size(), errors, dropped, tokens,
                Dist.of(ok.stream().mapToDouble(RequestRecord::benchTtft).toArray()),
                Dist.of(ok.stream().filter(r -> r.outputTokens() > 1).mapToDouble(RequestRecord::benchTpot).toArray()),
                Dist.of(benchItl),
                Dist.of(ok.stream().mapToDouble(RequestRecord::benchE2el).toArray()),
                Dist.of(ok.stream().mapToDouble(RequestRecord::ttft).toArray()),
                Dist.of(ok.stream().mapToDouble(RequestRecord::tpot).toArray()),
                Dist.weighted(itl, weights),
                Dist.of(gaps),
                Dist.of(ok.stream().mapToDouble(RequestRecord::e2e).toArray()));
    }

    public int errorCount() {
        return errors.values().stream().mapToInt(Integer::intValue).sum();
    }
}
