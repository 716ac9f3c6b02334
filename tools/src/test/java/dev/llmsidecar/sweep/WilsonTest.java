package dev.llmsidecar.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/**
 * The Wilson score interval against published values (Newcombe, "Two-sided confidence intervals for the single
 * proportion", Statistics in Medicine 17, 1998, table I, method 3, 95 %), and the search's verdicts from it.
 */
class WilsonTest {

    @Test
    void matchesNewcombesTable() {
        double[][] cases = {
            // good, n, lower, upper
            {81, 263, 0.2553, 0.3662}, {15, 148, 0.0624, 0.1605}, {0, 20, 0, 0.1611}, {1, 29, 0.0061, 0.1718},
            {29, 29, 0.8830, 1}};
        for (double[] c : cases) {
            double[] w = Wilson.interval95(c[0], c[1]);
            assertThat(w[0]).as("%s/%s lower", c[0], c[1]).isCloseTo(c[2], within(0.00006));
            assertThat(w[1]).as("%s/%s upper", c[0], c[1]).isCloseTo(c[3], within(0.00006));
        }
        assertThat(Wilson.interval95(0, 0)[0]).isNaN();
        assertThat(Wilson.Z95).isCloseTo(1.96, within(0.0001));
    }

    @Test
    void nearATargetOf99PercentItTakesHundredsOfRequests() {
        // no miss at all: the lower bound is n / (n + z²), at 0.99 only from 381 requests on
        assertThat(Wilson.interval95(380, 380)[0]).isLessThan(0.99);
        assertThat(Wilson.interval95(381, 381)[0]).isGreaterThanOrEqualTo(0.99);
        assertThat(Search.verdict(381, 381, 0.99)).isEqualTo(Search.Verdict.ABOVE);
        assertThat(Search.verdict(380, 380, 0.99)).isEqualTo(Search.Verdict.INCONCLUSIVE);
        assertThat(Search.verdict(990, 1000, 0.99)).isEqualTo(Search.Verdict.INCONCLUSIVE); // [0.9817, 0.9946]
        assertThat(Search.verdict(960, 1000, 0.99)).isEqualTo(Search.Verdict.BELOW);
        assertThat(Search.verdict(0, 0, 0.99)).isEqualTo(Search.Verdict.INCONCLUSIVE);
    }
}
