package dev.llmsidecar.sweep;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The client's own view of one step's measured requests (those sent after the warm-up): counts and errors, and exact
 * percentiles (numpy's default linear interpolation between order statistics, as vllm bench serve's
 * {@code np.percentile}) under two sets of definitions: {@code vllm bench serve}'s and the sidecar's. Only used to
 * count client-side errors and to compare definitions; the sweep's results are the sidecar's.
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
            double[] v = Arrays.stream(values).filter(x -> !Double.isNaN(x)).sorted().toArray();
            if (v.length == 0) {
                return NONE;
            }
            return new Dist(v.length, Arrays.stream(v).average().orElse(Double.NaN), percentile(v, 50),
                    percentile(v, 95), percentile(v, 99));
        }

        /** Weighted samples (value, weight): the weighted mean and, for percentiles, nearest rank on the weights. */
        static Dist weighted(double[] values, double[] weights) {
            int n = values.length;
            if (n == 0) {
                return NONE;
            }
            Integer[] order = new Integer[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            Arrays.sort(order, (a, b) -> Double.compare(values[a], values[b]));
            double total = 0;
            double sum = 0;
            for (int i = 0; i < n; i++) {
                total += weights[i];
                sum += values[i] * weights[i];
            }
            double[] qs = {0.5, 0.95, 0.99};
            double[] out = new double[3];
            for (int k = 0; k < 3; k++) {
                double rank = qs[k] * total;
                double acc = 0;
                out[k] = values[order[n - 1]];
                for (int i = 0; i < n; i++) {
                    acc += weights[order[i]];
                    if (acc >= rank) {
                        out[k] = values[order[i]];
                        break;
                    }
                }
            }
            return new Dist((int) Math.round(total), sum / total, out[0], out[1], out[2]);
        }
    }

    /** numpy.percentile(v, p) with the default linear method; {@code sorted} ascending, non-empty. */
    static double percentile(double[] sorted, double p) {
        double rank = p / 100 * (sorted.length - 1);
        int lo = (int) Math.floor(rank);
        int hi = Math.min(sorted.length - 1, lo + 1);
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
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
